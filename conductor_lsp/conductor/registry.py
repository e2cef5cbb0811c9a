"""Conductor backends by name. Adding one is a new module plus one line here (or a call
to ``BACKENDS.register`` from outside the package)."""

from __future__ import annotations

from ..config.schema import ConductorConfig
from ..protocols import Conductor, ConductorClass
from ..registry import Registry

BACKENDS: Registry[ConductorClass] = Registry(
    "conductor backend",
    {
        "static": "conductor_lsp.conductor.static:StaticConductor",
        "pipeline": "conductor_lsp.conductor.static:PipelineConductor",
        "transformers": "conductor_lsp.conductor.transformers:TransformersConductor",
        "mlx": "conductor_lsp.conductor.mlx:MLXConductor",
        "openai": "conductor_lsp.conductor.openai:OpenAIConductor",
    },
)
#: Not a backend: resolved to one of the above when the configuration is loaded.
AUTO = "auto"


def backend_class(name: str) -> ConductorClass:
    return BACKENDS.get(name)


def make_conductor(config: ConductorConfig) -> Conductor:
    """Build the configured backend; heavy imports happen only for the one chosen."""
    return backend_class(config.backend)(config)
