"""The docs against the code: generated blocks up to date, links that lead somewhere, a
short README, floors as the architecture test has them, and code that cites docs or
bench files rather than README sections."""

from __future__ import annotations

import importlib.util
import re
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(Path(__file__).parent))

from test_architecture import FLOORS  # noqa: E402

_LINK = re.compile(r"\[[^\]]*\]\(([^)\s]+)\)")
_HEADING = re.compile(r"^#+ (.+)$", re.M)


def _docs_script() -> object:
    spec = importlib.util.spec_from_file_location("docs_script", REPO / "scripts" / "docs.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def pages() -> list[Path]:
    return [REPO / "README.md", REPO / "bench" / "README.md", *sorted((REPO / "docs").glob("*.md"))]


def anchor(heading: str) -> str:
    """A heading's anchor as GitHub makes it."""
    text = re.sub(r"[^\w\- ]", "", heading.strip().lower())
    return text.replace(" ", "-")


def test_generated_blocks_are_up_to_date() -> None:
    assert _docs_script().stale() == []  # type: ignore[attr-defined]


def test_every_key_is_documented() -> None:
    from conductor_lsp.configure.load import describe_keys

    text = (REPO / "docs" / "configuration.md").read_text()
    assert all(f"`{key}`" in text for key, _, _ in describe_keys())
    assert all(doc for _, _, doc in describe_keys())


@pytest.mark.parametrize("page", pages(), ids=lambda p: str(p.relative_to(REPO)))
def test_links_lead_somewhere(page: Path) -> None:
    """Relative links name a file that exists, and an anchor names a heading in it."""
    broken = []
    for target in _LINK.findall(page.read_text(encoding="utf-8")):
        if re.match(r"^[a-z]+:", target):
            continue  # https:, mailto:
        path, _, frag = target.partition("#")
        dest = (page.parent / path).resolve() if path else page
        if not dest.exists():
            broken.append(target)
        elif frag and dest.suffix == ".md":
            headings = {anchor(h) for h in _HEADING.findall(dest.read_text(encoding="utf-8"))}
            if frag not in headings:
                broken.append(target)
    assert broken == []


def test_the_readme_is_short() -> None:
    assert (REPO / "README.md").read_text().count("\n") <= 300


def test_the_architecture_page_lists_the_floors_the_test_checks() -> None:
    text = (REPO / "docs" / "architecture.md").read_text()
    block = text.split("<!-- floors:start -->")[1].split("<!-- floors:end -->")[0]
    lines = [ln.strip() for ln in block.strip().strip("`").strip().splitlines()]
    assert [tuple(ln.split(" · ")) for ln in lines] == list(reversed(FLOORS))


def test_code_cites_docs_and_bench_files_never_readme_sections() -> None:
    cites = []
    for path in sorted((REPO / "conductor_lsp").rglob("*.py")):
        for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            if re.search(r"(?<!bench/)README", line):
                cites.append(f"{path.relative_to(REPO)}:{n}")
    assert cites == []


def test_the_hang_guards_agree() -> None:
    """pytest-timeout bounds a whole test at three of the helpers' waits, so a test that
    waits on a few things fails on its own message, never on a bound a busy machine misses."""
    import tomllib

    from helpers import WAIT

    options = tomllib.loads((REPO / "pyproject.toml").read_text())["tool"]["pytest"]
    assert options["ini_options"]["timeout"] == 3 * WAIT
