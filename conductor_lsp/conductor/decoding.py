"""The keys of the backends that decode a plan with a model, declared by each backend as
its ``Options`` (see ``conductor_lsp.options``)."""

from __future__ import annotations

from dataclasses import dataclass

from ..models.cores import ThreadOptions
from ..models.transformers import check_adapter, check_quantize


@dataclass
class DecodingOptions:
    """openai, mlx: how the plan is decoded."""

    constrained: bool = True
    """Constrain decoding to the plan's grammar (local: needs xgrammar) or JSON schema."""
    max_new_tokens: int = 400
    """Most tokens the conductor may write (raised to the grammar's bound when constrained)."""


@dataclass
class TransformersOptions(DecodingOptions, ThreadOptions):
    """transformers: also where the model runs and what is merged into it."""

    device: str = "auto"
    """auto, cpu, cuda or mps."""
    adapter: str = ""
    """A LoRA adapter folder merged into `model` as it loads (needs peft): `train` writes
    one in DIR/adapter, so `model` can stay the base GGUF."""
    quantize: str = "auto"
    """auto (int8 on the CPU), none, or int8: the linear layers as dynamic int8 (1.8x the
    tokens/s of float32 on a CPU)."""

    def check(self) -> None:
        self.check_threads()
        if self.adapter:
            check_adapter(self.adapter)
        check_quantize(self.quantize)
