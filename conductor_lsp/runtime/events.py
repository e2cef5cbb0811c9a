"""Progress events: the engine emits them; the CLI and the LSP server render them."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from ..plan import Plan, Step
from ..usage import Usage
from .results import RunResult, outcome_text


@dataclass(frozen=True)
class PlanReady:
    plan: Plan


@dataclass(frozen=True)
class StepStarted:
    index: int
    step: Step


@dataclass(frozen=True)
class StepFinished:
    index: int
    step: Step
    usage: Usage
    cost: float
    elapsed: float
    total_cost: float
    error: str = ""
    skipped: str = ""
    cut: str = ""


@dataclass(frozen=True)
class StepWorking:
    """A step's call still going, every few seconds: how long, and the answer's tokens
    so far where they come one by one (in process, streamed; 0 where it comes whole)."""

    index: int
    step: Step
    seconds: float
    tokens: int
    #: Tokens a second since the last report (0 before the first token).
    rate: float


@dataclass(frozen=True)
class PlanDone:
    """A plan's steps all ended (a fix round runs one plan a lane; ``run`` runs one)."""

    result: RunResult


@dataclass(frozen=True)
class LoopNote:
    """Fix-loop progress: tests ran, edits applied or refused, state restored."""

    iteration: int
    message: str


@dataclass(frozen=True)
class CandidateJudged:
    """A candidate answer's verdict from the tests in its sandbox (the fix loop's)."""

    round: int
    label: str
    worker: str
    verdict: str
    green: bool


@dataclass(frozen=True)
class Quiet:
    """Nothing else was said for a while (a model loading, tests running): what the job
    was last seen doing, and for how long, so progress never goes silent."""

    seconds: float
    last: str


@dataclass(frozen=True)
class ModelNote:
    """An in-process model starts or ends loading (the first job waits on it)."""

    line: str


Event = (
    PlanReady
    | StepStarted
    | StepWorking
    | StepFinished
    | PlanDone
    | LoopNote
    | CandidateJudged
    | Quiet
    | ModelNote
)
EventSink = Callable[[Event], None]


def ignore(event: Event) -> None:
    """The default sink."""


def describe_event(event: Event) -> str:
    """One plain line per event (logs, non-terminal output, LSP progress)."""
    if isinstance(event, PlanReady):
        spent = event.plan.spent()
        return f"plan ready: {len(event.plan.steps)} steps ({event.plan.source})" + (
            f"; {spent}" if spent else ""
        )
    if isinstance(event, StepStarted):
        return f"step {event.index} started: {event.step.worker} ({event.step.role})"
    if isinstance(event, StepWorking):
        what = f"step {event.index}: {event.step.worker} ({event.step.role})"
        if not event.tokens:
            return f"{what} waiting for its answer, {event.seconds:.0f}s"
        return (
            f"{what} answering: {event.tokens} tokens, {event.rate:.1f} tokens/s, "
            f"{event.seconds:.0f}s"
        )
    if isinstance(event, Quiet):
        return f"still working, {event.seconds:.0f}s since: {event.last}"
    if isinstance(event, StepFinished):
        if event.skipped:
            return f"step {event.index} skipped: {event.skipped}"
        if event.error:
            return f"step {event.index} failed: {event.error}"
        cut = f"; cut short, {event.cut}" if event.cut.startswith("loop") else ""
        return (
            f"step {event.index} done: {event.step.worker} ({event.step.role}), "
            f"{event.usage.input_tokens}+{event.usage.output_tokens} tokens, "
            f"${event.cost:.4f} (total ${event.total_cost:.4f}), {event.elapsed:.1f}s{cut}"
        )
    if isinstance(event, LoopNote):
        return f"[{event.iteration}] {event.message}"
    if isinstance(event, ModelNote):
        return event.line
    if isinstance(event, CandidateJudged):
        return f"[{event.round}] candidate {event.label}: {event.verdict}"
    if isinstance(event, PlanDone):
        r = event.result
        ended = outcome_text(r.outcome, r.reason)
        return f"plan finished: {ended} in {r.seconds:.1f}s, ${r.cost:.4f}"
    return str(event)
