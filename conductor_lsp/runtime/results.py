"""What running a plan gave: one result per step, and the job's."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

from ..plan import Plan, Step
from ..protocols import WorkerInfo
from ..usage import Tally, Usage

Outcome = Literal["done", "budget", "cancelled", "failed"]


@dataclass
class StepResult:
    index: int
    step: Step
    text: str = ""
    usage: Usage = Usage()
    cost: float = 0.0
    elapsed: float = 0.0
    error: str = ""
    skipped: str = ""
    answered: bool = False

    @property
    def ok(self) -> bool:
        return self.answered and not self.error and not self.skipped


@dataclass
class JobResult:
    plan: Plan
    steps: list[StepResult]
    outcome: Outcome
    reason: str = ""
    seconds: float = 0.0
    #: Per worker.
    tallies: dict[str, Tally] = field(default_factory=dict)
    #: The conductor's call that wrote the plan (no calls for plans that need no model).
    conductor: Tally = field(default_factory=Tally)
    trace_path: str = ""
    #: The id of this job's episode record ('' when not recording).
    episode: str = ""
    #: The pool as the conductor was told of it (what a routing policy learns against).
    workers: tuple[WorkerInfo, ...] = ()

    @property
    def output(self) -> str:
        """The answer when only one can be used (no tests to judge them): the last leaf
        that answered, so a chain's answer is its last step's, as in the RL Conductor."""
        for r in reversed(self.answers()):
            return r.text
        return ""

    def answers(self) -> list[StepResult]:
        """Every leaf that answered: the job's candidate answers, in plan order."""
        return [self.steps[i] for i in self.plan.leaves() if self.steps[i].ok]

    @property
    def cost(self) -> float:
        """Workers and conductor together."""
        return sum(t.cost for t in self.tallies.values()) + self.conductor.cost
