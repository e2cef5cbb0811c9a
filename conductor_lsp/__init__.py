"""conductor-lsp: a conducted team of coding models behind your editor.

The public API, for scripts, benchmarks and tests; the layers behind it are
``config``, ``conductor``, ``workers``, ``runtime``, ``edits``, ``fix``, ``cli``
and ``server`` (``docs/architecture.md`` draws them).
"""

from .conductor.registry import BACKENDS
from .config.schema import ConductorConfig, Config, WorkerConfig
from .configure.load import load_config
from .errors import (
    Ambiguous,
    BackendUnavailable,
    BudgetExceeded,
    CheckpointError,
    ConductorError,
    ConfigError,
    EditError,
    NoMatch,
    PlanError,
    UnsafePath,
    WorkerError,
    WorkerFormatError,
    WorkerStatusError,
    WorkerTimeout,
    WorkerTransportError,
)
from .fix.loop import FixLoop, FixReport
from .plan import Plan, Step
from .protocols import Conductor, Worker, WorkerInfo, WorkerRequest, WorkerResponse
from .runtime.events import Event
from .runtime.results import RunResult, StepResult
from .runtime.session import Session
from .task import FileContext, Task
from .testrun import TestRun, run_tests
from .usage import Tally, Usage
from .version import __version__
from .workers.registry import PROVIDERS

__all__ = [
    "BACKENDS",
    "PROVIDERS",
    "Ambiguous",
    "BackendUnavailable",
    "BudgetExceeded",
    "CheckpointError",
    "Conductor",
    "ConductorConfig",
    "ConductorError",
    "Config",
    "ConfigError",
    "EditError",
    "Event",
    "FileContext",
    "FixLoop",
    "FixReport",
    "NoMatch",
    "Plan",
    "PlanError",
    "RunResult",
    "Session",
    "Step",
    "StepResult",
    "Tally",
    "Task",
    "TestRun",
    "UnsafePath",
    "Usage",
    "Worker",
    "WorkerConfig",
    "WorkerError",
    "WorkerFormatError",
    "WorkerInfo",
    "WorkerRequest",
    "WorkerResponse",
    "WorkerStatusError",
    "WorkerTimeout",
    "WorkerTransportError",
    "__version__",
    "load_config",
    "run_tests",
]
