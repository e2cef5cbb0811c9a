"""Edits on disk: read safely, write all-or-nothing through temp files and rename.

Encoding (UTF-8, UTF-8 with BOM, or bytes kept as Latin-1), line endings, final
newline and file mode survive an edit; binary files are refused.
"""

from __future__ import annotations

import os
import stat
import tempfile
from collections.abc import Sequence
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
        return DiskText(body.decode("utf-8"), "utf-8", bom, mode)
    except UnicodeDecodeError:
        return DiskText(body.decode("latin-1"), "latin-1", bom, mode)


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
    try:
        write_all({disk[p][0]: (disk[p][1], t) for p, t in new_texts.items()})
    except (EditError, OSError) as e:
        result.failures.append(EditFailure("(workspace)", f"nothing written: {e}"))
        return DiskEdit(result, [])
    lost = [p for p, t in new_texts.items() if not _holds(disk[p][0], t)]
    if lost:  # never report a write that is not on disk
        failure = EditFailure(", ".join(lost), "the file does not hold the edit after writing")
        result.failures.append(failure)
        return DiskEdit(result, [])
    return DiskEdit(result, sorted(new_texts))


def _holds(path: Path, text: str) -> bool:
    try:
        disk = read_text(path)
    except EditError:
        return False
    return disk is not None and disk.text == text


def write_all(changes: dict[Path, tuple[DiskText | None, str]]) -> None:
    """Write every file or none, each in its own encoding (see ``replace_files``)."""
    replace_files({path: encode(old, text) for path, (old, text) in changes.items()})


def replace_files(files: dict[Path, bytes]) -> None:
    """Write every file or none: temp files first, then renames, rolled back on error.
    Each file keeps its mode; new files get the umask's."""
    previous: dict[Path, tuple[bytes, int] | None] = {}
    for path in files:
        try:
            previous[path] = (path.read_bytes(), stat.S_IMODE(path.stat().st_mode))
        except FileNotFoundError:
            previous[path] = None
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
        for d in reversed(made_dirs):
            d.rmdir()
        raise
    done: list[Path] = []
    try:
        for path, tmp in temps.items():
            os.replace(tmp, path)
            done.append(path)
    except BaseException:
        for path in done:  # put back what we already replaced
            old = previous[path]
            if old is None:
                path.unlink(missing_ok=True)
            else:
                path.write_bytes(old[0])
        for path, tmp in temps.items():
            if path not in done:
                Path(tmp).unlink(missing_ok=True)
        raise


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask
