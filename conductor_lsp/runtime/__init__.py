"""Running jobs: a session (conductor + pool), the engine, budgets, events and traces."""

from .budget import Meter
from .engine import Engine
from .events import (
    CandidateJudged,
    Event,
    EventSink,
    LoopNote,
    PlanDone,
    PlanReady,
    StepFinished,
    StepStarted,
)
from .results import JobResult, StepResult
from .session import Session, make_plan

__all__ = [
    "CandidateJudged",
    "Engine",
    "Event",
    "EventSink",
    "JobResult",
    "LoopNote",
    "Meter",
    "PlanDone",
    "PlanReady",
    "Session",
    "StepFinished",
    "StepResult",
    "StepStarted",
    "make_plan",
]
