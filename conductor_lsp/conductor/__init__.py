"""Conductor backends, looked up by the short name in ``conductor.backend``."""

from __future__ import annotations

from ..config import Config
from ..protocols import Conductor
from .static import StaticConductor, static_plan


def make_conductor(config: Config) -> Conductor:
    """Build the configured backend; heavy imports happen only for the one chosen."""
    backend = config.conductor.backend
    if backend == "transformers":
        from .transformers_backend import TransformersConductor

        return TransformersConductor(config.conductor)
    if backend == "mlx":
        from .mlx_backend import MLXConductor

        return MLXConductor(config.conductor)
    if backend == "openai":
        from .openai_backend import OpenAIConductor

        return OpenAIConductor(config.conductor)
    return StaticConductor()


__all__ = ["StaticConductor", "make_conductor", "static_plan"]
