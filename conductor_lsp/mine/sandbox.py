"""One commit checked in a sandbox outside the workspace: the parent's tree (``git
archive``, so the workspace's HEAD, index, stash and worktrees are never touched) with
the commit's tests, run twice; then with its code changes too, run twice.

The check is two halves: ``gather`` reads from git everything the check needs (a
``Bundle``: plain bytes), ``judge`` runs the tests on it with no repository at hand, so
the second half can run on another machine (``mine --ray``)."""

from __future__ import annotations

import io
import re
import shlex
import shutil
import sys
import tarfile
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

from ..checkpoints.git import PLAIN_DIFF
from ..edits.workspace import apply_output_to_disk
from ..testrun import Confinement, TestRun, run_tests
from .history import Candidate, git, git_bytes

TEST_SECONDS = 120.0
PYTEST = f"{shlex.quote(sys.executable)} -m pytest -q -p no:cacheprovider"
_MISSING = re.compile(r"ModuleNotFoundError: No module named '([\w.]+)'")
_ERROR = re.compile(r"^(?:E\s+)?(?:[\w.]+\.)?(\w+(?:Error|Exception))\b", re.M)
#: What a repository's tests may need to run here, each added only where a run's own
#: output asks for it, and carried into the task's test command: its package under
#: ``src/``, not installed (a src layout); its config's ``addopts`` naming a plugin's
#: options this Python lacks (``--cov`` without pytest-cov): they are dropped.
SRC_PATH = ("-o", "pythonpath=src")
NO_ADDOPTS = ("-o", "addopts=")
_UNRECOGNIZED = re.compile(r"error: unrecognized arguments: ")


@dataclass
class Checked:
    """What the sandbox found: the task's files (``box``), the tests that failed before
    and passed after, the fix as a diff, or why the commit is skipped."""

    box: Path
    failing: list[str] = field(default_factory=list)
    solution: str = ""
    skip: str = ""
    #: Whether the fix's diff applies through our edits (else C's files were written).
    applies: bool = True
    #: pytest options the tests needed here (``SRC_PATH``, ``NO_ADDOPTS``).
    options: tuple[str, ...] = ()


def files_at(root: Path, commit: str, paths: tuple[str, ...]) -> dict[str, bytes | None]:
    """Each of ``paths`` as it is at ``commit`` (None where the commit has no such file)."""
    present = set(git(root, "ls-tree", "-r", "--name-only", commit, "--", *paths).splitlines())
    show = lambda rel: git_bytes(root, "cat-file", "blob", f"{commit}:{rel}")  # noqa: E731
    return {rel: show(rel) if rel in present else None for rel in paths}


def write_files(files: dict[str, bytes | None], dest: Path) -> None:
    """Write (or, for None, remove) each file under ``dest``."""
    for rel, blob in files.items():
        target = dest / rel
        if blob is None:
            target.unlink(missing_ok=True)
            continue
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(blob)


@dataclass(frozen=True)
class Bundle:
    """What checking a commit needs from git, read where the repository is: the parent's
    tree as a tar, the commit's tests and code files, and its code change as a diff."""

    cand: Candidate
    tree: bytes
    tests: dict[str, bytes | None]
    code: dict[str, bytes | None]
    solution: str


def gather(root: Path, cand: Candidate) -> Bundle:
    """Read-only git commands on ``root`` (nothing in the workspace changes)."""
    return Bundle(
        cand,
        git_bytes(root, "archive", "--format=tar", cand.parent),
        files_at(root, cand.commit, cand.tests),
        files_at(root, cand.commit, cand.code),
        git(root, "diff", *PLAIN_DIFF, "--no-renames", cand.parent, cand.commit, "--", *cand.code),
    )


def _missing_top(run: TestRun) -> str:
    """The top-level name of the module a run could not import ('' where none)."""
    found = _MISSING.search(run.output)
    return found.group(1).split(".")[0] if found else ""


def _module_in(base: Path, top: str) -> bool:
    """Whether ``top`` is a package or a module directly under ``base``."""
    return (base / top).is_dir() or (base / f"{top}.py").is_file()


def _in_src(box: Path, top: str) -> bool:
    """Whether ``top`` is a package or a module of the tree's ``src/`` layout."""
    return _module_in(box / "src", top)


def _adds(path: str, top: str) -> bool:
    """Whether a path the fix changes is module ``top`` or inside it, at the root or
    under ``src/`` (``src/calcx.py`` is not ``calc``)."""
    parts = Path(path).parts
    if parts[:1] == ("src",):
        parts = parts[1:]
    return parts[:1] in ((top,), (f"{top}.py",))


def _missing_package(run: TestRun, box: Path, code: tuple[str, ...]) -> str:
    """Why the tests cannot run here: a module neither in the tree nor added by the fix."""
    top = _missing_top(run)
    if not top:
        return ""
    ours = _module_in(box, top) or _in_src(box, top) or any(_adds(p, top) for p in code)
    return "" if ours else f"needs a package that is not installed ({top})"


async def _twice(
    box: Path, select: list[str], options: tuple[str, ...] = ()
) -> tuple[TestRun, TestRun]:
    confine = Confinement()  # a mined repository's code: no keys, a private HOME
    command = " ".join((PYTEST, *options))
    first = await run_tests(command, box, TEST_SECONDS, select=select, confine=confine)
    return first, await run_tests(command, box, TEST_SECONDS, select=select, confine=confine)


def _asks_for(run: TestRun, box: Path, have: tuple[str, ...]) -> tuple[str, ...]:
    """The options a run's output asks for beside ``have``: none where it ran."""
    more: tuple[str, ...] = ()
    if run.exit_code == 4 and _UNRECOGNIZED.search(run.output) and NO_ADDOPTS[1] not in have:
        more += NO_ADDOPTS
    top = _missing_top(run)
    if top and _in_src(box, top) and SRC_PATH[1] not in have:
        more += SRC_PATH
    return more


async def _before(box: Path, select: list[str]) -> tuple[tuple[TestRun, TestRun], tuple[str, ...]]:
    """The runs before the fix, with the options their output asked for (at most two
    retries: a usage error is reported before an import error it hides)."""
    options: tuple[str, ...] = ()
    runs = await _twice(box, select)
    for _ in range(2):
        more = _asks_for(runs[0], box, options)
        if not more:
            break
        options += more
        runs = await _twice(box, select, options)
    return runs, options


def _before_problem(runs: tuple[TestRun, TestRun], box: Path, code: tuple[str, ...]) -> str:
    if any(r.timed_out for r in runs):
        return "the tests time out"
    missing = _missing_package(runs[0], box, code) or _missing_package(runs[1], box, code)
    if missing:
        return missing
    if runs[0].passed and runs[1].passed:
        return "the new tests pass before the fix"
    if runs[0].passed != runs[1].passed or runs[0].failing_ids() != runs[1].failing_ids():
        return "flaky: two runs before the fix disagree"
    if runs[0].exit_code not in (1, 2):
        return f"the tests cannot run (pytest exit {runs[0].exit_code})"
    return ""


def _ids(run: TestRun, box: Path) -> list[str]:
    """The failing tests' ids when they name tests in files that exist (a collection error
    names none: the caller runs the files)."""
    ids = run.failing_ids() or []
    if run.exit_code != 1 or not all((box / i.split("::")[0]).is_file() for i in ids):
        return []
    return ids


def extract_tree(tree: bytes, box: Path) -> list[str]:
    """A commit's archive into ``box``, member by member through tarfile's "data" filter:
    what it refuses (a link out of the tree, a device, an absolute path) and what the
    file system cannot hold (a name too long, a file where a folder is) is left out and
    named, and the rest of the tree is there, so one such file in a history does not
    stop mining at its commit on every run."""
    left_out = []
    with tarfile.open(fileobj=io.BytesIO(tree)) as tar:
        for member in tar:
            try:
                tar.extract(member, box, filter="data")
            except (tarfile.TarError, OSError, KeyError, RecursionError):  # refused, or
                left_out.append(member.name)  # the file system cannot, or links in a loop
    return left_out


async def judge(bundle: Bundle, work: Path) -> Checked:
    """Fails before, passes after, twice each, from the bundle alone (no repository
    needed); the task's files are left in the box."""
    cand = bundle.cand
    box = Path(tempfile.mkdtemp(prefix=f"{cand.short}-", dir=work))
    extract_tree(bundle.tree, box)
    write_files(bundle.tests, box)
    selected = [t for t in cand.tests if (box / t).exists() and Path(t).name != "conftest.py"]
    if not selected:
        return Checked(box, skip="no test file left to run")
    before, options = await _before(box, selected)
    why = _before_problem(before, box, cand.code)
    if why:
        return Checked(box, skip=why)
    failing = _ids(before[0], box) or selected
    after_box = Path(tempfile.mkdtemp(prefix=f"{cand.short}-after-", dir=work))
    shutil.copytree(box, after_box, dirs_exist_ok=True)
    applies = bool(apply_output_to_disk(after_box, bundle.solution).written)
    if not applies:  # a diff our edits cannot read (a binary file, a rename): C's files
        write_files(bundle.code, after_box)
    after = await _twice(after_box, failing, options)
    shutil.rmtree(after_box, ignore_errors=True)
    if not (after[0].passed and after[1].passed):
        return Checked(box, skip=_after_problem(after))
    return Checked(box, failing, bundle.solution, applies=applies, options=options)


def _after_problem(runs: tuple[TestRun, TestRun]) -> str:
    """Why the fix is no answer here: its tests fail, or they do not even run (an old
    conftest today's pytest rejects, syntax this Python lacks), named by the error."""
    if runs[0].passed != runs[1].passed:
        return "flaky: two runs after the fix disagree"
    if runs[0].exit_code == 1 and runs[0].failing_ids():
        return "the fix does not pass them"
    errors = _ERROR.findall(runs[0].output)
    return f"the tests do not run with the fix ({errors[-1] if errors else 'no test ran'})"
