"""What the in-process backends (transformers, llama-cpp, mlx) share: the plan decoded in a
thread that a cancelled job stops (``models.base.Decoder``), then the untrusted text
parsed off the event loop too, and the call priced."""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from typing import ClassVar

from ..config.schema import ConductorConfig
from ..models.base import Decoder, Generation
from ..plan import ConductorCall, Plan
from ..protocols import WorkerInfo
from ..task import Task
from ..usage import Usage
from .output import plan_from_output


class InProcessConductor:
    """Subclasses set ``name`` and ``config`` and implement the blocking ``generate``,
    which passes ``self.decoder.stop`` to its engine."""

    name: ClassVar[str]
    uses_search: ClassVar[bool] = False
    config: ConductorConfig
    decoder: Decoder

    def generate(self, task: Task, workers: Sequence[WorkerInfo], max_steps: int) -> Generation:
        raise NotImplementedError

    async def plan(self, task: Task, workers: Sequence[WorkerInfo], max_steps: int) -> Plan:
        source, config = self.name, self.config
        g = await self.decoder.decode(lambda: self.generate(task, workers, max_steps))
        usage = Usage(g.input_tokens, g.output_tokens, g.cached_tokens)
        call = ConductorCall(
            usage, usage.cost(config.price_in, config.price_out), g.seconds, source
        )
        return await asyncio.to_thread(
            plan_from_output, g.text, workers, max_steps=max_steps, source=source, call=call
        )

    async def aclose(self) -> None:
        await self.decoder.aclose()
