"""Mining a repository's own history: each past commit that fixed code and added or changed
a test that proves it becomes a task (its parent's files plus its tests, the tests that
failed before and pass after, the fix kept as the known answer and never shown), written
in the suite format ``eval`` reads. The workspace and its git state are never touched:
every commit is checked in a sandbox of its own, outside the workspace."""

from ..context.files import is_test_path
from .history import Candidate, candidates
from .run import Checker, MineReport, mine
from .sandbox import Bundle, Checked, gather, judge

__all__ = [
    "Bundle",
    "Candidate",
    "Checked",
    "Checker",
    "MineReport",
    "candidates",
    "gather",
    "is_test_path",
    "judge",
    "mine",
]
