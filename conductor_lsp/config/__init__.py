"""Configuration: the sections (``schema``), the offline defaults (``defaults``) and the
layered loader (``load``: ``load_config``, also exported by the package itself).

Only the schema is imported here: it is a basic type every layer uses, while the
loader sits above the registries it validates against.
"""

from .schema import (
    BudgetConfig,
    ConductorConfig,
    Config,
    EditsConfig,
    EndpointConfig,
    TestConfig,
    TraceConfig,
    WorkerConfig,
)

__all__ = [
    "BudgetConfig",
    "ConductorConfig",
    "Config",
    "EditsConfig",
    "EndpointConfig",
    "TestConfig",
    "TraceConfig",
    "WorkerConfig",
]
