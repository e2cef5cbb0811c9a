"""The table of running server jobs: tasks, progress, cancel, and which files each holds.

The editor never waits on a model: a command starts a job and returns its id.
Two jobs never edit the same file at once: a job claims its files up front, and
a job over the whole workspace (the fix loop) claims everything.
"""

from __future__ import annotations

import asyncio
import itertools
import logging
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from lsprotocol import types

from ..jobs import (
    Event,
    FixReport,
    PlanReady,
    StepFinished,
    StepStarted,
    StepWorking,
    describe_event,
)
from .arguments import ReviewArgs

if TYPE_CHECKING:
    from pygls.lsp.server import LanguageServer

log = logging.getLogger("conductor_lsp.server")
WHOLE_WORKSPACE = Path("/")  # the claim of a job that may touch any file


class Progress:
    """Work-done progress when the client supports it, log lines otherwise."""

    def __init__(self, ls: LanguageServer, token: str | None) -> None:
        self.ls = ls
        self.token = token
        self.title = ""
        self.steps_total = 0
        self.steps_done = 0

    @classmethod
    async def create(cls, ls: LanguageServer, job_id: str) -> Progress:
        window = ls.client_capabilities.window
        if not (window and window.work_done_progress):
            return cls(ls, None)
        token = f"conductor-{job_id}"
        try:
            await asyncio.wait_for(ls.work_done_progress.create_async(token), 5)
        except Exception:
            return cls(ls, None)
        return cls(ls, token)

    def begin(self, title: str, message: str = "") -> None:
        self.title = title
        if self.token:
            self.ls.work_done_progress.begin(
                self.token,
                types.WorkDoneProgressBegin(
                    title=title, message=message or None, cancellable=True, percentage=0
                ),
            )

    def report(self, message: str, percentage: int | None = None) -> None:
        if self.token:
            self.ls.work_done_progress.report(
                self.token,
                types.WorkDoneProgressReport(
                    message=message, percentage=percentage, cancellable=True
                ),
            )
        self.ls.window_log_message(types.LogMessageParams(types.MessageType.Log, message))

    def event(self, event: Event) -> None:
        """An engine or loop event as a report, in the words the terminal uses, with the
        share of the plan's steps done."""
        percentage: int | None = None
        if isinstance(event, PlanReady):
            self.steps_total, self.steps_done = len(event.plan.steps), 0
            percentage = 5
        elif isinstance(event, StepFinished):
            self.steps_done += 1
            percentage = self._pct()
        elif isinstance(event, (StepStarted, StepWorking)):
            percentage = self._pct()
        self.report(describe_event(event), percentage)

    def _pct(self) -> int:
        return min(95, 5 + int(90 * self.steps_done / max(1, self.steps_total)))

    def end(self, message: str) -> None:
        if self.token:
            self.ls.work_done_progress.end(self.token, types.WorkDoneProgressEnd(message=message))
        line = f"{self.title}: {message}" if self.title else message
        log.info(line)  # and so to the logFile, if one is set
        self.ls.window_log_message(types.LogMessageParams(types.MessageType.Info, line))


class Undo(Protocol):
    """What undoing a job does: its buffers' texts put back through the editor, or its
    checkpoint restored. Says what it did, or raises ``ConductorError`` saying why not."""

    #: Spent once used (a buffer edit); a checkpoint may be restored again.
    once: bool

    async def __call__(self, title: str) -> str: ...


@dataclass(frozen=True)
class JobEnd:
    outcome: str
    message: str


@dataclass
class ServerJob:
    """A job the editor started: what it holds, how it reports, how it ended, how to undo it."""

    id: str
    kind: str
    title: str
    claims: frozenset[Path]
    task: asyncio.Task[None] | None = None
    progress: Progress | None = None
    end: JobEnd | None = None
    undo: Undo | None = None
    #: The plan report (markdown) that conductor.showPlan opens.
    report: str = ""
    #: A fix's report: its candidates, for Show Candidates.
    fix: FixReport | None = None

    def on_event(self, event: Event) -> None:
        if self.progress is not None:
            self.progress.event(event)

    def ended(self, outcome: str, message: str) -> None:
        self.end = JobEnd(outcome, message)
        if self.progress is not None:
            self.progress.end(message)


class Reviews:
    """Reviews waiting for the client's ``conductor.reviewDone``, by id."""

    def __init__(self) -> None:
        self.waiting: dict[str, asyncio.Future[ReviewArgs]] = {}

    def answer(self, args: ReviewArgs) -> bool:
        fut = self.waiting.get(args.id)
        if fut is None or fut.done():
            return False
        fut.set_result(args)
        return True


class JobManager:
    def __init__(self) -> None:
        self.jobs: dict[str, ServerJob] = {}
        self._ids = itertools.count(1)
        self.by_request: dict[Any, str] = {}

    def running(self) -> list[ServerJob]:
        return [j for j in self.jobs.values() if j.task is not None and not j.task.done()]

    def conflict(self, claims: frozenset[Path]) -> ServerJob | None:
        for job in self.running():
            if WHOLE_WORKSPACE in claims or WHOLE_WORKSPACE in job.claims or claims & job.claims:
                return job
        return None

    def holder(self, path: Path, me: ServerJob) -> str:
        """Why ``me`` may not edit ``path`` ('' if it may)."""
        for job in self.running():
            if job is not me and (path in job.claims or WHOLE_WORKSPACE in job.claims):
                return f"{path.name} is being edited by job {job.id} ({job.title})"
        return ""

    def start(
        self,
        kind: str,
        title: str,
        claims: frozenset[Path],
        body: Callable[[ServerJob], Awaitable[None]],
        request_id: Any = None,
    ) -> ServerJob:
        job = ServerJob(str(next(self._ids)), kind, title, claims)
        self.jobs[job.id] = job
        if request_id is not None:
            self.by_request[request_id] = job.id
        job.task = asyncio.get_running_loop().create_task(self._run(job, body))
        return job

    async def _run(self, job: ServerJob, body: Callable[[ServerJob], Awaitable[None]]) -> None:
        try:
            await body(job)
        except asyncio.CancelledError:
            job.ended("cancelled", "cancelled")
        except Exception as e:  # a job's bug or a bad configuration: end it, say why
            log.exception("job %s failed", job.id)
            job.ended("failed", f"failed: {e}")

    def cancel(self, job_id: str | None = None) -> list[str]:
        """Cancel one job (or all); returns the ids cancelled."""
        done = []
        for job in self.running():
            if job_id is None or job.id == job_id:  # the engine stops with its task
                if job.task is not None:
                    job.task.cancel()
                done.append(job.id)
        return done

    def cancel_token(self, token: Any) -> None:
        for job in self.running():
            if job.progress and job.progress.token == token:
                self.cancel(job.id)

    def cancel_request(self, msg_id: Any) -> None:
        job_id = self.by_request.get(msg_id)
        if job_id:
            self.cancel(job_id)
