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
    |   +-- WorkerFormatError       a 2xx answer we cannot read (never retried)
    |       +-- WorkerEmptyAnswer   a 2xx answer with no text (retried once)
    +-- EditError                   worker output that cannot become edits
    |   +-- NoMatch                 a SEARCH text found nowhere (quotes the closest lines)
    |   +-- Ambiguous               a SEARCH text found in several places
    |   +-- UnsafePath              a path outside the workspace, under .git/, or denied
    +-- CheckpointError             a checkpoint could not be taken or restored
    +-- EpisodeFormatError          an episode record this version cannot read
    +-- BudgetExceeded              calls, cost, time or iterations spent (a clean stop)

Cancellation is ``asyncio.CancelledError``, as everywhere in asyncio.
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
    """No answer in time; worth a retry."""

    retryable = True


class WorkerTransportError(WorkerError):
    """The connection failed or the answer was cut off; worth a retry."""

    retryable = True


class WorkerStatusError(WorkerError):
    """A non-2xx status; 429 and 5xx are retried (honouring Retry-After)."""

    def __init__(
        self, message: str, *, worker: str = "", status: int = 0, retry_after: float | None = None
    ) -> None:
        super().__init__(message, worker=worker)
        self.status = status
        self.retry_after = retry_after
        self.retryable = status == 429 or status >= 500


class WorkerFormatError(WorkerError):
    """A 2xx answer in a shape we cannot read; never retried."""


class WorkerEmptyAnswer(WorkerFormatError):
    """A 2xx answer with no text (``content: null``); retried once, then reported."""

    retryable = True


class EditError(ConductorError):
    """Worker output that cannot be turned into safe edits."""


class NoMatch(EditError):
    """A SEARCH text matches nowhere; the message quotes the closest lines."""


class Ambiguous(EditError):
    """A SEARCH text matches in several places; never a silent pick."""


class UnsafePath(EditError):
    """A path a model named that may not be read or written."""


class CheckpointError(ConductorError):
    """A checkpoint could not be taken or restored; nothing was changed."""


class EpisodeFormatError(ConductorError):
    """An episode record this version cannot read (a newer schema, or damage)."""


class BudgetExceeded(ConductorError):
    """A budget (calls, cost, seconds, iterations) ran out; a clean outcome, not a failure.

    Raised with which budget alone ("calls (1 of 1 made)"): that is ``why``, a result's
    reason beside its outcome ``budget`` (which would read ``budget: budget: calls``
    otherwise); the message adds the ``budget:`` head in this one place."""

    @property
    def why(self) -> str:
        return str(self.args[0]) if self.args else ""

    def __str__(self) -> str:
        return f"budget: {self.why}"
