"""A worker in this process, on the same loader as the transformers conductor."""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from ..answers import AnswerWatch
from ..config.options import build
from ..config.schema import Config, WorkerConfig
from ..errors import ConfigError
from ..models.base import Decoder, Generation
from ..models.cores import ThreadOptions
from ..models.transformers import LocalModel, check_quantize, local_models_available
from ..protocols import Check, WorkerContext, WorkerRequest
from ..version import extra
from .in_process import InProcessWorker


@dataclass
class LocalOptions(ThreadOptions):
    device: str = "auto"
    """auto, cpu, cuda or mps."""
    quantize: str = "auto"
    """auto (int8 on the CPU), none, or int8: the linear layers as dynamic int8 (1.8x the
    tokens/s of float32 on a CPU)."""

    def check(self) -> None:
        self.check_threads()
        check_quantize(self.quantize)


class LocalWorker(InProcessWorker):
    default_description: ClassVar[str] = "a model in this process"
    Options = LocalOptions

    def __init__(
        self, name: str, config: WorkerConfig, context: WorkerContext | None = None
    ) -> None:
        if not config.model:
            raise ConfigError(f"workers.{name}.model must name a GGUF file or model directory")
        self.name = name
        self.config = config
        self.options = build(LocalOptions, config.options, f"workers.{name}", "provider local")
        self.decoder = Decoder()

    @classmethod
    def doctor(cls, name: str, config: WorkerConfig, full: Config) -> Check:
        ok = local_models_available()
        detail = config.model if ok else f"torch==2.13.0 first, then {extra('local')}"
        return ("ok" if ok else "no"), f"local: {detail}"

    def count_tokens(self, request: WorkerRequest) -> int | None:
        """The request's tokens as the model reads them, template and all, once it is
        loaded (None before: the first request is estimated)."""
        model = LocalModel.peek(
            self.config.model, self.options.device, quantize=self.options.quantize
        )
        return len(model.encode_chat(request.system, request.prompt_text())[0]) if model else None

    def generate(self, request: WorkerRequest, watch: AnswerWatch) -> Generation:
        model = LocalModel.get(
            self.config.model, self.options.device, quantize=self.options.quantize
        )
        ids, prefix = model.encode_chat(request.system, request.prompt_text())
        return model.generate(
            ids,
            prefix_len=prefix,
            max_new_tokens=self.config.max_tokens,
            temperature=max(request.temperature_for(self.config.temperature), 0.0),
            stop=self.decoder.stop,
            threads=self.options.threads,
            watch=watch,
        )
