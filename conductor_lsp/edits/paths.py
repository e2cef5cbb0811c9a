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


#: Windows keeps "GIT~1" as the short (8.3) name of ".git"; both drop trailing dots and
#: spaces ("config." is "config"). Names are compared in this folded form everywhere,
#: since macOS and Windows file systems ignore case.
_SHORT_NAME = re.compile(r"^[^~]{1,6}~\d+$")


def fold(part: str) -> str:
    """A path part as a case-insensitive file system sees it."""
    return part.rstrip(". ").casefold()


def fold_path(rel: str) -> str:
    """A whole relative path as a case-insensitive file system sees it."""
    return "/".join(fold(p) for p in PurePosixPath(rel).parts)


def denied_by(rel: str, deny: Sequence[str]) -> str:
    """The deny pattern ``rel`` matches (on the whole path or any part, ignoring case), or ''."""
    parts = [fold(p) for p in PurePosixPath(rel).parts]
    whole = fold_path(rel)
    for pattern in deny:
        folded = pattern.casefold()
        if fnmatch.fnmatchcase(whole, folded) or any(fnmatch.fnmatchcase(p, folded) for p in parts):
            return pattern
    return ""


def deny_matcher(deny: Sequence[str]) -> re.Pattern[str]:
    """The deny list as one compiled pattern over folded names, for walks over thousands of
    files: ``denied_by(rel)`` is true exactly when it matches the folded whole path or a
    folded part (a pattern that matches nothing when the list is empty)."""
    if not deny:
        return re.compile(r"(?!)")
    return re.compile("|".join(f"(?:{fnmatch.translate(p.casefold())})" for p in deny))


def normalize(rel: str) -> str:
    """The workspace-relative POSIX form of a path as a model wrote it: ``pkg/./b.py``,
    ``pkg//b.py``, ``pkg\\b.py`` and ``pkg/b.py/`` are all ``pkg/b.py``, so two edits of one
    file are grouped as one (``..`` is kept, to be refused by name)."""
    rel = rel.strip().replace("\\", "/")
    absolute = rel.startswith("/")
    parts = [p for p in rel.split("/") if p not in ("", ".")]
    return ("/" if absolute else "") + "/".join(parts)


def check_path(root: Path, rel: str, deny: Sequence[str] = DEFAULT_DENY) -> Path:
    """The real file to read or write for ``rel``, or ``UnsafePath`` saying why not."""
    rel = normalize(rel)
    if not rel or "\0" in rel:
        raise UnsafePath(f"refused path {rel!r}: empty or contains NUL")
    try:
        return _check(root, rel, deny)
    except OSError as e:  # a name too long, a loop of links: not a path we can vouch for
        raise UnsafePath(f"refused path {rel[:200]!r}: {e.strerror or e}") from None


def _check(root: Path, rel: str, deny: Sequence[str]) -> Path:
    pure = PurePosixPath(rel)
    if pure.is_absolute() or re.match(r"^[A-Za-z]:", rel) or rel.startswith("~"):
        raise UnsafePath(f"refused path {rel!r}: absolute paths are not allowed")
    if any(p == ".." or not fold(p) for p in pure.parts):  # "... " is ".." on Windows
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
    parts = PurePosixPath(rel).parts
    if any(fold(p) == ".git" for p in parts):
        raise UnsafePath(f"refused path {shown!r}: files under .git/ are never edited")
    if any(_SHORT_NAME.match(p) for p in parts):
        raise UnsafePath(f"refused path {shown!r}: 8.3 short names may alias .git/ (GIT~1)")
    pattern = denied_by(rel, deny)
    if pattern:
        raise UnsafePath(f"refused path {shown!r}: matches the deny list ({pattern!r})")
