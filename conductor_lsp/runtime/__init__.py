"""Running jobs: a session (conductor + pool), the engine, budgets, events and traces."""

from ..policy.planner import make_plan
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
from .results import RunResult, StepResult
from .session import Session

__all__ = [
    "CandidateJudged",
    "Engine",
    "Event",
    "EventSink",
    "LoopNote",
    "Meter",
    "PlanDone",
    "PlanReady",
    "RunResult",
    "Session",
    "StepFinished",
    "StepResult",
    "StepStarted",
    "make_plan",
]
