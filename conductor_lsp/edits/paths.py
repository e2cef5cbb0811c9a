"""Path safety: model output names paths, and model output is untrusted.

A path is refused when it is absolute, climbs out with ``..``, reaches into
``.git/``, passes through a symlink that leads outside the workspace, or matches
the deny list (secrets). Refused files are neither written nor shown to models.
"""

from __future__ import annotations

import fnmatch
import re
from collections.abc import Sequence
from pathlib import Path, PurePosixPath

from ..errors import UnsafePath

DEFAULT_DENY: tuple[str, ...] = (
    ".env",
    ".env.*",
    "*.env",
    "*.pem",
    "*.key",
    "*.p12",
    "*.pfx",
    "*.keystore",
    "*.jks",
    "id_rsa*",
    "id_dsa*",
    "id_ecdsa*",
    "id_ed25519*",
    ".netrc",
    ".pypirc",
    ".npmrc",
    ".git-credentials",
    ".ssh",
    ".aws",
    ".gnupg",
    ".docker",
    "secrets.*",
    "credentials*",
)


def denied_by(rel: str, deny: Sequence[str]) -> str:
    """The deny pattern ``rel`` matches (on the whole path or any part), or ''."""
    parts = PurePosixPath(rel).parts
    for pattern in deny:
        if fnmatch.fnmatch(rel, pattern) or any(fnmatch.fnmatch(p, pattern) for p in parts):
            return pattern
    return ""


def normalize(rel: str) -> str:
    """The workspace-relative POSIX form of a path as a model wrote it."""
    rel = rel.strip().replace("\\", "/")
    while rel.startswith("./"):
        rel = rel[2:]
    return rel


def check_path(root: Path, rel: str, deny: Sequence[str] = DEFAULT_DENY) -> Path:
    """The real file to read or write for ``rel``, or ``UnsafePath`` saying why not."""
    rel = normalize(rel)
    if not rel or "\0" in rel:
        raise UnsafePath(f"refused path {rel!r}: empty or contains NUL")
    pure = PurePosixPath(rel)
    if pure.is_absolute() or re.match(r"^[A-Za-z]:", rel) or rel.startswith("~"):
        raise UnsafePath(f"refused path {rel!r}: absolute paths are not allowed")
    if ".." in pure.parts:
        raise UnsafePath(f"refused path {rel!r}: '..' may not leave or climb the workspace")
    _check_inside(rel, deny)
    root_r = root.resolve()
    current = root_r
    for part in pure.parts:
        current = current / part
        if current.is_symlink():
            target = current.resolve()
            if not target.is_relative_to(root_r):
                raise UnsafePath(
                    f"refused path {rel!r}: symlink {part!r} leads outside the workspace"
                )
    full = (root_r / pure).resolve()
    if not full.is_relative_to(root_r):
        raise UnsafePath(f"refused path {rel!r}: resolves outside the workspace")
    _check_inside(full.relative_to(root_r).as_posix(), deny, shown=rel)
    return full


def _check_inside(rel: str, deny: Sequence[str], shown: str = "") -> None:
    shown = shown or rel
    if ".git" in PurePosixPath(rel).parts:
        raise UnsafePath(f"refused path {shown!r}: files under .git/ are never edited")
    pattern = denied_by(rel, deny)
    if pattern:
        raise UnsafePath(f"refused path {shown!r}: matches the deny list ({pattern!r})")
