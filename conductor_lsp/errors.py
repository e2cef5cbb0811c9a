"""One exception tree for everything conductor-lsp raises on purpose.

Callers catch ``ConductorError`` at a boundary (CLI, LSP handler, loop) and
show its message; everything below raises the most specific class::

    ConductorError
    +-- ConfigError                 bad or missing configuration (names the key)
    +-- PlanError                   conductor output that is not a valid plan
    +-- BackendUnavailable          a conductor/worker backend cannot run here
    +-- WorkerError                 a worker call failed (carries the worker name)
    |   +-- WorkerTimeout           no answer in time
    |   +-- WorkerTransportError    connect/read failure, cut-off response
    |   +-- WorkerStatusError       non-2xx HTTP status (carries status)
    |   +-- WorkerFormatError       a 2xx answer we cannot read
    +-- EditError                   worker output that cannot become edits
    |   +-- NoMatch / Ambiguous / UnsafePath / StaleDocument
    +-- BudgetExceeded              calls, cost, time or iterations spent
    +-- JobCancelled                the user (or editor) cancelled the job
"""

from __future__ import annotations


class ConductorError(Exception):
    """Root of every error conductor-lsp raises deliberately."""


class ConfigError(ConductorError):
    """Configuration is wrong; the message names the offending key."""


class PlanError(ConductorError):
    """The conductor's output is not a usable plan."""


class BackendUnavailable(ConductorError):
    """A backend cannot run on this machine (missing package, hardware, key)."""


class WorkerError(ConductorError):
    """A worker call failed; ``worker`` names the configured worker."""

    retryable: bool = False

    def __init__(self, message: str, *, worker: str = "") -> None:
        super().__init__(f"{worker}: {message}" if worker else message)
        self.worker = worker


class WorkerTimeout(WorkerError):
    retryable = True


class WorkerTransportError(WorkerError):
    retryable = True


class WorkerStatusError(WorkerError):
    def __init__(
        self, message: str, *, worker: str = "", status: int = 0, retry_after: float | None = None
    ) -> None:
        super().__init__(message, worker=worker)
        self.status = status
        self.retry_after = retry_after
        self.retryable = status == 429 or status >= 500


class WorkerFormatError(WorkerError):
    pass


class EditError(ConductorError):
    """Worker output that cannot be turned into safe edits."""


class NoMatch(EditError):
    pass


class Ambiguous(EditError):
    pass


class UnsafePath(EditError):
    pass


class StaleDocument(EditError):
    pass


class BudgetExceeded(ConductorError):
    """A budget (calls, cost, seconds, iterations) ran out; a clean outcome."""


class JobCancelled(ConductorError):
    """The job was cancelled by its owner."""
