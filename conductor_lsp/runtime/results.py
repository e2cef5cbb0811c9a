"""What running a plan gave: one result per step, and the run's."""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import StrEnum

from ..answers import code_problems
from ..episodes.records import Episode, StepBill
from ..plan import Lane, Plan, Step
from ..protocols import WorkerInfo
from ..storage.records import as_data
from ..task import Task
from ..usage import Tally, Usage


class RunOutcome(StrEnum):
    """How one run (a plan on the workers) ended."""

    DONE = "done"
    BUDGET = "budget"
    CANCELLED = "cancelled"
    FAILED = "failed"


def outcome_text(outcome: str, reason: str) -> str:
    """An outcome and why, as every door says it ("budget: calls (1 of 1 made)")."""
    return f"{outcome}: {reason}" if reason else str(outcome)


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
    #: Why generation was stopped early ('' when it was not; see ``WorkerResponse.cut``).
    cut: str = ""
    #: Files this worker was shown only in part (its window is too small for them whole).
    partial: tuple[str, ...] = ()

    @property
    def looped(self) -> bool:
        return self.cut.startswith("loop")

    @property
    def ok(self) -> bool:
        return self.answered and not self.error and not self.skipped


@dataclass
class RunResult:
    plan: Plan
    steps: list[StepResult]
    outcome: RunOutcome
    reason: str = ""
    seconds: float = 0.0
    #: Per worker.
    tallies: dict[str, Tally] = field(default_factory=dict)
    #: The conductor's call that wrote the plan (no calls for plans that need no model).
    conductor: Tally = field(default_factory=Tally)
    trace_path: str = ""
    #: The id of this job's episode record ('' when not recording).
    episode: str = ""
    #: This job as its episode (built whether or not the log records it).
    recorded: Episode | None = None
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

    def problems(self) -> list[str]:
        """What is wrong with the answer before any test: an answer cut short in a loop,
        code that does not parse. Shown beside the answer, never in place of it."""
        out = [
            f"step {r.index}'s answer was cut short, {r.cut}" for r in self.answers() if r.looped
        ]
        return out + code_problems(self.output)

    def to_json(self) -> dict[str, object]:
        """The job as ``run --json`` prints it: the answer, what is wrong with it, the bill."""
        steps = [
            {
                "index": r.index,
                "worker": r.step.worker,
                "role": r.step.role,
                "input_tokens": r.usage.input_tokens,
                "output_tokens": r.usage.output_tokens,
                "cost": r.cost,
                "seconds": round(r.elapsed, 3),
                "error": r.error,
                "skipped": r.skipped,
                "cut": r.cut,
            }
            for r in self.steps
        ]
        return {
            "outcome": str(self.outcome),
            "reason": self.reason,
            "output": self.output,
            "problems": self.problems(),
            "cost": self.cost,
            "seconds": round(self.seconds, 3),
            "plan": as_data(self.plan.kept()),
            "steps": steps,
            "trace": self.trace_path,
        }

    @property
    def cost(self) -> float:
        """Workers and conductor together."""
        return sum(t.cost for t in self.tallies.values()) + self.conductor.cost

    def record(
        self,
        task: Task,
        max_steps: int,
        conductor: str,
        *,
        job: str = "",
        round_index: int = 0,
        lane: Lane = Lane.PLAN,
    ) -> Episode:
        """This job as its episode: what the conductor was asked (``task``, the pool it
        was told of), wrote and cost, and what each step cost."""
        plan = self.plan.kept()
        bills = tuple(
            StepBill(r.step.worker, r.cost, r.elapsed, r.error, r.skipped, r.step.role, r.usage)
            for r in self.steps
        )
        return Episode(
            job=job,
            round=round_index,
            lane=lane,
            conductor=conductor,
            task=task.brief(),
            workers=self.workers,
            max_steps=max_steps,
            plan=plan,
            bills=bills,
            result=str(self.outcome),
            reason=self.reason,
            cost=self.cost,
            seconds=self.seconds,
        )
