"""Conductor backends by name. Adding one is a new module plus one line here (or a call
to ``BACKENDS.register`` from outside the package)."""

from __future__ import annotations

from ..config.schema import ConductorConfig, SearchConfig
from ..protocols import Conductor, ConductorClass
from ..registry import Registry

BACKENDS: Registry[ConductorClass] = Registry(
    "conductor backend",
    {
        "static": "conductor_lsp.conductor.static:StaticConductor",
        "search": "conductor_lsp.conductor.search:SearchConductor",
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


def make_conductor(config: ConductorConfig, search: SearchConfig | None = None) -> Conductor:
    """Build the configured backend; heavy imports happen only for the one chosen. A backend
    that declares ``uses_search`` also gets the ``[search]`` section."""
    cls = backend_class(config.backend)
    if search is not None and getattr(cls, "uses_search", False):
        return cls(config, search=search)  # type: ignore[call-arg]
    return cls(config)
