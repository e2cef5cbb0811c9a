"""Plans that need no model: static, which every conductor must beat, and the pipeline.

``static`` (what every strategy is measured against, and the fallback when a
conductor's output is unusable) is one call to the strongest affordable worker; when
that did not make the tests pass, the next round's call is a debugging step that sees
the failures. It is the plain "send the failing tests and the code to the best model"
script, with a retry. Beside another strategy's plan its call is the floor lane.

``pipeline`` is the human-designed analysis -> generation -> review chain: cheap
analysis, then generation and review on the strongest worker.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from typing import ClassVar

from ..config.schema import ConductorConfig
from ..errors import PlanError
from ..plan import Plan, Step, infer_role
from ..protocols import Check, WorkerInfo
from ..task import Task
from .shapes import architect_steps, last_steps, pipeline_steps, review_steps

#: static's own first call: "direct" in the policy's wordings.
DIRECT = "Make the change the task asks for: write the code change."
#: The second wording of a first call ("cause" in the policy's wordings): with the real
#: local pair it solved bugs the direct wording missed (search's second leaf).
CAUSE = "Find the cause of the failing tests and name the lines to change."
RETRY = (
    "The previous attempt did not make the tests pass (see the failures and what happened). "
    "Find what is still wrong and write the corrected code change."
)


def cause_step(worker: str) -> Step:
    """A first call in the second wording: search's second leaf, and ``single:NAME@cause``
    (one request, so a recording of either stands for the other)."""
    return Step(worker, CAUSE, (), infer_role(CAUSE))


def strongest(workers: Sequence[WorkerInfo], pinned: str = "") -> WorkerInfo:
    """The pinned worker, else the strongest affordable model: strength, then price."""
    models = [w for w in workers if not w.is_tool]
    if not models:
        raise PlanError("no model workers are configured (only tools)")
    if pinned:
        for w in models:
            if w.name == pinned:
                return w
        raise PlanError(f"worker {pinned!r} is not in the pool (or is a tool)")
    pool = [w for w in models if w.affordable] or models
    return max(pool, key=lambda w: (w.strength, w.price_out, w.price_in, -models.index(w)))


def static_plan(
    workers: Sequence[WorkerInfo],
    max_steps: int,
    task: Task | None = None,
    *,
    note: str = "",
    pinned: str = "",
    helper: str = "",
    shape: str = "solo",
    wording: str = "direct",
) -> Plan:
    """One call to the strongest affordable worker; a debugging call in later rounds.
    With a ``helper``, the architect shape (the helper describes the change first), the
    review shape (the helper's call first, the pinned worker reviews it when red) or the
    pipeline shape (the helper analyses, the pinned worker writes and reviews).
    ``wording`` "cause" asks the first call as search's second leaf does (find the cause,
    name the lines), so ``eval`` records that action of the policy on every task."""
    coder = strongest(workers, pinned)
    later = task is not None and bool(task.previous)
    if later:
        step = Step(coder.name, RETRY, "all", "debugging")
    elif wording == "cause" and not helper:
        step = cause_step(coder.name)
    else:
        step = Step(coder.name, DIRECT, "all", "generation")
    if helper:
        strongest(workers, helper)  # a PlanError when it is no model of the pool
        if shape == "review":
            steps = review_steps(dataclasses.replace(step, worker=helper), coder.name)
        elif shape == "pipeline":
            steps = pipeline_steps(helper, coder.name)
        else:
            steps = architect_steps(helper, coder.name, later=later)
        if len(steps) > max_steps:  # a shape cut short is another plan: say so instead
            raise PlanError(f"shape {shape} has {len(steps)} steps; max_steps is {max_steps}")
        source = f"{shape}:{helper}>{coder.name}"
        return Plan(steps=steps, source=source, notes=(note,) if note else ())
    name = f"single:{pinned}" if pinned else "static"
    name += "@cause" if step.subtask == CAUSE else ""
    source = f"{name} (fallback: {note})" if note else name
    return Plan(steps=(step,), source=source, notes=(note,) if note else ())


def pipeline_plan(workers: Sequence[WorkerInfo], max_steps: int) -> Plan:
    """Analysis on the first model worker, generation and review on the strongest one."""
    analyst = next((w for w in workers if not w.is_tool), None)
    coder = strongest(workers)
    assert analyst is not None  # strongest() has checked there is a model
    steps = pipeline_steps(analyst.name, coder.name)
    if max_steps < 3:  # no review: the change is the leaf
        steps = last_steps(steps[:2], max_steps)
    return Plan(steps=steps, source="pipeline")


class StaticConductor:
    name = "static"
    local: ClassVar[bool] = False
    asks_model: ClassVar[bool] = False
    uses_search: ClassVar[bool] = False

    def __init__(self, config: ConductorConfig | None = None) -> None:
        self.config = config or ConductorConfig(backend="static")

    @classmethod
    def doctor(cls, config: ConductorConfig) -> Check:
        if config.worker:
            return "ok", f"always available (pinned to worker {config.worker})"
        return "ok", "always available"

    async def plan(self, task: Task, workers: Sequence[WorkerInfo], max_steps: int) -> Plan:
        c = self.config
        helper = c.helper if c.shape != "solo" else ""
        if c.shape != "solo" and not helper:
            raise PlanError(f"[conductor] shape = {c.shape} needs a helper worker")
        if c.shape != "solo" and c.wording != "direct":
            raise PlanError(f"[conductor] wording = {c.wording} is for one call (shape solo)")
        return static_plan(workers, max_steps, task, pinned=c.worker, helper=helper,
                           shape=c.shape, wording=c.wording)  # fmt: skip

    async def aclose(self) -> None:
        return None


class PipelineConductor(StaticConductor):
    name = "pipeline"

    @classmethod
    def doctor(cls, config: ConductorConfig) -> Check:
        return "ok", "always available (analysis -> generation -> review)"

    async def plan(self, task: Task, workers: Sequence[WorkerInfo], max_steps: int) -> Plan:
        return pipeline_plan(workers, max_steps)
