"""Progress events: the engine emits them; the CLI and the LSP server render them."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from ..plan import Plan, Step
from ..usage import Usage
from .results import JobResult


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
class JobDone:
    result: JobResult


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


Event = PlanReady | StepStarted | StepFinished | JobDone | LoopNote | CandidateJudged
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
    if isinstance(event, CandidateJudged):
        return f"[{event.round}] candidate {event.label}: {event.verdict}"
    if isinstance(event, JobDone):
        r = event.result
        tail = f": {r.reason}" if r.reason else ""
        return f"job {r.outcome}{tail} in {r.seconds:.1f}s, ${r.cost:.4f}"
    return str(event)
