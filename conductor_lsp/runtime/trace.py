"""A JSONL trace per job, flushed line by line so a crash still leaves a record."""

from __future__ import annotations

import json
import time
from collections.abc import Iterable
from pathlib import Path
from typing import IO, Any

from ..secrets import Secret, redact
from ..storage.state import ensure_ignored


class Trace:
    def __init__(self, path: Path | None, secrets: Iterable[Secret | None] = ()) -> None:
        self.path = path
        self._secrets = [s for s in secrets if s]
        self._file: IO[str] | None = None
        self._t0 = time.monotonic()
        if path is not None:
            path.parent.mkdir(parents=True, exist_ok=True)
            self._file = path.open("a", encoding="utf-8")

    def write(self, kind: str, **fields: Any) -> None:
        if self._file is None:
            return
        record = {"type": kind, "t": round(time.monotonic() - self._t0, 4), **fields}
        self._file.write(json.dumps(redact(record, self._secrets), default=str) + "\n")
        self._file.flush()

    def close(self) -> None:
        if self._file is not None:
            self._file.close()
            self._file = None


def new_trace_path(root: Path, directory: str, label: str = "job") -> Path:
    stamp = time.strftime("%Y%m%d-%H%M%S")
    base = root / directory
    base.mkdir(parents=True, exist_ok=True)
    ensure_ignored(base, root)
    n = 0
    while True:
        path = base / f"{stamp}-{label}-{n}.jsonl"
        if not path.exists():
            return path
        n += 1
