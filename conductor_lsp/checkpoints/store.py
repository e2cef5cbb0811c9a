"""Checkpoints of the whole working tree, taken before a job changes anything.

In git: a commit under ``refs/conductor/checkpoints/`` (``in_git``); outside git: a copy
in a cache directory (``copies``). Either survives a killed process, so ``undo`` always
works. The two kinds are two stores behind one protocol (``model.Store``): a workspace's
store is chosen once here, a checkpoint's by the kind it records.
"""

from __future__ import annotations

import time
from pathlib import Path

from .copies import COPY_SKIP, CopyStore, cache_of, workspace_key
from .in_git import GitStore, repository
from .model import (
    BEFORE_UNDO,
    EXCLUDE,
    JOB_END,
    JOB_KEPT,
    JOB_START,
    KEEP,
    REF_PREFIX,
    Checkpoint,
    Store,
)

__all__ = [
    "BEFORE_UNDO",
    "COPY_SKIP",
    "EXCLUDE",
    "JOB_END",
    "JOB_KEPT",
    "JOB_START",
    "KEEP",
    "REF_PREFIX",
    "Checkpoint",
    "Store",
    "create",
    "create_with",
    "diff",
    "list_checkpoints",
    "read_file",
    "restore",
    "same_state",
    "workspace_key",
]


def workspace_store(root: Path, cache_dir: Path | None = None) -> Store:
    """The store a workspace takes its checkpoints in: its repository, else copies."""
    root = root.resolve()
    repo = repository(root)
    return CopyStore(root, cache_dir) if repo is None else GitStore(root, repo)


def store_of(root: Path, checkpoint: Checkpoint) -> Store:
    """The store that holds ``checkpoint``."""
    root = root.resolve()
    if checkpoint.kind == "copy":
        return CopyStore(root, cache_of(checkpoint))
    return GitStore(root, repository(root))


def create(root: Path, label: str, *, cache_dir: Path | None = None) -> Checkpoint:
    """Snapshot the working tree; nothing else in the repository changes."""
    return workspace_store(root, cache_dir).create(label, time.time())


def list_checkpoints(root: Path, *, cache_dir: Path | None = None) -> list[Checkpoint]:
    """Newest first."""
    return workspace_store(root, cache_dir).list()


def restore(root: Path, checkpoint: Checkpoint) -> Checkpoint:
    """Put the working tree back as it was; returns a checkpoint of the state it replaced."""
    store = store_of(root, checkpoint)
    before = store.create(f"{BEFORE_UNDO} to {checkpoint.ref}", time.time())
    store.restore(checkpoint, before)
    return before


def same_state(root: Path, checkpoint: Checkpoint) -> bool:
    """Whether the working tree holds exactly what ``checkpoint`` holds."""
    return store_of(root, checkpoint).same_state(checkpoint)


def diff(root: Path, checkpoint: Checkpoint) -> str:
    """What changed in the working tree since the checkpoint, as a unified diff."""
    return store_of(root, checkpoint).diff(checkpoint)


def read_file(checkpoint: Checkpoint, rel: str, root: Path) -> bytes | None:
    """The bytes ``rel`` held in ``checkpoint`` (None when it did not exist)."""
    return store_of(root, checkpoint).read_file(checkpoint, rel)


def create_with(root: Path, base: Checkpoint, files: dict[str, bytes], label: str) -> Checkpoint:
    """A checkpoint of ``base`` with ``files`` written over it, the working tree untouched:
    a verified fix kept for ``undo --ref`` when it could not be applied."""
    return store_of(root, base).create_with(base, files, label, time.time())
