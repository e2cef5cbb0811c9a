"""The workspace's own state folder, ``.conductor/``: traces, reports, episodes; and the
user's, for what holds across workspaces.

It holds a ``.gitignore`` of ``*`` (as pytest does for its cache), so it never
shows up in ``git status`` and is never committed by accident.
"""

from __future__ import annotations

import json
import os
import tempfile
from pathlib import Path
from typing import Any

STATE_DIR = ".conductor"


def user_state_dir() -> Path:
    """The user's own state (``$XDG_STATE_HOME/conductor-lsp``): what holds across
    workspaces (which ones are trusted, what an endpoint's tokenizer makes of text)."""
    base = os.environ.get("XDG_STATE_HOME") or str(Path.home() / ".local" / "state")
    return Path(base).expanduser() / "conductor-lsp"


def read_json(path: Path) -> Any:
    """What ``write_json`` wrote in ``path``; None when it is missing or does not read as
    JSON (a caller checks the shape it expects, and starts afresh from anything else)."""
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None


def write_json(path: Path, data: Any, indent: int | None = None) -> None:
    """``data`` as JSON in ``path``, atomically: a crash mid-write leaves the previous
    file whole, and no temporary file behind."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", dir=path.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            json.dump(data, f, indent=indent)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def state_dir(root: Path) -> Path:
    """``root/.conductor``, created with its ``.gitignore`` if missing."""
    path = root / STATE_DIR
    path.mkdir(parents=True, exist_ok=True)
    ignore = path / ".gitignore"
    if not ignore.exists():
        ignore.write_text("# created by conductor-lsp: keep this folder out of git\n*\n")
    return path


def ensure_ignored(path: Path, root: Path) -> None:
    """Create ``.conductor``'s ``.gitignore`` when ``path`` lies inside it."""
    state = (root / STATE_DIR).resolve()
    if path.resolve().is_relative_to(state):
        state_dir(root)
