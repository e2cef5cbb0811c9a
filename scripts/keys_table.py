"""Rewrite the README's "Every key" table from the configuration's own field docs.

.venv/bin/python scripts/keys_table.py
"""

from __future__ import annotations

from pathlib import Path

from conductor_lsp.configure.load import describe_keys

README = Path(__file__).resolve().parents[1] / "README.md"
HEADER = "| key | default | meaning |"


def table() -> str:
    rows = [f"| `{key}` | `{default}` | {doc} |" for key, default, doc in describe_keys()]
    return "\n".join([HEADER, "|---|---|---|", *rows])


def main() -> None:
    text = README.read_text(encoding="utf-8")
    start = text.index(HEADER)
    end = text.index("\n\n", start)
    README.write_text(text[:start] + table() + text[end:], encoding="utf-8")


if __name__ == "__main__":
    main()
