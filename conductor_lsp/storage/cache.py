"""conductor-lsp's folder in the user cache: outside every workspace, so editors and
their tools never index what is kept there (checkpoints outside git, sandboxes, weights)."""

from __future__ import annotations

import os
from pathlib import Path


def cache_home() -> Path:
    """``$XDG_CACHE_HOME/conductor-lsp``, else ``~/.cache/conductor-lsp``."""
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base).expanduser() / "conductor-lsp"
