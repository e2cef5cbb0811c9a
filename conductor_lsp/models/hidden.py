"""A local model's reading of a text: its last hidden state, averaged over the tokens.

A routing policy uses it as the task's features when the conductor runs a model in this
process (``protocols.Embedder``). Each engine computes it its own way; what they share
lives here: which weights produced a state (a policy fitted on one model's states means
nothing to another's), and how many tokens of a brief are read.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from pathlib import Path

#: A brief's first tokens are read (what to do, the files, the first failures).
MAX_TOKENS = 512


def model_identity(model: str, adapter: str = "") -> str:
    """The model's file or folder name and its size in bytes (and the adapter's): cheap
    to compute on every load, and it changes when the weights do (hashing a 1 GB GGUF
    on every start would not be)."""
    out = _one(model)
    return f"{out}+{_one(adapter)}" if adapter else out


def _one(path: str) -> str:
    p = Path(path).expanduser()
    if p.is_file():
        return f"{p.name}:{p.stat().st_size}"
    if p.is_dir():
        size = sum(
            f.stat().st_size
            for f in p.rglob("*")
            if f.is_file() and f.suffix in {".safetensors", ".gguf", ".bin", ".npz"}
        )
        return f"{p.name}:{size}"
    return p.name


def mean_vector(rows: Sequence[Sequence[float]]) -> list[float]:
    """The element-wise mean: per-token states into one (an engine that hands back every
    token's), or briefs' states into the centre a policy's bits are cut around."""
    if not rows:
        raise ValueError("no states to average")
    n = len(rows)
    return [math.fsum(col) / n for col in zip(*rows, strict=True)]
