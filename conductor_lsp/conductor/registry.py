"""Conductor backends by name. A built-in is a module plus one line in the table below; a plugin
is a distribution that declares its class under the ``conductor_lsp.backends`` entry points
(see ``registry``), with no line of this package changed."""

from __future__ import annotations

from ..config.schema import ConductorConfig, SearchConfig
from ..plugins import Registry
from ..protocols import Conductor, ConductorClass

BACKENDS: Registry[ConductorClass] = Registry(
    "conductor backend",
    "conductor_lsp.backends",
    {
        "static": "conductor_lsp.conductor.static:StaticConductor",
        "search": "conductor_lsp.conductor.search:SearchConductor",
        "pipeline": "conductor_lsp.conductor.static:PipelineConductor",
        "transformers": "conductor_lsp.conductor.transformers:TransformersConductor",
        "llama-cpp": "conductor_lsp.conductor.llama_cpp:LlamaCppConductor",
        "mlx": "conductor_lsp.conductor.mlx:MLXConductor",
        "openai": "conductor_lsp.conductor.openai:OpenAIConductor",
    },
    declares=("name", "local", "asks_model", "uses_search"),
)
#: Not a backend: resolved to one of the above when the configuration is loaded.
AUTO = "auto"


def backend_class(name: str) -> ConductorClass:
    return BACKENDS.get(name)


def make_conductor(config: ConductorConfig, search: SearchConfig | None = None) -> Conductor:
    """Build the configured backend; heavy imports happen only for the one chosen. A backend
    whose class declares ``uses_search`` true also gets the ``[search]`` section."""
    cls = backend_class(config.backend)
    if search is not None and cls.uses_search:
        return cls(config, search=search)  # type: ignore[call-arg]
    return cls(config)
