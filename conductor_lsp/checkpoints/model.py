"""A checkpoint as every store describes it, the store protocol, and the names labels use."""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Protocol

from ..storage.state import STATE_DIR

REF_PREFIX = "refs/conductor/checkpoints/"
EXCLUDE = (STATE_DIR,)  # our own traces and state
KEEP = 50
#: Labels name what a checkpoint marks, so undo can tell a job's start from its steps.
JOB_START = "before fix"
JOB_END = "after fix"
#: A verified fix the job could not write (the user changed its files meanwhile, or cancel).
JOB_KEPT = "verified fix, not written"
BEFORE_UNDO = "before undo"


@dataclass(frozen=True)
class Checkpoint:
    #: Which store holds it: "git" (a commit under ``REF_PREFIX``) or "copy".
    kind: str
    ref: str  # the git ref, or the copy's directory
    label: str
    created: float
    commit: str = ""

    def describe(self) -> str:
        when = time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(self.created))
        return f"{when}  {self.ref}  {self.label}"


class Store(Protocol):
    """Where one workspace's checkpoints live: its git repository, or copies in a cache."""

    kind: str

    def create(self, label: str, now: float) -> Checkpoint: ...

    def list(self) -> list[Checkpoint]:
        """Newest first."""
        ...

    def restore(self, checkpoint: Checkpoint, before: Checkpoint) -> None:
        """The working tree as ``checkpoint`` holds it (``before``: the state it replaces,
        taken just now)."""
        ...

    def same_state(self, checkpoint: Checkpoint) -> bool: ...

    def diff(self, checkpoint: Checkpoint) -> str: ...

    def read_file(self, checkpoint: Checkpoint, rel: str) -> bytes | None: ...

    def create_with(
        self, base: Checkpoint, files: dict[str, bytes], label: str, now: float
    ) -> Checkpoint: ...
