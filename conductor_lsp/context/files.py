"""The files a task involves: those its failing tests name and import, and those its
answers named; and which of them hold tests."""

from __future__ import annotations

import re
import shlex
from collections.abc import Iterable
from pathlib import Path, PurePosixPath

from ..edits.paths import check_path
from ..edits.workspace import read_text
from ..errors import EditError
from ..task import FileContext
from ..testrun import TestRun

MAX_CONTEXT_FILES = 8
#: Files past this are not shown at all (generated data, not code to read); those past
#: ``task.MAX_FILE_CHARS`` are shown in part (``context.window.cap_files``).
MAX_READ_CHARS = 1_000_000
#: Test files shown before the code they import: failures spread over many test files
#: (a suite that runs one mixin's tests for every class) must not crowd the code out.
MAX_TEST_FILES = 3
_NAMED = re.compile(r"(?<![\w./-])([\w][\w./-]*\.py)\b")
#: ``from .m import a, b``, ``from .m import (\n    a,  # why\n    b)``, ``import m``.
_IMPORT = re.compile(
    r"^[ \t]*(?:from[ \t]+(\.*)([\w.]*)[ \t]+import[ \t]+(?:\(([^)]*)\)|([\w, \t]*))"
    r"|import[ \t]+([\w.]+))",
    re.M,
)


def is_test_path(rel: str) -> bool:
    """Whether a path holds tests by the usual conventions (pytest's, and test folders)."""
    p = PurePosixPath(rel.lower())
    return (
        p.name.startswith("test_")
        or p.name.endswith(("_test.py", "_tests.py"))
        or p.name == "conftest.py"
        or any(part in ("tests", "test") for part in p.parts[:-1])
    )


def local_imports(root: Path, text: str, rel: str = "") -> list[str]:
    """Workspace modules a file imports: the code under test is usually among them.
    Relative imports (``from .core import x``, ``from . import core``) are read from
    ``rel``, the importing file's path: a package's ``__init__.py`` usually re-exports
    what its modules define, and the module is the file to change. ``from pkg import
    name`` names ``pkg`` and, when ``name`` is one, the module ``pkg/name.py``; ``from .
    import name``, where ``name`` is no module, the package's ``__init__.py``."""
    out = []
    for dots, module, wrapped, names, plain in _IMPORT.findall(text):
        names = re.sub(r"#[^\n]*", "", wrapped) or names
        if dots:
            parts = PurePosixPath(rel).parent.parts
            up = len(dots) - 1
            if not rel or up > len(parts) or ".." in parts:
                continue  # no importing file, or above the workspace
            bases = [root.joinpath(*parts[: len(parts) - up])]
        else:
            bases = [root, root / "src"]
        dotted = (module or plain).split(".") if module or plain else []
        # ``from . import core``, ``from pkg import lexer``: the names may be modules of
        # the package (a test importing the module it tests that way names no file else)
        named = [n.split()[0] for n in names.split(",") if n.strip()]
        targets = [dotted] * bool(dotted) + [[*dotted, n] for n in named]
        if dots and not dotted and not all(_modules(bases[0], [n]) for n in named):
            targets.append([])  # ``from . import tomllib``: a name the package's own
            # ``__init__.py`` defines (``import tomli as tomllib``), the library under test
        for base in bases:
            for target in targets:
                out += [cand.relative_to(root).as_posix() for cand in _modules(base, target)]
    return out


def _modules(base: Path, target: list[str]) -> list[Path]:
    """The module ``target`` names under ``base``: ``a/b.py``, ``a/b/__init__.py``."""
    cands = (base.joinpath(*target).with_suffix(".py"), base.joinpath(*target, "__init__.py"))
    return [cand for cand in cands if cand.is_file()]


def command_files(command: str) -> list[str]:
    """Python files a test command names (``pytest tests/test_x.py::test_y``): when the
    tests hang or crash before reporting, the only pointer to the code under test."""
    try:
        words = shlex.split(command)
    except ValueError:
        return []
    return [path for w in words if (path := w.split("::")[0]).endswith(".py")]


def context_files(root: Path, run: TestRun, deny: list[str], extra: list[str]) -> list[FileContext]:
    """Files named by the failures (tests, traceback frames, what tests import), safe and
    small enough to show; the tests among them, and what the test command names, are
    shown read only."""
    ran = command_files(run.command)  # a run that timed out names nothing else
    read_only = {f.file for f in run.failures if f.file} | set(ran)
    names: list[str] = [f.file for f in run.failures]
    names += re.findall(r"^([\w./-]+\.py):\d+", run.output, re.M)
    names += ran
    names += extra  # after what the failures name, before what those import
    out: list[FileContext] = []
    queue = list(dict.fromkeys(n for n in names if n))
    seen: set[str] = set()
    later: list[FileContext] = []  # test files past the first few: after the code
    while queue and len(out) < MAX_CONTEXT_FILES:
        rel = queue.pop(0)
        if rel in seen:
            continue
        seen.add(rel)
        try:
            disk = read_text(check_path(root, rel, deny))
        except EditError:
            continue  # refused paths are never shown to models either
        if disk is not None and len(disk.text) <= MAX_READ_CHARS:
            editable = rel not in read_only and not is_test_path(rel)
            shown = FileContext(rel, disk.text, editable=editable)
            tests = sum(1 for f in out if not f.editable)
            (later if not editable and tests >= MAX_TEST_FILES else out).append(shown)
            queue += [m for m in local_imports(root, disk.text, rel) if m not in seen]
    return out + later[: MAX_CONTEXT_FILES - len(out)]


def named_files(
    root: Path,
    texts: list[str],
    shown: set[str],
    deny: list[str],
    known: Iterable[str] = (),
    most: int = 3,
) -> list[str]:
    """Workspace Python files the answers name that the round did not show (an analysis
    that read the repository map and named the module at fault): the next round shows
    them, so a worker can edit what it could only name before. The first ``most`` (``[fix]
    named_files``, less what earlier rounds named), in order of first mention; a bare
    name (``tax.py``) counts when exactly one ``known`` file (the repository map's) has it."""
    if most <= 0:
        return []
    by_name: dict[str, list[str]] = {}
    for rel in known:
        by_name.setdefault(PurePosixPath(rel).name, []).append(rel)
    out: list[str] = []
    for text in texts:
        for name in _NAMED.findall(text):
            rel = name.removeprefix("./")
            if not _is_file(root, rel, deny):
                same = by_name.get(rel, []) if "/" not in rel else []
                rel = same[0] if len(same) == 1 and _is_file(root, same[0], deny) else ""
            if rel and rel not in shown and rel not in out:
                out.append(rel)
                if len(out) >= most:
                    return out
    return out


def _is_file(root: Path, rel: str, deny: list[str]) -> bool:
    try:
        return check_path(root, rel, deny).is_file()
    except EditError:
        return False
