"""Write the generated parts of the docs from the code, so they cannot go stale:

- ``docs/configuration.md``, between ``<!-- keys:start -->`` and ``<!-- keys:end -->``:
  every key with its default and meaning (``configure.load.describe_keys``);
- ``docs/architecture.md``, between ``<!-- folders:start -->`` and ``<!-- folders:end -->``:
  each folder of the package with the first sentence of its docstring, and its modules.

.venv/bin/python scripts/docs.py            # rewrite them
.venv/bin/python scripts/docs.py --check    # exit 1 when they are stale (tests/test_docs.py)
"""

from __future__ import annotations

import ast
import sys
from collections.abc import Callable
from pathlib import Path

import conductor_lsp
from conductor_lsp.configure.load import describe_keys

REPO = Path(__file__).resolve().parents[1]
PACKAGE = Path(conductor_lsp.__file__).parent


def keys_table() -> str:
    rows = [f"| `{key}` | `{default}` | {doc} |" for key, default, doc in describe_keys()]
    return "\n".join(["| key | default | meaning |", "|---|---|---|", *rows])


def _first_sentence(doc: str) -> str:
    text = " ".join(doc.split())
    end = text.find(". ")
    return text if end < 0 else text[: end + 1]


def _doc_of(path: Path) -> str:
    return ast.get_docstring(ast.parse(path.read_text(encoding="utf-8"))) or ""


def folders_table() -> str:
    rows = ["| folder | what it is | modules |", "|---|---|---|"]
    flat = sorted(p.stem for p in PACKAGE.glob("*.py") if p.stem != "__init__")
    rows.append(
        f"| `conductor_lsp/` | {_first_sentence(_doc_of(PACKAGE / '__init__.py'))} | "
        f"{', '.join(flat)} |"
    )
    for folder in sorted(p for p in PACKAGE.iterdir() if (p / "__init__.py").is_file()):
        modules = sorted(p.stem for p in folder.glob("*.py") if not p.stem.startswith("__"))
        doc = _first_sentence(_doc_of(folder / "__init__.py")).replace("|", "\\|")
        rows.append(f"| `{folder.name}/` | {doc} | {', '.join(modules)} |")
    return "\n".join(rows)


#: (file, marker) -> what goes between its start and end markers.
BLOCKS: dict[tuple[str, str], Callable[[], str]] = {
    ("docs/configuration.md", "keys"): keys_table,
    ("docs/architecture.md", "folders"): folders_table,
}


def between(text: str, marker: str) -> tuple[int, int]:
    """Where the generated block of ``marker`` starts and ends in ``text``."""
    start = text.index(f"<!-- {marker}:start -->\n") + len(f"<!-- {marker}:start -->\n")
    return start, text.index(f"<!-- {marker}:end -->", start)


def stale() -> list[str]:
    """The blocks whose text differs from what the code says now."""
    out = []
    for (rel, marker), make in BLOCKS.items():
        text = (REPO / rel).read_text(encoding="utf-8")
        a, b = between(text, marker)
        if text[a:b] != make() + "\n":
            out.append(f"{rel} ({marker})")
    return out


def write() -> None:
    for (rel, marker), make in BLOCKS.items():
        path = REPO / rel
        text = path.read_text(encoding="utf-8")
        a, b = between(text, marker)
        path.write_text(text[:a] + make() + "\n" + text[b:], encoding="utf-8")


def main(argv: list[str]) -> int:
    if "--check" in argv:
        found = stale()
        for what in found:
            print(f"stale: {what} (run scripts/docs.py)")
        return 1 if found else 0
    write()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
