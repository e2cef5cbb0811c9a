"""Conductor on mlx-lm: Apple silicon first; mlx's CPU build also runs on Linux.

Same prompt, grammar (xgrammar's mask as an mlx logits processor) and parser as
the transformers backend. The model is an MLX (or plain Hugging Face safetensors)
directory; GGUF files are not read by mlx-lm.
"""

from __future__ import annotations

import platform
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any, ClassVar

from ..config.options import build
from ..config.schema import ConductorConfig
from ..errors import BackendUnavailable, ConfigError
from ..models.base import Decoder, Generation, has_module
from ..models.hidden import MAX_TOKENS, model_identity
from ..protocols import Check, WorkerInfo
from ..task import Task
from ..version import extra
from .decoding import DecodingOptions
from .grammar import plan_grammar, worst_case_tokens
from .in_process import InProcessConductor
from .prompt import build_prompt


def import_mlx_lm() -> Any:
    try:
        import mlx_lm
    except ImportError as e:
        where = "Apple silicon" if platform.machine() == "arm64" else f"{platform.machine()}"
        raise BackendUnavailable(
            f"the mlx backend needs mlx-lm (on {where}: {extra('mlx')}; "
            "on Linux x86-64: pip install 'mlx[cpu]' mlx-lm)"
        ) from e
    return mlx_lm


class _Grammar:
    """xgrammar's token mask as an mlx-lm logits processor: decoding stays a valid plan."""

    def __init__(self, compiled: Any, prompt_len: int) -> None:
        import xgrammar as xgr

        self.xgr = xgr
        self.matcher = xgr.GrammarMatcher(compiled)
        self.vocab = compiled.tokenizer_info.vocab_size
        self.mask = xgr.allocate_token_bitmask(1, self.vocab)
        self.seen = prompt_len

    def __call__(self, tokens: Any, logits: Any) -> Any:
        import mlx.core as mx
        from xgrammar.kernels.apply_token_bitmask_mlx import apply_token_bitmask_mlx

        for t in tokens.tolist()[self.seen :]:
            self.matcher.accept_token(int(t))
        self.seen = tokens.size
        if self.matcher.is_terminated():
            return logits
        self.matcher.fill_next_token_bitmask(self.mask)
        return apply_token_bitmask_mlx(mx.array(self.mask.numpy()), logits, self.vocab)


class MLXConductor(InProcessConductor):
    name = "mlx"
    Options = DecodingOptions
    local: ClassVar[bool] = True
    asks_model: ClassVar[bool] = True

    @classmethod
    def doctor(cls, config: ConductorConfig) -> Check:
        if not has_module("mlx_lm"):
            return "no", "pip install mlx-lm (Apple silicon) or 'mlx[cpu]' mlx-lm"
        grammar = "grammar-constrained" if has_module("xgrammar") else "no xgrammar: unconstrained"
        return "ok", f"{platform.machine()}, {grammar}"

    def __init__(self, config: ConductorConfig) -> None:
        path = Path(config.model).expanduser()
        if not config.model or not path.is_dir():
            raise ConfigError(
                "conductor.model must be an MLX or safetensors model directory for the mlx backend"
            )
        self.config = config
        self.options = build(self.Options, config.options, "conductor", "backend mlx")
        self._loaded: tuple[Any, Any] | None = None
        self._grammars: dict[tuple[int, int, frozenset[int]], Any] = {}
        self.decoder = Decoder()

    def load(self) -> tuple[Any, Any]:
        if self._loaded is None:
            mlx_lm = import_mlx_lm()
            model, tokenizer = mlx_lm.load(str(Path(self.config.model).expanduser()))[:2]
            self._loaded = (model, tokenizer)
        return self._loaded

    def embed(self, text: str) -> list[float]:
        """The last layer's state (before the head) averaged over the text's tokens."""
        import mlx.core as mx

        model, tokenizer = self.load()
        ids = list(tokenizer.encode(text))[:MAX_TOKENS] or [0]
        states = model.model(mx.array([ids]))
        mean: Any = mx.mean(states[0], axis=0).tolist()
        return [float(x) for x in mean]

    def model_identity(self) -> str:
        return model_identity(self.config.model)

    def _compiled(self, tokenizer: Any, key: tuple[int, int, frozenset[int]]) -> Any | None:
        if not self.options.constrained or not has_module("xgrammar"):
            return None
        if key not in self._grammars:
            import xgrammar as xgr

            hf = getattr(tokenizer, "_tokenizer", tokenizer)  # mlx-lm wraps the HF tokenizer
            info = xgr.TokenizerInfo.from_huggingface(hf, vocab_size=self._vocab_size())
            self._grammars[key] = xgr.GrammarCompiler(info).compile_grammar(plan_grammar(*key))
        return self._grammars[key]

    def _vocab_size(self) -> int:
        model, tokenizer = self.load()
        args = getattr(model, "args", None)
        size = getattr(args, "vocab_size", 0) or 0
        return max(int(size), len(getattr(tokenizer, "_tokenizer", tokenizer)))

    def generate(self, task: Task, workers: Sequence[WorkerInfo], max_steps: int) -> Generation:
        """Blocking: prompt and decode (constrained when xgrammar is there)."""
        mlx_lm = import_mlx_lm()
        model, tokenizer = self.load()
        prompt = build_prompt(task, workers, max_steps)
        msgs = [
            {"role": "system", "content": prompt.system},
            {"role": "user", "content": prompt.user},
        ]
        if getattr(tokenizer, "chat_template", None):
            text = tokenizer.apply_chat_template(msgs, tokenize=False, add_generation_prompt=True)
        else:
            text = f"{prompt.system}\n\nUser:\n{prompt.user}\n\nAssistant:\n"
        ids = list(tokenizer.encode(text))
        tools = frozenset(i for i, w in enumerate(workers) if w.is_tool)
        compiled = self._compiled(tokenizer, (len(workers), max_steps, tools))
        kw: dict[str, Any] = {}
        budget = self.options.max_new_tokens
        if compiled is not None:
            kw["logits_processors"] = [_Grammar(compiled, len(ids))]
            budget = max(budget, worst_case_tokens(max_steps))
        if self.config.temperature > 0:
            from mlx_lm.sample_utils import make_sampler

            kw["sampler"] = make_sampler(temp=self.config.temperature)
        started = time.monotonic()
        first = 0.0
        pieces: list[str] = []
        out_tokens = 0
        for r in mlx_lm.stream_generate(model, tokenizer, prompt=ids, max_tokens=budget, **kw):
            first = first or time.monotonic()
            pieces.append(r.text)
            out_tokens = r.generation_tokens
            if self.decoder.stop.is_set():
                break
        now = time.monotonic()
        return Generation(
            text="".join(pieces),
            input_tokens=len(ids),
            output_tokens=out_tokens,
            cached_tokens=0,
            seconds=now - started,
            first_token_seconds=(first or now) - started,
        )
