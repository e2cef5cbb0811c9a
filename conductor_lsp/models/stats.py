"""What the in-process models did in this process: how each loaded, how fast it decoded.

The first job on a machine waits on a model load, so the CLI says what it is waiting for
(listeners get a line as a load starts and ends) and closes with the figures: load
seconds and how (de-quantized, from the weights cache, llama.cpp), tokens and tokens/s.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

_LOCK = threading.Lock()
_LISTENERS: list[Callable[[str], None]] = []


@dataclass
class ModelStats:
    name: str
    engine: str
    how: str = ""
    load_seconds: float = 0.0
    answers: int = 0
    tokens: int = 0
    decode_seconds: float = 0.0

    def line(self) -> str:
        rate = (
            f"; {self.tokens} tokens in {self.answers} answer{'s' if self.answers != 1 else ''} at "
            f"{self.tokens / self.decode_seconds:.1f} tokens/s"
            if self.decode_seconds > 0
            else ""
        )
        return (
            f"{self.name} on {self.engine}: loaded in {self.load_seconds:.1f} s ({self.how}){rate}"
        )


STATS: dict[str, ModelStats] = {}


@contextmanager
def listen(on_line: Callable[[str], None]) -> Iterator[None]:
    """Lines about loads while the block runs (the CLI's progress)."""
    with _LOCK:
        _LISTENERS.append(on_line)
    try:
        yield
    finally:
        with _LOCK:
            _LISTENERS.remove(on_line)


def announce(line: str) -> None:
    with _LOCK:
        listeners = list(_LISTENERS)
    for fn in listeners:
        fn(line)


def loading(path: str, engine: str, note: str = "") -> None:
    """A load starts (``note``: what it will take)."""
    announce(f"loading {Path(path).name} on {engine}{f' ({note})' if note else ''}...")


def loaded(key: str, path: str, engine: str, how: str, seconds: float) -> None:
    with _LOCK:
        STATS[key] = ModelStats(Path(path).name, engine, how, seconds)
    announce(f"loaded {Path(path).name} on {engine} in {seconds:.1f} s ({how})")


def decoded(key: str, tokens: int, seconds: float) -> None:
    with _LOCK:
        s = STATS.get(key)
        if s is not None:
            s.answers += 1
            s.tokens += tokens
            s.decode_seconds += max(seconds, 0.0)


def report() -> list[str]:
    """One line per model loaded in this process."""
    with _LOCK:
        return [s.line() for s in STATS.values()]
