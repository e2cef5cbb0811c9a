"""What the in-process workers (``local``, ``llama-cpp``) share: the answer decoded in a
thread that a cancelled job stops, and priced like any other."""

from __future__ import annotations

import asyncio
import threading

from ..config.schema import WorkerConfig
from ..local_models import Generation
from ..protocols import WorkerRequest, WorkerResponse
from ..usage import Usage
from .registry import ProviderDefaults


class InProcessWorker(ProviderDefaults):
    """Subclasses set ``config`` and ``_stop`` and implement the blocking ``generate``."""

    config: WorkerConfig
    _stop: threading.Event

    def generate(self, request: WorkerRequest) -> Generation:
        raise NotImplementedError

    def _run(self, request: WorkerRequest) -> WorkerResponse:
        g = self.generate(request)
        usage = Usage(g.input_tokens, g.output_tokens, g.cached_tokens)
        return WorkerResponse(
            text=g.text,
            usage=usage,
            cost=usage.cost(self.config.price_in, self.config.price_out),
            model=self.config.model,
            elapsed=g.seconds,
        )

    async def complete(self, request: WorkerRequest) -> WorkerResponse:
        self._stop.clear()
        try:
            return await asyncio.to_thread(self._run, request)
        except asyncio.CancelledError:
            self._stop.set()
            raise

    async def aclose(self) -> None:
        self._stop.set()
