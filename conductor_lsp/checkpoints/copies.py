"""Checkpoints outside git: a copy of the working tree in a cache directory (the user's
cache, ``storage.cache``), one folder a checkpoint with its label beside it."""

from __future__ import annotations

import difflib
import hashlib
import json
import os
import shutil
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from ..storage.cache import cache_home
from ..storage.state import STATE_DIR
from .model import KEEP, Checkpoint

COPY_SKIP = {
    ".git",
    STATE_DIR,
    ".venv",
    "venv",
    "node_modules",
    "__pycache__",
    ".mypy_cache",
    ".pytest_cache",
    ".ruff_cache",
    ".tox",
}


def workspace_key(root: Path) -> str:
    return hashlib.sha256(str(root).encode()).hexdigest()[:16]


def cache_of(checkpoint: Checkpoint) -> Path:
    """The cache directory a copy checkpoint was taken into."""
    return Path(checkpoint.ref).parents[2]


def _files(root: Path) -> Iterator[Path]:
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames[:] = [d for d in dirnames if d not in COPY_SKIP]
        for name in filenames:
            yield Path(dirpath) / name


@dataclass
class CopyStore:
    root: Path
    #: Where the copies go (None: the user's cache).
    cache_dir: Path | None = None
    kind: str = "copy"

    @property
    def base(self) -> Path:
        return (self.cache_dir or cache_home()) / "checkpoints" / workspace_key(self.root)

    def create(self, label: str, now: float, source: Path | None = None) -> Checkpoint:
        stamp = time.strftime("%Y%m%d-%H%M%S", time.localtime(now))
        target = self.base / f"{stamp}-{int(now * 1e6) % 1_000_000:06d}"
        files = target / "files"
        files.mkdir(parents=True)
        source = source or self.root
        for path in _files(source):
            if path.is_symlink():
                continue
            dest = files / path.relative_to(source)
            dest.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(path, dest)
        (target / "checkpoint.json").write_text(
            json.dumps({"label": label, "created": now, "root": str(self.root)})
        )
        for old in sorted(self.base.glob("*"), reverse=True)[KEEP:]:
            shutil.rmtree(old, ignore_errors=True)
        return Checkpoint("copy", str(target), label, now)

    def list(self) -> list[Checkpoint]:
        out = []
        for d in sorted(self.base.glob("*"), reverse=True) if self.base.is_dir() else []:
            meta = d / "checkpoint.json"
            if meta.is_file():
                m = json.loads(meta.read_text())
                out.append(Checkpoint("copy", str(d), m["label"], m["created"]))
        return out

    def restore(self, checkpoint: Checkpoint, before: Checkpoint) -> None:
        files, replaced = Path(checkpoint.ref) / "files", Path(before.ref) / "files"
        for path in list(_files(self.root)):
            rel = path.relative_to(self.root)
            if not (files / rel).exists() and (replaced / rel).exists():
                path.unlink()
        for src in _files(files):
            dest = self.root / src.relative_to(files)
            dest.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(src, dest)

    def same_state(self, checkpoint: Checkpoint) -> bool:
        files = Path(checkpoint.ref) / "files"
        ours = {p.relative_to(self.root): p for p in _files(self.root) if not p.is_symlink()}
        saved = {p.relative_to(files): p for p in _files(files)}
        return ours.keys() == saved.keys() and all(
            ours[k].read_bytes() == saved[k].read_bytes() for k in ours
        )

    def diff(self, checkpoint: Checkpoint) -> str:
        files = Path(checkpoint.ref) / "files"
        rels = {p.relative_to(files) for p in _files(files)} | {
            p.relative_to(self.root) for p in _files(self.root)
        }
        out: list[str] = []
        for rel in sorted(rels):
            a, b = files / rel, self.root / rel
            try:
                old = a.read_text().splitlines(keepends=True) if a.exists() else []
                new = b.read_text().splitlines(keepends=True) if b.exists() else []
            except UnicodeDecodeError:
                continue
            out += difflib.unified_diff(old, new, f"a/{rel}", f"b/{rel}")
        return "".join(out)

    def read_file(self, checkpoint: Checkpoint, rel: str) -> bytes | None:
        path = Path(checkpoint.ref) / "files" / rel
        return path.read_bytes() if path.is_file() else None

    def create_with(
        self, base: Checkpoint, files: dict[str, bytes], label: str, now: float
    ) -> Checkpoint:
        point = self.create(label, now, source=Path(base.ref) / "files")
        for rel, data in files.items():
            dest = Path(point.ref) / "files" / rel
            dest.parent.mkdir(parents=True, exist_ok=True)
            dest.write_bytes(data)
        return point
