"""A worker in this process, on the same loader as the transformers conductor."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Callable

from ..config import WorkerConfig
from ..errors import ConfigError
from ..local_model import LocalModel
from ..protocols import WorkerRequest, WorkerResponse
from ..usage import Usage


class LocalWorker:
    def __init__(self, name: str, config: WorkerConfig) -> None:
        if not config.model:
            raise ConfigError(f"workers.{name}.model must name a GGUF file or model directory")
        self.name = name
        self.config = config
        self._stop = threading.Event()

    def _run(self, request: WorkerRequest) -> WorkerResponse:
        model = LocalModel.get(self.config.model, self.config.device)
        ids, prefix = model.encode_chat(request.system, request.prompt_text())
        g = model.generate(
            ids,
            prefix_len=prefix,
            max_new_tokens=self.config.max_tokens,
            temperature=max(self.config.temperature, 0.0),
            stop=self._stop,
        )
        usage = Usage(g.input_tokens, g.output_tokens, g.cached_tokens)
        return WorkerResponse(
            text=g.text,
            usage=usage,
            cost=usage.cost(self.config.price_in, self.config.price_out),
            model=self.config.model,
            elapsed=g.seconds,
        )

    async def complete(
        self, request: WorkerRequest, on_text: Callable[[str], None] | None = None
    ) -> WorkerResponse:
        self._stop.clear()
        try:
            resp = await asyncio.to_thread(self._run, request)
        except asyncio.CancelledError:
            self._stop.set()
            raise
        if on_text:
            on_text(resp.text)
        return resp

    async def aclose(self) -> None:
        self._stop.set()
