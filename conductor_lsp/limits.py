"""Live limits shared by the workers of one pool: semaphores, so not a protocol but state."""

from __future__ import annotations

import asyncio


class Limits:
    """Per-endpoint concurrency limits shared by the workers of one pool."""

    def __init__(self) -> None:
        self._sems: dict[tuple[str, str], asyncio.Semaphore] = {}

    def for_endpoint(self, provider: str, base_url: str, size: int) -> asyncio.Semaphore:
        key = (provider, base_url)
        if key not in self._sems:
            self._sems[key] = asyncio.Semaphore(size)
        return self._sems[key]
