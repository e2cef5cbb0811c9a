"""What the in-process backends (transformers, mlx) share: decoding in a thread that a
cancelled job stops, then parsing the untrusted text off the event loop too."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Sequence
from typing import ClassVar

from ..config.schema import ConductorConfig
from ..local_models import Generation
from ..plan import ConductorCall, Plan
from ..protocols import WorkerInfo
from ..task import Task
from ..usage import Usage
from .parse import plan_from_output


class InProcessConductor:
    """What the in-process backends share: ``plan`` decodes in a thread (stoppable when
    the job is cancelled or the backend closed), then parses the untrusted text off the
    event loop too, and prices the call. Subclasses set ``name``, ``config`` and
    ``_stop``, and implement the blocking ``generate``."""

    name: ClassVar[str]
    config: ConductorConfig
    _stop: threading.Event

    def generate(self, task: Task, workers: Sequence[WorkerInfo], max_steps: int) -> Generation:
        raise NotImplementedError

    async def plan(self, task: Task, workers: Sequence[WorkerInfo], max_steps: int) -> Plan:
        source, config = self.name, self.config
        self._stop.clear()
        try:
            g = await asyncio.to_thread(self.generate, task, workers, max_steps)
        except asyncio.CancelledError:
            self._stop.set()
            raise
        usage = Usage(g.input_tokens, g.output_tokens, g.cached_tokens)
        call = ConductorCall(
            usage, usage.cost(config.price_in, config.price_out), g.seconds, source
        )
        return await asyncio.to_thread(
            plan_from_output, g.text, workers, max_steps=max_steps, source=source, call=call
        )

    async def aclose(self) -> None:
        self._stop.set()
