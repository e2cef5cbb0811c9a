"""What every in-process engine shares: the answer it hands back, whether a package is
installed, one copy of each loaded model per process, and decoding in a thread that a
cancelled job stops between two tokens."""

from __future__ import annotations

import asyncio
import importlib.util
import threading
from collections.abc import Callable, Hashable
from dataclasses import dataclass
from typing import Generic, TypeVar

T = TypeVar("T")


def has_module(name: str) -> bool:
    """Whether a package is installed, without importing it (torch takes seconds)."""
    try:
        return importlib.util.find_spec(name) is not None
    except (ImportError, ValueError):
        return False


@dataclass(frozen=True)
class Generation:
    """One decoded answer and what it took."""

    text: str
    input_tokens: int
    output_tokens: int
    cached_tokens: int
    seconds: float
    first_token_seconds: float
    #: Why the watch stopped it ('' when the model ended it, or ran to max tokens).
    cut: str = ""


class LoadOnce(Generic[T]):
    """One copy of each model per process, by key: loading is slow and memory-heavy, and
    the conductor and the workers that name the same file share it."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._loaded: dict[Hashable, T] = {}

    def keys(self) -> list[Hashable]:
        with self._lock:
            return list(self._loaded)

    def peek(self, key: Hashable) -> T | None:
        """The loaded copy, or None: never loads (a caller that must not wait)."""
        with self._lock:
            return self._loaded.get(key)

    def get(self, key: Hashable, load: Callable[[], T]) -> T:
        with self._lock:
            if key not in self._loaded:
                self._loaded[key] = load()
            return self._loaded[key]


class Decoder:
    """Decoding off the event loop: ``decode`` runs a blocking generation in a thread and,
    when the job is cancelled, sets ``stop`` so the engine ends between two tokens (the
    thread itself cannot be killed). ``aclose`` stops a decode still running."""

    def __init__(self) -> None:
        self.stop = threading.Event()

    async def decode(self, generate: Callable[[], T]) -> T:
        self.stop.clear()
        try:
            return await asyncio.to_thread(generate)
        except asyncio.CancelledError:
            self.stop.set()
            raise

    async def aclose(self) -> None:
        self.stop.set()
