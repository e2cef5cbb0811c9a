"""Git as conductor-lsp uses it: one door for every git command it runs (checkpoints'
sandboxes, mining, the repositories ``eval`` makes), with the identity its own commits
carry, hooks off, and the user's settings that change what git prints turned off, so a
diff read back (a mined task's known answer, a checkpoint's diff) is git's plain diff
whatever ``color.ui``, ``diff.external`` or ``diff.noprefix`` say."""

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
#: The user's settings that would change what a command prints or runs, set to git's own
#: defaults for every command run through this door.
NEUTRAL = (
    "-c", "core.hooksPath=/dev/null",
    "-c", "color.ui=never",
    "-c", "diff.noprefix=false",
    "-c", "diff.mnemonicPrefix=false",
    "-c", "core.quotePath=true",
)  # fmt: skip
#: Flags for a diff that is read back: no external program, no colour, a/ and b/ prefixes.
PLAIN_DIFF = ("--no-ext-diff", "--no-color", "--no-textconv", "--src-prefix=a/", "--dst-prefix=b/")
#: Seconds one git command may take.
GIT_SECONDS = 300.0


def run_git(
    root: Path, *args: str, timeout: float = GIT_SECONDS, check: bool = True
) -> subprocess.CompletedProcess[bytes]:
    """``git ARGS`` in ``root`` through the door (``check``: a failure raises
    ``CalledProcessError``, which the caller names in its own words)."""
    return subprocess.run(
        ["git", *NEUTRAL, *args],
        cwd=root,
        env={**os.environ, **GIT_IDENTITY},
        capture_output=True,
        timeout=timeout,
        check=check,
    )


def init_repository(path: Path) -> None:
    """Make ``path`` a git repository with one commit of everything in it."""
    run_git(path, "init", "-q", timeout=60)
    run_git(path, "add", "-A", timeout=60)
    run_git(path, "commit", "-q", "-m", "task", "--no-gpg-sign", timeout=60)
