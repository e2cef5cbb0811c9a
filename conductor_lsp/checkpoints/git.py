"""Git as conductor-lsp uses it: the identity its own commits carry (checkpoints, the
repositories ``eval`` makes for each task), so they never need the user's."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

GIT_IDENTITY = {
    "GIT_AUTHOR_NAME": "conductor-lsp",
    "GIT_AUTHOR_EMAIL": "conductor-lsp@localhost",
    "GIT_COMMITTER_NAME": "conductor-lsp",
    "GIT_COMMITTER_EMAIL": "conductor-lsp@localhost",
}


def init_repository(path: Path) -> None:
    """Make ``path`` a git repository with one commit of everything in it."""
    env = {**os.environ, **GIT_IDENTITY}
    for argv in (
        ["git", "init", "-q"],
        ["git", "add", "-A"],
        ["git", "commit", "-q", "-m", "task", "--no-gpg-sign"],
    ):
        subprocess.run(argv, cwd=path, check=True, env=env, capture_output=True, timeout=60)
