"""Conductor on mlx-lm: Apple silicon first; mlx's CPU build also runs on Linux.

Same prompt and parser as the transformers backend. The model is an MLX (or
plain Hugging Face safetensors) directory; GGUF files are not read by mlx-lm.
"""

from __future__ import annotations

import asyncio
import platform
from collections.abc import Sequence
from pathlib import Path
from typing import Any, ClassVar

from ..config.schema import ConductorConfig
from ..errors import BackendUnavailable, ConfigError
from ..plan import Plan
from ..protocols import Check, WorkerInfo
from ..task import Task
from ..workers.local_model import has_module
from .parse import parse_for_workers
from .prompt import build_prompt


def import_mlx_lm() -> Any:
    try:
        import mlx_lm
    except ImportError as e:
        where = "Apple silicon" if platform.machine() == "arm64" else f"{platform.machine()}"
        raise BackendUnavailable(
            f"the mlx backend needs mlx-lm (on {where}: pip install 'conductor-lsp[mlx]'; "
            "on Linux x86-64: pip install 'mlx[cpu]' mlx-lm)"
        ) from e
    return mlx_lm


class MLXConductor:
    name = "mlx"
    local: ClassVar[bool] = True

    @classmethod
    def doctor(cls, config: ConductorConfig) -> Check:
        if has_module("mlx_lm"):
            return "ok", platform.machine()
        return "no", "pip install mlx-lm (Apple silicon) or 'mlx[cpu]' mlx-lm"

    def __init__(self, config: ConductorConfig) -> None:
        path = Path(config.model).expanduser()
        if not config.model or not path.is_dir():
            raise ConfigError(
                "conductor.model must be an MLX or safetensors model directory for the mlx backend"
            )
        self.config = config
        self._loaded: tuple[Any, Any] | None = None

    def load(self) -> tuple[Any, Any]:
        if self._loaded is None:
            mlx_lm = import_mlx_lm()
            model, tokenizer = mlx_lm.load(str(Path(self.config.model).expanduser()))[:2]
            self._loaded = (model, tokenizer)
        return self._loaded

    def generate_text(self, task: Task, workers: Sequence[WorkerInfo], max_steps: int) -> str:
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
        kw: dict[str, Any] = {}
        if self.config.temperature > 0:
            from mlx_lm.sample_utils import make_sampler

            kw["sampler"] = make_sampler(temp=self.config.temperature)
        return str(
            mlx_lm.generate(
                model, tokenizer, prompt=text, max_tokens=self.config.max_new_tokens, **kw
            )
        )

    async def plan(self, task: Task, workers: Sequence[WorkerInfo], max_steps: int) -> Plan:
        text = await asyncio.to_thread(self.generate_text, task, workers, max_steps)
        return parse_for_workers(text, workers, max_steps=max_steps, source=self.name)

    async def aclose(self) -> None:
        return None
