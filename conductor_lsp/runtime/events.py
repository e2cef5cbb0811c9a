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
