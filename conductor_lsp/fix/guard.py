"""What a fix job may not change: the tests it is fixing, and how pytest picks them;
and what a worker was not shown.

A worker that rewrites ``assert add(2, 3) == 5`` as ``assert True`` makes the tests
green and fixes nothing. By default such a change is refused with a message the next
round sees; ``[fix] allow_test_edits = true`` allows it. A worker shown a file only in
part (``runtime.window``) may not drop the file's definitions: it did not see them, and
a test command limited to the failing tests would not notice them gone.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from pathlib import PurePosixPath

from ..context.files import is_test_path
from ..context.window import definitions
from ..edits.apply import Guard
from ..testrun import TestRun

ALLOW = "set [fix] allow_test_edits = true to allow it"
_PYTEST_SECTION = re.compile(r"^\[(tool\.pytest[^\]]*|pytest|tool:pytest)\]", re.M)
_ANY_SECTION = re.compile(r"^\[", re.M)
CONFIG_FILES = ("pyproject.toml", "setup.cfg", "tox.ini")


def pytest_sections(text: str) -> list[str]:
    """The pytest configuration sections of an ini or TOML file, as text."""
    out = []
    for m in _PYTEST_SECTION.finditer(text):
        nxt = _ANY_SECTION.search(text, m.end())
        out.append(text[m.start() : nxt.start() if nxt else len(text)])
    return out


def test_guard(run: TestRun) -> Guard:
    """A veto for the edits API: no change to test files (those of ``run``'s failures, and
    any file named like a test), to pytest.ini, or to pytest's sections elsewhere."""
    failing = {f.file for f in run.failures if f.file}

    def guard(path: str, old: str | None, new: str) -> str:
        name = PurePosixPath(path).name
        if path in failing or is_test_path(path) or name == "pytest.ini":
            return f"{path} holds tests this job must make pass; a fix may not change it ({ALLOW})"
        if name in CONFIG_FILES and pytest_sections(old or "") != pytest_sections(new):
            return f"the change to {path} touches pytest's configuration ({ALLOW})"
        return ""

    return guard


def partial_guard(partial: Sequence[str]) -> Guard | None:
    """A veto on changes to files the worker saw in part that drop definitions (or, in a
    file that does not parse, a fifth of its lines)."""
    if not partial:
        return None

    def guard(path: str, old: str | None, new: str) -> str:
        if path not in partial or old is None:
            return ""
        before = [d.name for d in definitions(old)]
        if before:
            after = {d.name for d in definitions(new)}
            gone = sorted({n for n in before if n not in after})
        else:
            shrunk = new.count("\n") < 0.8 * old.count("\n")
            gone = ["a fifth of its lines"] if shrunk else []
        if not gone:
            return ""
        return (
            f"{path} was shown in part, and the change drops {', '.join(gone[:6])}: change "
            "only the lines shown, with SEARCH/REPLACE blocks"
        )

    return guard


def both(*guards: Guard | None) -> Guard | None:
    """One veto from several: the first refusal wins."""
    found = [g for g in guards if g is not None]
    if not found:
        return None
    return lambda path, old, new: next((w for g in found if (w := g(path, old, new))), "")
