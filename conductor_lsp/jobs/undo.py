"""Bring back the state before a job: ``undo`` and ``checkpoints``."""

from __future__ import annotations

from pathlib import Path

from ..checkpoints.store import Checkpoint, list_checkpoints
from ..checkpoints.undo import Undone
from ..checkpoints.undo import undo as restore_before
from ..configure.load import workspace_episodes
from ..episodes.log import EpisodeLog


def undo(
    root: Path, ref: str | None = None, *, job: str = "", episodes: EpisodeLog | None = None
) -> Undone:
    """The state before the last job (or the job that began at checkpoint ``job``, or
    checkpoint ``ref``); the undone job's episodes are marked in the workspace's log
    unless ``episodes`` names another."""
    log = episodes if episodes is not None else workspace_episodes(root)
    return restore_before(root, ref, job=job, episodes=log)


def checkpoints(root: Path) -> list[Checkpoint]:
    """The workspace's checkpoints, newest first."""
    return list_checkpoints(root)
