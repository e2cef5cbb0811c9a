"""Conductor on llama.cpp in this process (``llama-cpp-python``, the ``llama`` extra).

Reads the GGUF as it is (no de-quantizing), decodes under the plan's grammar (llama.cpp's
GBNF reads the same EBNF as xgrammar), and reuses the KV cache of the prompt's unchanged
prefix. Shares a loaded file with ``llama-cpp`` workers that name it.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import ClassVar

from ..config.options import build
from ..config.schema import ConductorConfig
from ..errors import ConfigError
from ..models.base import Decoder, Generation
from ..models.cores import usable_cores
from ..models.hidden import MAX_TOKENS, model_identity
from ..models.llama import LlamaEngineOptions, LlamaModel, llama_available
from ..protocols import Check, WorkerInfo
from ..task import Task
from ..version import extra
from .decoding import DecodingOptions
from .grammar import plan_grammar, worst_case_tokens
from .in_process import InProcessConductor
from .prompt import build_prompt


@dataclass
class LlamaOptions(DecodingOptions, LlamaEngineOptions):
    """llama-cpp: how the plan is decoded, the context and the cores."""


class LlamaCppConductor(InProcessConductor):
    name = "llama-cpp"
    Options = LlamaOptions
    local: ClassVar[bool] = True
    asks_model: ClassVar[bool] = True

    @classmethod
    def doctor(cls, config: ConductorConfig) -> Check:
        if not llama_available():
            return "no", f"{extra('llama')} (builds llama.cpp: minutes)"
        return "ok", f"llama.cpp in process, the free of {usable_cores()} cores, GBNF grammar"

    def __init__(self, config: ConductorConfig) -> None:
        if not config.model:
            raise ConfigError("conductor.model must name a GGUF file")
        self.config = config
        self.options = build(LlamaOptions, config.options, "conductor", "backend llama-cpp")
        self._model: LlamaModel | None = None
        self.decoder = Decoder()

    def load(self) -> LlamaModel:
        if self._model is None:
            self._model = LlamaModel.get(
                self.config.model, self.options.n_ctx, self.options.threads
            )
        return self._model

    def embed(self, text: str) -> list[float]:
        return self.load().hidden_state(text, MAX_TOKENS)

    def model_identity(self) -> str:
        return model_identity(self.config.model)

    def generate(self, task: Task, workers: Sequence[WorkerInfo], max_steps: int) -> Generation:
        """Blocking: load, prompt, decode under the grammar. Runs in a worker thread."""
        model = self.load()
        prompt = build_prompt(task, workers, max_steps)
        grammar = None
        budget = self.options.max_new_tokens
        if self.options.constrained:
            tools = frozenset(i for i, w in enumerate(workers) if w.is_tool)
            grammar = plan_grammar(len(workers), max_steps, tools)
            budget = max(budget, worst_case_tokens(max_steps))  # never cut a plan short
        return model.chat(
            prompt.system,
            prompt.user,
            max_new_tokens=budget,
            temperature=self.config.temperature,
            grammar=grammar,
            stop=self.decoder.stop,
        )
