"""The human-designed pipeline: analysis -> generation -> debugging.

Needs no model. It is the fallback when a conductor's output is unusable and the
baseline a conductor has to beat.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import ClassVar

from ..config.schema import ConductorConfig
from ..errors import PlanError
from ..plan import Plan, Step
from ..protocols import Check, WorkerInfo
from ..task import Task

ANALYSIS = (
    "Analyse the task and the code: find the cause (or the design), name the exact "
    "places to change and why. Do not write the full code yet."
)
GENERATION = "Write the change as SEARCH/REPLACE blocks, each preceded by its file path."
DEBUGGING = (
    "Review the proposed change against the task and the failing tests; fix any mistake "
    "and output the complete final change as SEARCH/REPLACE blocks."
)


def static_plan(workers: Sequence[WorkerInfo], max_steps: int, *, note: str = "") -> Plan:
    """Analysis on the first model worker, generation and review on the priciest one."""
    models = [w for w in workers if not w.is_tool]
    if not models:
        raise PlanError("no model workers are configured (only tools)")
    analyst = models[0]
    coder = max(models, key=lambda w: (w.price_out, w.price_in, -models.index(w)))
    steps = [
        Step(analyst.name, ANALYSIS, (), "analysis"),
        Step(coder.name, GENERATION, "all", "generation"),
        Step(coder.name, DEBUGGING, "all", "debugging"),
    ]
    if max_steps < 3:
        steps = steps[:2][-max_steps:]
    source = f"static (fallback: {note})" if note else "static"
    return Plan(steps=tuple(steps), source=source, notes=(note,) if note else ())


class StaticConductor:
    name = "static"
    local: ClassVar[bool] = False

    def __init__(self, config: ConductorConfig | None = None) -> None:
        self.config = config or ConductorConfig(backend="static")

    @classmethod
    def doctor(cls, config: ConductorConfig) -> Check:
        return "ok", "always available"

    async def plan(self, task: Task, workers: Sequence[WorkerInfo], max_steps: int) -> Plan:
        return static_plan(workers, max_steps)

    async def aclose(self) -> None:
        return None
