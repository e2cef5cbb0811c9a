"""Mining a repository's own history: each past commit that fixed code and added or changed
a test that proves it becomes a task (its parent's files plus its tests, the tests that
failed before and pass after, the fix kept as the known answer and never shown), written
in the suite format ``eval`` reads. The workspace and its git state are never touched:
every commit is checked in a sandbox of its own, outside the workspace."""

from .history import Candidate, candidates, is_test_path
from .run import MineReport, mine

__all__ = ["Candidate", "MineReport", "candidates", "is_test_path", "mine"]
