"""A worker on llama.cpp in this process (``llama-cpp-python``, the ``llama`` extra): the
GGUF decoded as it is, several times faster on a CPU than the de-quantized ``local``
worker; shares a loaded file with the ``llama-cpp`` conductor."""

from __future__ import annotations

import asyncio
import threading
from dataclasses import dataclass
from typing import ClassVar

from ..config.schema import Config, WorkerConfig
from ..errors import ConfigError
from ..llama_models import LlamaModel, default_threads, llama_available
from ..options import build
from ..protocols import Check, WorkerContext, WorkerRequest, WorkerResponse
from ..usage import Usage
from .registry import ProviderDefaults


@dataclass
class LlamaWorkerOptions:
    n_ctx: int = 8192
    """Context length in tokens (prompt and answer)."""
    threads: int = 0
    """CPU threads; 0: every core this process may use."""

    def check(self) -> None:
        if self.n_ctx < 256 or self.threads < 0:
            raise ConfigError("n_ctx must be at least 256 and threads at least 0")


class LlamaCppWorker(ProviderDefaults):
    default_description: ClassVar[str] = "a GGUF model in this process (llama.cpp)"
    Options = LlamaWorkerOptions

    def __init__(
        self, name: str, config: WorkerConfig, context: WorkerContext | None = None
    ) -> None:
        if not config.model:
            raise ConfigError(f"workers.{name}.model must name a GGUF file")
        self.name = name
        self.config = config
        self.options = build(
            LlamaWorkerOptions, config.options, f"workers.{name}", "provider llama-cpp"
        )
        self._stop = threading.Event()

    @classmethod
    def doctor(cls, name: str, config: WorkerConfig, full: Config) -> Check:
        if not llama_available():
            return "no", "pip install 'conductor-lsp[llama]' (builds llama.cpp: minutes)"
        return "ok", f"llama.cpp in process, {default_threads()} threads: {config.model}"

    def _run(self, request: WorkerRequest) -> WorkerResponse:
        model = LlamaModel.get(self.config.model, self.options.n_ctx, self.options.threads)
        g = model.chat(
            request.system,
            request.prompt_text(),
            max_new_tokens=self.config.max_tokens,
            temperature=max(request.temperature_for(self.config.temperature), 0.0),
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

    async def complete(self, request: WorkerRequest) -> WorkerResponse:
        self._stop.clear()
        try:
            return await asyncio.to_thread(self._run, request)
        except asyncio.CancelledError:
            self._stop.set()
            raise

    async def aclose(self) -> None:
        self._stop.set()
