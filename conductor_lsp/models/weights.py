"""De-quantized GGUF weights, cached as safetensors so that only the first load pays.

transformers reads a GGUF by de-quantizing every tensor to float (about 20 s for
SmolLM2-135M on 2 cores). The result is saved once under the user's cache, in a folder
keyed by the GGUF's content hash and the dtype, with the tokenizer beside it; every
later load maps the safetensors file in. Each entry carries a manifest (sizes and a
checksum of every file), checked on load: a damaged entry is removed and rebuilt, never
loaded.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import tempfile
import threading
import zlib
from pathlib import Path
from typing import Any

from ..storage.cache import cache_home
from ..storage.state import read_json, write_json

MANIFEST = "conductor-lsp-cache.json"
FORMAT = 1
_CHUNK = 1 << 22
_LOCK = threading.Lock()


def cache_root() -> Path:
    """``$CONDUCTOR_LSP_CACHE``, else ``$XDG_CACHE_HOME/conductor-lsp``, else ``~/.cache``."""
    explicit = os.environ.get("CONDUCTOR_LSP_CACHE")
    return Path(explicit).expanduser() if explicit else cache_home()


def file_digest(path: Path) -> str:
    """The file's SHA-256, remembered by (path, size, mtime) so a GGUF is hashed once."""
    st = path.stat()
    key = f"{path.resolve()}:{st.st_size}:{st.st_mtime_ns}"
    index = cache_root() / "digests.json"
    with _LOCK:
        known = _read_json(index)
        if isinstance(known.get(key), str):
            return str(known[key])
        h = hashlib.sha256()
        with path.open("rb") as f:
            while block := f.read(_CHUNK):
                h.update(block)
        known[key] = h.hexdigest()
        write_json(index, known)
        return str(known[key])


def entry_for(gguf: Path, dtype: str) -> Path:
    """Where the de-quantized weights of ``gguf`` in ``dtype`` live."""
    return cache_root() / "weights" / f"{file_digest(gguf)[:32]}-{dtype}"


def _checksum(path: Path) -> str:
    crc = 0
    with path.open("rb") as f:
        while block := f.read(_CHUNK):
            crc = zlib.crc32(block, crc)
    return f"{crc:08x}"


def valid(entry: Path) -> bool:
    """Whether ``entry`` is complete and undamaged: every file of its manifest there, with
    its size and checksum (CRC-32: about 0.3 s for 540 MB)."""
    manifest = _read_json(entry / MANIFEST)
    files = manifest.get("files")
    if manifest.get("format") != FORMAT or not isinstance(files, dict) or not files:
        return False
    for name, (size, crc) in files.items():
        path = entry / name
        try:
            if path.stat().st_size != size or _checksum(path) != crc:
                return False
        except (OSError, TypeError, ValueError):
            return False
    return True


def lookup(gguf: Path, dtype: str) -> Path | None:
    """The valid cache entry for ``gguf``, if any; a damaged one is removed."""
    entry = entry_for(gguf, dtype)
    if not entry.exists():
        return None
    if valid(entry):
        return entry
    shutil.rmtree(entry, ignore_errors=True)
    return None


def store(gguf: Path, dtype: str, model: Any, tokenizer: Any) -> Path:
    """Save a loaded model and its tokenizer as a cache entry, atomically (a folder that
    is renamed into place when complete); returns the entry."""
    entry = entry_for(gguf, dtype)
    entry.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=f".{entry.name}.", dir=entry.parent))
    try:
        model.save_pretrained(str(tmp), safe_serialization=True)
        tokenizer.save_pretrained(str(tmp))
        files = {
            str(p.relative_to(tmp)): [p.stat().st_size, _checksum(p)]
            for p in sorted(tmp.rglob("*"))
            if p.is_file()
        }
        manifest = {"format": FORMAT, "gguf": str(gguf), "dtype": dtype, "files": files}
        (tmp / MANIFEST).write_text(json.dumps(manifest, indent=1), encoding="utf-8")
        shutil.rmtree(entry, ignore_errors=True)
        os.replace(tmp, entry)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    return entry


def _read_json(path: Path) -> dict[str, Any]:
    data = read_json(path)
    return data if isinstance(data, dict) else {}
