"""The task a fix round shows: one builder for the live round, ``eval`` and the GRPO
rollout, so what a conductor is trained on is what it is asked in use."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from ..task import Task
from ..testrun import TestRun
from .files import context_files
from .repo_map import RepoMap

DEFAULT_INSTRUCTION = (
    "Make the failing tests pass by fixing the code under test. "
    "Do not weaken, skip or delete tests."
)
#: What the repository map's outline is said to lead from, in a fix round.
ROUND_MAP_ABOUT = "the tests and the files shown"


def fix_instruction(extra: str) -> str:
    """A fix's instruction: the user's words first, then the standing rule (make the
    failing tests pass without weakening them), so every door, eval and learn say the
    same."""
    return f"{extra}\n\n{DEFAULT_INSTRUCTION}" if extra.strip() else DEFAULT_INSTRUCTION


def round_task(
    instruction: str,
    root: Path,
    run: TestRun,
    deny: list[str],
    *,
    named: Sequence[str] = (),
    repo: RepoMap | None = None,
    map_chars: int = 0,
    previous: str = "",
) -> Task:
    """The round's task for the tree at ``root`` (the workspace, a sandbox of a lane's
    start, a rollout's copy): the files the failures involve and ``named`` ones, the
    failures, the repository map's outline of the rest, and what earlier rounds tried.
    Blocking (it reads files): call it in a thread."""
    files = context_files(root, run, deny, list(named))
    shown = [f.path for f in files]
    outline = repo.render(shown, map_chars, ROUND_MAP_ABOUT) if repo is not None else ""
    return Task(
        instruction,
        tuple(files),
        test_failures=run.summary(),
        repo_map=outline,
        previous=previous,
    )
