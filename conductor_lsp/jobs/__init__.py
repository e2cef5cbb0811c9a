"""One function per user job, which every door calls: the command line, the language
server, the MCP door, ``eval`` and ``learn`` only translate their inputs and outputs.

- ``fix_repository``: fix until the tests pass (CLI ``fix``, LSP ``conductor.fixTests``,
  MCP ``fix``).
- ``plan_task`` and ``run_task``: one task's plan, or its run (CLI ``plan``/``run``,
  MCP ``plan``).
- ``edit_buffer``: one plan on an editor buffer (LSP ``conductor.edit`` and
  ``conductor.rewrite``).
- ``diagnose``: what can run here, and why not (CLI ``doctor``).
- ``undo``: the state before a job (CLI, LSP and MCP ``undo``).
- ``list_candidates`` and ``apply_candidate``: a fix's other candidates (LSP
  ``conductor.showCandidates``/``applyCandidate``, MCP ``candidates``).

A job takes a ``Session`` (``async with Session(config) as s``: built once and reused
by the server), a request, and the door's ``Hooks``; it returns a typed report.
"""

from ..context.rounds import fix_instruction
from ..fix.report import FixReport
from ..fix.review import Review, Reviewer
from ..fix.stops import FixOutcome
from ..runtime.events import (
    Event,
    EventSink,
    ModelNote,
    PlanDone,
    PlanReady,
    StepFinished,
    StepStarted,
    StepWorking,
    describe_event,
)
from ..runtime.results import RunOutcome, RunResult, outcome_text
from ..runtime.session import Session
from .candidates import apply_candidate, list_candidates
from .doctor import diagnose
from .edit import Applied, EditKind, EditReport, EditRequest, edit_buffer, edit_task
from .fix import FixRequest, fix_repository
from .hooks import QUIET, Hooks, model_report
from .tasks import TaskRequest, build_task, plan_task, run_task
from .undo import checkpoints, undo

__all__ = [
    "QUIET",
    "Applied",
    "EditKind",
    "EditReport",
    "EditRequest",
    "Event",
    "EventSink",
    "FixOutcome",
    "FixReport",
    "FixRequest",
    "Hooks",
    "ModelNote",
    "PlanDone",
    "PlanReady",
    "Review",
    "Reviewer",
    "RunOutcome",
    "RunResult",
    "Session",
    "StepFinished",
    "StepStarted",
    "StepWorking",
    "TaskRequest",
    "apply_candidate",
    "build_task",
    "checkpoints",
    "describe_event",
    "diagnose",
    "edit_buffer",
    "edit_task",
    "fix_instruction",
    "fix_repository",
    "list_candidates",
    "model_report",
    "outcome_text",
    "plan_task",
    "run_task",
    "undo",
]
