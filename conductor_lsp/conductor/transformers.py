"""Conductor in-process on torch + transformers (CUDA if present, else CPU).

Grammar-constrained decoding uses xgrammar: it compiles the EBNF once per
configuration into a token mask, works as a plain transformers LogitsProcessor,
and (unlike lm-format-enforcer at the time of writing) supports transformers 5.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, ClassVar

from ..config.options import build
from ..config.schema import ConductorConfig
from ..errors import BackendUnavailable, ConfigError
from ..models.base import Decoder, Generation, has_module
from ..models.hidden import MAX_TOKENS, model_identity
from ..models.transformers import LocalModel, local_models_available
from ..protocols import Check, WorkerInfo
from ..task import Task
from ..version import extra
from .decoding import TransformersOptions
from .grammar import plan_grammar, worst_case_tokens
from .in_process import InProcessConductor
from .prompt import build_prompt


class TransformersConductor(InProcessConductor):
    name = "transformers"
    Options = TransformersOptions
    local: ClassVar[bool] = True
    asks_model: ClassVar[bool] = True

    @classmethod
    def doctor(cls, config: ConductorConfig) -> Check:
        if not local_models_available():
            return "no", f"torch==2.13.0 first, then {extra('local')}"
        grammar = "grammar-constrained" if has_module("xgrammar") else "no xgrammar: unconstrained"
        return "ok", f"{_torch_device()}, {grammar}"

    def __init__(self, config: ConductorConfig) -> None:
        if not config.model:
            raise ConfigError("conductor.model must name a GGUF file or a model directory")
        self.config = config
        self.options = build(self.Options, config.options, "conductor", "backend transformers")
        self._model: LocalModel | None = None
        self._grammars: dict[tuple[int, int, frozenset[int]], Any] = {}
        self.decoder = Decoder()

    def load(self) -> LocalModel:
        if self._model is None:
            self._model = LocalModel.get(
                self.config.model, self.options.device, self.options.adapter, self.options.quantize
            )
        return self._model

    def embed(self, text: str) -> list[float]:
        return self.load().hidden_state(text, MAX_TOKENS)

    def model_identity(self) -> str:
        return model_identity(self.config.model, self.options.adapter)

    def _processor(
        self, model: LocalModel, n_workers: int, max_steps: int, tools: frozenset[int] = frozenset()
    ) -> list[Any]:
        if not self.options.constrained:
            return []
        try:
            import xgrammar as xgr
        except ImportError as e:
            raise BackendUnavailable(
                "conductor.constrained needs xgrammar: pip install xgrammar "
                "(or set conductor.constrained = false)"
            ) from e
        key = (n_workers, max_steps, tools)
        if key not in self._grammars:
            vocab = max(model.model.config.vocab_size, len(model.tokenizer))
            info = xgr.TokenizerInfo.from_huggingface(model.tokenizer, vocab_size=vocab)
            compiler = xgr.GrammarCompiler(info)
            self._grammars[key] = compiler.compile_grammar(
                plan_grammar(n_workers, max_steps, tools)
            )
        return [xgr.contrib.hf.LogitsProcessor(self._grammars[key])]

    def generate(self, task: Task, workers: Sequence[WorkerInfo], max_steps: int) -> Generation:
        """Blocking: load, prompt, decode. Runs in a worker thread."""
        model = self.load()
        prompt = build_prompt(task, workers, max_steps)
        ids, prefix_len = model.encode_chat(prompt.system, prompt.user)
        tools = frozenset(i for i, w in enumerate(workers) if w.is_tool)
        processors = self._processor(model, len(workers), max_steps, tools)
        budget = self.options.max_new_tokens
        if processors:  # never cut a constrained plan short
            budget = max(budget, worst_case_tokens(max_steps))
        return model.generate(
            ids,
            prefix_len=prefix_len,
            max_new_tokens=budget,
            temperature=self.config.temperature,
            logits_processors=processors,
            stop=self.decoder.stop,
            threads=self.options.threads,
        )


def _torch_device() -> str:
    import torch

    if torch.cuda.is_available():
        return f"cuda ({torch.cuda.get_device_name(0)})"
    return "cpu"
