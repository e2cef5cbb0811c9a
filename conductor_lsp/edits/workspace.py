"""Edits on disk: read safely, write all-or-nothing through temp files and rename.

Encoding (UTF-8, UTF-8 with BOM, or bytes kept as Latin-1), line endings, final
newline and file mode survive an edit; binary files are refused.
"""

from __future__ import annotations

import os
import stat
import tempfile
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

from ..errors import EditError
from .apply import Guard, apply_edits, edited_paths
from .model import EditFailure, EditResult, EditsConfig
from .parse import parse_edits
from .paths import check_path

BOM = b"\xef\xbb\xbf"


@dataclass(frozen=True)
class DiskText:
    text: str
    encoding: str  # "utf-8" or "latin-1"
    bom: bool
    mode: int
    data: bytes = b""  # the bytes read: the write checks nobody changed them since


def read_text(path: Path) -> DiskText | None:
    """A file's text, None when it does not exist; EditError for binary files."""
    try:
        data = path.read_bytes()
        mode = stat.S_IMODE(path.stat().st_mode)
    except FileNotFoundError:
        return None
    except IsADirectoryError as e:
        raise EditError(f"{path.name} is a directory") from e
    except OSError as e:
        raise EditError(f"{path.name[:80]} cannot be read: {e.strerror or e}") from e
    if b"\0" in data[:8192]:
        raise EditError("binary file refused")
    bom = data.startswith(BOM)
    body = data[len(BOM) :] if bom else data
    try:
        return DiskText(body.decode("utf-8"), "utf-8", bom, mode, data)
    except UnicodeDecodeError:
        return DiskText(body.decode("latin-1"), "latin-1", bom, mode, data)


def encode(disk: DiskText | None, text: str) -> bytes:
    if disk is None:
        return text.encode("utf-8")
    try:
        data = text.encode(disk.encoding)
    except UnicodeEncodeError as e:
        raise EditError(f"the new text cannot be written as {disk.encoding}: {e.reason}") from e
    return BOM + data if disk.bom else data


@dataclass
class DiskEdit:
    result: EditResult
    written: list[str]


def load_for_edit(
    root: Path, paths: Sequence[str], deny: Sequence[str]
) -> tuple[dict[str, str | None], dict[str, tuple[Path, DiskText | None]], list[EditFailure]]:
    texts: dict[str, str | None] = {}
    disk: dict[str, tuple[Path, DiskText | None]] = {}
    failures: list[EditFailure] = []
    real: dict[Path, str] = {}
    for rel in paths:
        try:
            full = check_path(root, rel, deny)
            alias = same_file(real, full, rel)
            if alias:
                raise EditError(alias)
            current = read_text(full)
        except EditError as e:
            failures.append(EditFailure(rel, str(e)))
            continue
        texts[rel] = current.text if current else None
        disk[rel] = (full, current)
    return texts, disk, failures


def same_file(seen: dict[Path, str], full: Path, rel: str) -> str:
    """Why ``rel`` may not be edited beside a path already in ``seen`` ('' when it may): two
    names of one file (a symlinked folder) would each overwrite the other's edit."""
    other = seen.setdefault(full, rel)
    if other == rel:
        return ""
    return f"{rel} and {other} are the same file (through a symbolic link); edit it under one name"


def apply_output_to_disk(
    root: Path,
    output: str,
    config: EditsConfig | None = None,
    *,
    targets: Sequence[str] = (),
    guard: Guard | None = None,
) -> DiskEdit:
    """Parse, check, match and write; on any failure nothing on disk changes. ``targets``:
    the files under repair; ``guard``: a veto per change (see ``apply_output``)."""
    config = config or EditsConfig()
    edits, failures = parse_edits(output)
    paths = edited_paths(edits, targets)
    texts, disk, load_failures = load_for_edit(root, paths, config.all_deny())
    result = apply_edits(texts, edits, config, targets=targets, guard=guard)
    result.failures[:0] = failures + load_failures
    new_texts = result.new_texts
    if not new_texts:
        return DiskEdit(result, [])
    changes = {disk[p][0]: (disk[p][1], t) for p, t in new_texts.items()}
    by_path = {disk[p][0]: p for p in new_texts}

    def lost() -> str:  # never report a write that is not on disk
        gone = [by_path[f] for f, (_, t) in changes.items() if not _holds(f, t)]
        return f"{', '.join(gone)}: the file does not hold the edit after writing" if gone else ""

    try:
        write_all(changes, verify=lost)
    except (EditError, OSError) as e:
        result.failures.append(EditFailure("(workspace)", f"nothing written: {e}"))
        return DiskEdit(result, [])
    return DiskEdit(result, sorted(new_texts))


def _holds(path: Path, text: str) -> bool:
    try:
        disk = read_text(path)
    except EditError:
        return False
    return disk is not None and disk.text == text


def write_all(
    changes: dict[Path, tuple[DiskText | None, str]], *, verify: Verify | None = None
) -> None:
    """Write every file or none, each in its own encoding (see ``replace_files``); a file
    read for the edit must still hold what was read."""
    files = {path: encode(old, text) for path, (old, text) in changes.items()}
    expect = {path: old.data for path, (old, _) in changes.items() if old is not None}
    replace_files(files, expect=expect, verify=verify)


#: Checked after every rename: why the files on disk are wrong ('' when right).
Verify = Callable[[], str]


def replace_files(
    files: dict[Path, bytes],
    *,
    expect: dict[Path, bytes] | None = None,
    verify: Verify | None = None,
) -> None:
    """Write every file or none: temp files first, then renames, rolled back on any error.

    ``expect``: the bytes each file held when the edit was made; a file that changed since
    (under us) refuses the whole write. ``verify`` runs once all are renamed; a reason
    from it, or any exception, puts every file back. Each file keeps its mode; new files
    get the umask's."""
    previous = _snapshot(files)
    for path, data in (expect or {}).items():
        now = previous.get(path)
        if now is None or now[0] != data:
            raise EditError(f"{path.name} changed on disk while the edit was made")
    temps, made_dirs = _stage(files, previous)
    done: list[Path] = []
    try:
        for path, tmp in temps.items():
            os.replace(tmp, path)
            done.append(path)
        why = verify() if verify else ""
        if why:
            raise EditError(why)
    except BaseException:
        _restore(done, previous, made_dirs)
        for path, tmp in temps.items():
            if path not in done:
                Path(tmp).unlink(missing_ok=True)
        raise


def _snapshot(files: dict[Path, bytes]) -> dict[Path, tuple[bytes, int] | None]:
    previous: dict[Path, tuple[bytes, int] | None] = {}
    for path in files:
        try:
            previous[path] = (path.read_bytes(), stat.S_IMODE(path.stat().st_mode))
        except FileNotFoundError:
            previous[path] = None
        except IsADirectoryError as e:
            raise EditError(f"{path.name} is a directory") from e
    return previous


def _stage(
    files: dict[Path, bytes], previous: dict[Path, tuple[bytes, int] | None]
) -> tuple[dict[Path, str], list[Path]]:
    """Every new text in a temp file beside its target, synced, with the target's mode."""
    temps: dict[Path, str] = {}
    made_dirs: list[Path] = []
    try:
        for path, data in files.items():
            missing = [p for p in [path.parent, *path.parent.parents] if not p.exists()]
            for d in reversed(missing):
                d.mkdir()
                made_dirs.append(d)
            fd, tmp = tempfile.mkstemp(
                prefix=f".{path.name}.", suffix=".conductor-tmp", dir=path.parent
            )
            temps[path] = tmp
            with os.fdopen(fd, "wb") as f:
                f.write(data)
                f.flush()
                os.fsync(f.fileno())
            old = previous[path]
            os.chmod(tmp, old[1] if old else 0o666 & ~_umask())
    except BaseException:
        for tmp in temps.values():
            Path(tmp).unlink(missing_ok=True)
        _remove_dirs(made_dirs)
        raise
    return temps, made_dirs


def _restore(
    done: list[Path], previous: dict[Path, tuple[bytes, int] | None], made_dirs: list[Path]
) -> None:
    """Put back what was replaced: old bytes and mode through a rename of their own, new
    files removed, with the folders made for them."""
    for path in done:
        old = previous[path]
        if old is None:
            path.unlink(missing_ok=True)
            continue
        fd, tmp = tempfile.mkstemp(
            prefix=f".{path.name}.", suffix=".conductor-tmp", dir=path.parent
        )
        with os.fdopen(fd, "wb") as f:
            f.write(old[0])
        os.chmod(tmp, old[1])
        os.replace(tmp, path)
    _remove_dirs(made_dirs)


def _remove_dirs(made: list[Path]) -> None:
    for d in reversed(made):
        try:
            d.rmdir()
        except OSError:
            pass


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask
