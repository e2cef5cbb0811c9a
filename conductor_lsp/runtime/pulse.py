"""Progress that never goes silent: a step's tokens every few seconds while it answers
(``step_ticks``), and a word when nothing else was said for a while (``Heartbeat``: a
model loading, tests running in a sandbox, a conductor thinking).

The CLI, the editor's progress and MCP notifications all render the same events, so
each gets this without doing anything of its own.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import AsyncIterator
from types import TracebackType

from ..answers import TokenFlow
from ..plan import Step
from .events import (
    Event,
    EventSink,
    PlanDone,
    Quiet,
    StepFinished,
    StepWorking,
    describe_event,
)

#: Seconds between two reports of a step that is answering.
TICK = 5.0
#: Seconds of silence before the heartbeat speaks: more than a step's tick, so a step
#: that reports is not talked over.
QUIET_TICKS = 1.5


class Heartbeat:
    """An event sink that passes every event on and, when none came for ``every``
    seconds, says ``Quiet`` with the last thing it saw begin (a step, tests in a
    sandbox; not an end). Use it as ``async with``."""

    def __init__(self, sink: EventSink, every: float | None = None) -> None:
        self.sink = sink
        self.every = TICK * QUIET_TICKS if every is None else every
        #: The last thing seen begin, described only when the heartbeat speaks.
        self.last: Event | None = None
        #: When anything was last said (a Quiet too), and when something other than Quiet.
        self.at = self.said_at = time.monotonic()
        self._task: asyncio.Task[None] | None = None

    def __call__(self, event: Event) -> None:
        self.at = time.monotonic()
        if not isinstance(event, Quiet):
            self.said_at = self.at
        if not isinstance(event, Quiet | PlanDone | StepFinished):  # ends say nothing going on
            self.last = event
        self.sink(event)

    async def __aenter__(self) -> Heartbeat:
        self.at = self.said_at = time.monotonic()
        self._task = asyncio.create_task(self._beat())
        return self

    async def __aexit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        if self._task is not None:
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._task

    async def _beat(self) -> None:
        while True:
            await asyncio.sleep(max(0.1, self.at + self.every - time.monotonic()))
            now = time.monotonic()
            if now - self.at >= self.every:
                self.at = now
                last = describe_event(self.last) if self.last is not None else "started"
                self.sink(Quiet(now - self.said_at, last))


@contextlib.asynccontextmanager
async def heartbeat(sink: EventSink) -> AsyncIterator[EventSink]:
    """``sink`` with a heartbeat, unless it already has one (a fix job's rounds run
    plans under the job's own)."""
    if isinstance(sink, Heartbeat):
        yield sink
        return
    async with Heartbeat(sink) as beat:
        yield beat


async def step_ticks(
    sink: EventSink, index: int, step: Step, flow: TokenFlow, every: float | None = None
) -> None:
    """``StepWorking`` every ``every`` seconds (``TICK``) until cancelled (the call ended)."""
    every = TICK if every is None else every
    started = last_at = time.monotonic()
    last_tokens = 0
    while True:
        await asyncio.sleep(every)
        now, tokens = time.monotonic(), flow.tokens
        rate = (tokens - last_tokens) / (now - last_at) if tokens else 0.0
        sink(StepWorking(index, step, now - started, tokens, rate))
        last_at, last_tokens = now, tokens


__all__ = ["QUIET_TICKS", "TICK", "Heartbeat", "heartbeat", "step_ticks"]
