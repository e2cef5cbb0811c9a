"""What a fix round shows the conductor and workers: the files involved."""

from __future__ import annotations

import re
from pathlib import Path, PurePosixPath

from ..edits.paths import check_path
from ..edits.workspace import read_text
from ..errors import EditError
from ..task import MAX_FILE_CHARS, FileContext
from ..testrun import TestRun

MAX_CONTEXT_FILES = 8
_IMPORT = re.compile(r"^\s*(?:from\s+([\w.]+)\s+import|import\s+([\w.]+))", re.M)


def is_test_path(rel: str) -> bool:
    """Whether a path holds tests by the usual conventions (pytest's, and test folders)."""
    p = PurePosixPath(rel.lower())
    return (
        p.name.startswith("test_")
        or p.name.endswith(("_test.py", "_tests.py"))
        or p.name == "conftest.py"
        or any(part in ("tests", "test") for part in p.parts[:-1])
    )


def local_imports(root: Path, text: str) -> list[str]:
    """Workspace modules a file imports: the code under test is usually among them."""
    out = []
    for a, b in _IMPORT.findall(text):
        parts = (a or b).split(".")
        for base in (root, root / "src"):
            for cand in (
                base.joinpath(*parts).with_suffix(".py"),
                base.joinpath(*parts, "__init__.py"),
            ):
                if cand.is_file():
                    out.append(cand.relative_to(root).as_posix())
    return out


def context_files(root: Path, run: TestRun, deny: list[str], extra: list[str]) -> list[FileContext]:
    """Files named by the failures (tests, traceback frames, what tests import), safe and
    small enough to show; the tests among them are shown read only."""
    failing = {f.file for f in run.failures if f.file}
    names: list[str] = [*extra, *(f.file for f in run.failures)]
    names += re.findall(r"^([\w./-]+\.py):\d+", run.output, re.M)
    out: list[FileContext] = []
    queue = list(dict.fromkeys(n for n in names if n))
    seen: set[str] = set()
    while queue and len(out) < MAX_CONTEXT_FILES:
        rel = queue.pop(0)
        if rel in seen:
            continue
        seen.add(rel)
        try:
            disk = read_text(check_path(root, rel, deny))
        except EditError:
            continue  # refused paths are never shown to models either
        if disk is not None and len(disk.text) <= MAX_FILE_CHARS:
            editable = rel not in failing and not is_test_path(rel)
            out.append(FileContext(rel, disk.text, editable=editable))
            queue += [m for m in local_imports(root, disk.text) if m not in seen]
    return out
