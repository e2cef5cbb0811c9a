"""Sandboxes: where candidate answers are applied and tested, never the user's files.

A sandbox is the job's start checkpoint (which already holds the user's untracked
files) with the round's changes written over it: in git, a detached worktree of the
checkpoint commit; outside git, a copy of the checkpoint's files. Environments the
tests may need but git ignores (``.venv``, ``venv``, ``node_modules``) are linked in.

Sandboxes live in the user cache (``~/.cache/conductor-lsp/sandboxes/``), outside
every workspace, so editors, indexers and file watchers never see them. A job's
workbench removes its sandboxes when the job ends, however it ends. A job killed with
``-9`` cannot, so every new workbench first prunes the folders of workbenches whose
process is gone (each holds a lock on its folder for as long as it lives) and has git
forget their worktrees.
"""

from __future__ import annotations

import asyncio
import contextlib
import fcntl
import json
import os
import shutil
import subprocess
import uuid
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import IO

from ..checkpoints.git import run_git
from ..checkpoints.store import Checkpoint, workspace_key
from ..errors import CheckpointError
from ..storage.cache import cache_home

#: Ignored folders the tests may need, linked into every sandbox when the workspace has them.
ENV_DIRS = (".venv", "venv", "node_modules")
LOCK = "owner.lock"


@dataclass(frozen=True)
class Sandbox:
    path: Path
    label: str


def _git(root: Path, *args: str) -> None:
    """Run git quietly; hooks off (a worktree must not run the user's post-checkout)."""
    out = run_git(root, *args, check=False)
    if out.returncode != 0:
        detail = (out.stderr or out.stdout).decode("utf-8", "replace").strip().splitlines()
        raise CheckpointError(f"git {args[0]}: {detail[0] if detail else out.returncode}")


def sandboxes_home(cache: Path | None = None) -> Path:
    return (cache or cache_home()) / "sandboxes"


def prune(cache: Path | None = None) -> list[Path]:
    """Remove the sandboxes of workbenches whose process is gone; returns what was removed."""
    removed = []
    home = sandboxes_home(cache)
    for bench in sorted(home.glob("*/*")) if home.is_dir() else []:
        lock = bench / LOCK
        try:
            with lock.open("a") as f:
                fcntl.flock(f, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            continue  # its job is still running
        except OSError:
            pass  # no lock file: a half-made folder, gone with the rest
        root = _owner_root(bench)
        shutil.rmtree(bench, ignore_errors=True)
        if root is not None and (root / ".git").exists():
            with contextlib.suppress(CheckpointError, OSError, subprocess.SubprocessError):
                _git(root, "worktree", "prune")
        removed.append(bench)
    return removed


def _owner_root(bench: Path) -> Path | None:
    try:
        return Path(json.loads((bench / "owner.json").read_text())["root"])
    except (OSError, ValueError, KeyError, TypeError):
        return None


class Workbench:
    """The sandboxes of one job: opened from the start checkpoint, all removed by ``close``."""

    def __init__(self, root: Path, start: Checkpoint, *, cache: Path | None = None) -> None:
        self.root = root.resolve()
        self.start = start
        prune(cache)
        self.home = sandboxes_home(cache) / workspace_key(self.root) / uuid.uuid4().hex[:12]
        self.home.mkdir(parents=True)
        self._lock: IO[str] | None = (self.home / LOCK).open("w")
        fcntl.flock(self._lock, fcntl.LOCK_EX)
        (self.home / "owner.json").write_text(
            json.dumps({"root": str(self.root), "pid": os.getpid()})
        )
        self._open: list[Sandbox] = []
        self._git_lock = asyncio.Lock()  # worktree add/remove touch shared .git files

    async def open(self, files: Mapping[str, bytes], label: str) -> Sandbox:
        """A new sandbox holding the start state with ``files`` written over it."""
        path = self.home / f"{label}-{uuid.uuid4().hex[:6]}"
        box = Sandbox(path, label)
        self._open.append(box)
        if self.start.kind == "git":
            async with self._git_lock:
                await asyncio.to_thread(
                    _git, self.root, "worktree", "add", "--detach", "-q", str(path),
                    self.start.commit,
                )  # fmt: skip
        else:
            await asyncio.to_thread(shutil.copytree, Path(self.start.ref) / "files", path)
        await asyncio.to_thread(self._fill, path, files)
        return box

    def _fill(self, path: Path, files: Mapping[str, bytes]) -> None:
        for name in ENV_DIRS:
            src, dest = self.root / name, path / name
            if src.is_dir() and not dest.exists():
                dest.symlink_to(src, target_is_directory=True)
        for rel, data in files.items():
            dest = path / rel
            dest.parent.mkdir(parents=True, exist_ok=True)
            dest.write_bytes(data)

    async def discard(self, box: Sandbox) -> None:
        """Remove one sandbox now (its verdict is known); git forgets it at ``close``."""
        if box in self._open:
            self._open.remove(box)
            await asyncio.to_thread(shutil.rmtree, box.path, True)

    async def close(self) -> None:
        """Remove every sandbox of this job. Runs to the end even when the job is being
        cancelled (the removal goes on in its thread); safe to call twice."""
        await asyncio.shield(asyncio.to_thread(self.close_now))

    def close_now(self) -> None:
        if self._lock is None:
            return
        self._open.clear()
        shutil.rmtree(self.home, ignore_errors=True)
        if self.start.kind == "git":
            with contextlib.suppress(CheckpointError, OSError, subprocess.SubprocessError):
                _git(self.root, "worktree", "prune")
        self._lock.close()
        self._lock = None
