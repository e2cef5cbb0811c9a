"""A worker on llama.cpp in this process (``llama-cpp-python``, the ``llama`` extra): the
GGUF decoded as it is, several times faster on a CPU than the de-quantized ``local``
worker; shares a loaded file with the ``llama-cpp`` conductor."""

from __future__ import annotations

from dataclasses import replace
from typing import ClassVar

from ..answers import AnswerWatch
from ..config.options import build
from ..config.schema import Config, WorkerConfig
from ..errors import ConfigError
from ..models.base import Decoder, Generation
from ..models.cores import usable_cores
from ..models.llama import LlamaEngineOptions, LlamaModel, llama_available
from ..protocols import Check, WorkerContext, WorkerRequest
from ..version import extra
from .in_process import InProcessWorker


class LlamaCppWorker(InProcessWorker):
    default_description: ClassVar[str] = "a GGUF model in this process (llama.cpp)"
    Options = LlamaEngineOptions

    def __init__(
        self, name: str, config: WorkerConfig, context: WorkerContext | None = None
    ) -> None:
        if not config.model:
            raise ConfigError(f"workers.{name}.model must name a GGUF file")
        self.name = name
        self.options = build(
            LlamaEngineOptions, config.options, f"workers.{name}", "provider llama-cpp"
        )
        # The window is the one this process gives the model, unless the user says less.
        self.config = replace(config, context=config.context or self.options.n_ctx)
        self.decoder = Decoder()

    @classmethod
    def doctor(cls, name: str, config: WorkerConfig, full: Config) -> Check:
        if not llama_available():
            return "no", f"{extra('llama')} (builds llama.cpp: minutes)"
        return "ok", f"llama.cpp in process, the free of {usable_cores()} cores: {config.model}"

    def count_tokens(self, request: WorkerRequest) -> int | None:
        """The request's tokens, counted by the model once it is loaded (None before)."""
        model = LlamaModel.peek(self.config.model, self.options.n_ctx, self.options.threads)
        return model.count(request.system, request.prompt_text()) if model else None

    def generate(self, request: WorkerRequest, watch: AnswerWatch) -> Generation:
        model = LlamaModel.get(self.config.model, self.options.n_ctx, self.options.threads)
        return model.chat(
            request.system,
            request.prompt_text(),
            max_new_tokens=self.config.max_tokens,
            temperature=max(request.temperature_for(self.config.temperature), 0.0),
            stop=self.decoder.stop,
            watch=watch,
        )
