"""Which checkpoint a plain ``undo`` restores, and when it must refuse.

Plain undo brings back what the user had before the last job: that job's start
checkpoint, never one of its intermediate states. It refuses to cross jobs: when
the working tree is no longer what the last job left (the user worked on since, or
a newer job was killed before it could take its checkpoint), restoring would drop
newer work silently, so it says so and names ``--ref``.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from pathlib import Path

from ..episodes.log import EpisodeLog
from ..errors import CheckpointError
from .store import BEFORE_UNDO, JOB_START, Checkpoint, list_checkpoints, restore, same_state


@dataclass(frozen=True)
class Undone:
    restored: Checkpoint
    #: The state the undo replaced, so the undo itself can be undone.
    saved: Checkpoint


def undo(
    root: Path,
    ref: str | None = None,
    *,
    job: str = "",
    episodes: EpisodeLog | None = None,
) -> Undone:
    """The one undo of the command line and the editor: bring back the state before the
    last job (plain), before the job that began at checkpoint ``job`` (under the same rule:
    never across newer work), or checkpoint ``ref`` (anyway, the current state saved
    first). The undone job's episodes are marked: its plans did not help."""
    if job:
        points = list_checkpoints(root)
        chosen = next((p for p in points if p.ref == job), None)
        if chosen is None:
            raise CheckpointError(f"checkpoint {job} is gone")
        check_last_job(root, chosen, points)
    else:
        chosen = choose(root, ref)
    saved = restore(root, chosen)
    if episodes is not None:
        episodes.undo(chosen.ref)
    return Undone(chosen, saved)


def job_checkpoints(points: list[Checkpoint], start: Checkpoint) -> list[Checkpoint]:
    """The checkpoints taken by the job that began at ``start``, newest first."""
    later = points[: points.index(start)]  # newest first, so these came after it
    return [p for p in later if not p.label.startswith((JOB_START, BEFORE_UNDO))]


def choose(root: Path, ref: str | None = None) -> Checkpoint:
    """The checkpoint ``undo`` should restore; ``CheckpointError`` saying why not."""
    points = list_checkpoints(root)
    if ref:
        chosen = [p for p in points if p.ref == ref]
        if not chosen:
            raise CheckpointError(f"no checkpoint {ref} (see `conductor-lsp undo --list`)")
        return chosen[0]
    starts = [p for p in points if p.label.startswith(JOB_START)]
    if not starts:
        raise CheckpointError("no job to undo: no checkpoint taken before a job")
    start = starts[0]
    check_last_job(root, start, points)
    return start


def check_last_job(root: Path, start: Checkpoint, points: list[Checkpoint] | None = None) -> None:
    """Refuse unless the working tree is exactly what the job begun at ``start`` left."""
    points = points if points is not None else list_checkpoints(root)
    if same_state(root, start):
        raise CheckpointError(
            f"nothing to undo: the working tree is as it was before the last job ({start.ref})"
        )
    steps = job_checkpoints(points, start)
    last = steps[0] if steps else start
    if not same_state(root, last):
        when = time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(last.created))
        raise CheckpointError(
            "the working tree has changed since the last job left it "
            f"({last.label}, {when}); a plain undo would drop those changes. To restore "
            f"the state before that job anyway, run: conductor-lsp undo --ref {start.ref} "
            "(the current state is saved first, as for every undo)"
        )
