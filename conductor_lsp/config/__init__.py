"""The configuration's schema: one dataclass per section, plain values every layer uses.

Loading, layering, defaults and validation live in ``configure``, a layer above the
registries it validates against.
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
