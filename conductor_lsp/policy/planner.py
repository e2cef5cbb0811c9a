"""Who plans what, in one place: the conductor backend, and the routing policy when one
is fitted, chosen once when a session starts.

With no policy the backend plans alone (static: the floor's own plan, so a fix runs
one lane). With a policy and a backend that asks no model, the policy writes each
round's plan; with a model conductor, the policy's figures are the model's hints and,
with ``[conductor] policy_steer``, its plan is steered to the policy's picks.
"""

from __future__ import annotations

import asyncio
import dataclasses
from collections.abc import Sequence
from pathlib import Path

from ..conductor.registry import make_conductor
from ..conductor.static import static_plan
from ..config.schema import Config
from ..episodes.records import Episode
from ..errors import BackendUnavailable, ConfigError, PlanError, WorkerError
from ..plan import Lane, Plan
from ..protocols import Conductor, Embedder, WorkerInfo
from ..task import Task
from .online import learn_online
from .plans import figures, round_plan, steer
from .predict import Policy
from .reading import read_briefs


async def make_plan(
    conductor: Conductor, task: Task, workers: Sequence[WorkerInfo], max_steps: int
) -> Plan:
    """The conductor's plan, or static's plan with the reason it was needed; a
    fallback keeps the conductor's raw answer and what asking it cost."""
    try:
        plan = await conductor.plan(task, workers, max_steps)
    except (PlanError, BackendUnavailable, WorkerError, ConfigError) as e:
        plan = Plan(steps=(), source=conductor.name, error=str(e))
    if plan.steps and not plan.error:
        return plan
    why = plan.error or "the plan has no steps"
    fallback = static_plan(workers, max_steps, task, note=f"{conductor.name}: {why}")
    return dataclasses.replace(
        fallback, raw=plan.raw, call=plan.call, error=why, notes=(*fallback.notes, *plan.notes)
    )


def embedder(policy: Policy, conductor: object) -> Embedder:
    """The conductor that reads briefs for a hidden-state policy; a clear error when the
    configured conductor cannot (no model in this process) or is not the policy's model."""
    h = policy.hidden
    if h is None:
        raise ValueError("this policy reads no hidden state")
    if not isinstance(conductor, Embedder):
        name = getattr(conductor, "name", type(conductor).__name__)
        raise ConfigError(
            f"the routing policy reads the hidden state of {h.model}, and conductor backend "
            f"{name!r} runs no model in this process: set [conductor] backend to "
            "transformers, llama-cpp or mlx with that model, or refit with "
            "train --policy --features words"
        )
    mine = conductor.model_identity()
    if mine != h.model:
        raise ConfigError(
            f"the routing policy was fitted on the hidden state of {h.model}; the conductor "
            f"is {mine}: use that model, or refit the policy (train --policy --features hidden)"
        )
    return conductor


@dataclasses.dataclass
class Planner:
    """The session's one source of plans and of the lanes a fix runs."""

    conductor: Conductor
    #: None until a policy exists (cold start: the backend alone, exactly).
    policy: Policy | None = None
    #: Where the policy lives and learns (``[conductor] policy``); None: no learning.
    policy_path: Path | None = None
    steer: bool = False
    prefer: str = "latency"
    #: The conductor that reads briefs for a hidden-state policy (checked once).
    reader: Embedder | None = None

    @classmethod
    def of(cls, config: Config) -> Planner:
        """The configured backend and policy; the policy file is read here, once."""
        c = config.conductor
        conductor = make_conductor(c, config.search)
        path = config.root / c.policy if c.policy else None
        policy = Policy.load(path) if path is not None and path.is_file() else None
        reader = (
            embedder(policy, conductor)
            if policy is not None and policy.hidden is not None
            else None
        )
        return cls(conductor, policy, path, c.policy_steer, config.fix.prefer, reader)

    @property
    def name(self) -> str:
        return self.conductor.name

    @property
    def asks_model(self) -> bool:
        return self.conductor.asks_model

    @property
    def floor_only(self) -> bool:
        """Whether every plan is the floor's own (static, no policy): one lane suffices."""
        return self.conductor.name == "static" and self.policy is None

    def lanes(self, floor: bool) -> list[Lane]:
        """The lanes a fix job runs: the floor (``[fix] floor``) and this planner's own."""
        if self.floor_only:
            return [Lane.FLOOR]
        mine = Lane.CONDUCTOR if self.asks_model else Lane.PLAN
        return [Lane.FLOOR, mine] if floor else [mine]

    async def plan(
        self, task: Task, infos: Sequence[WorkerInfo], max_steps: int, budget: float
    ) -> Plan:
        """A plan for ``task``; ``budget`` is the $ left to the job. Unbounded in time:
        the caller bounds it and counts what the conductor's call cost."""
        policy = self.policy
        if policy is None:
            return await make_plan(self.conductor, task, infos, max_steps)
        brief = task.brief()
        await self.read_brief(brief)
        if not self.asks_model:
            later = bool(task.previous)
            return round_plan(
                policy, brief, infos, max_steps, later=later, budget=budget, prefer=self.prefer
            )
        hinted = dataclasses.replace(task, hints=figures(policy, brief, infos))
        plan = await make_plan(self.conductor, hinted, infos, max_steps)
        return steer(plan, policy, brief, infos) if self.steer and not plan.error else plan

    async def read_brief(self, brief: str) -> None:
        """Give a hidden-state policy the conductor model's reading of ``brief`` (off the
        event loop: it is a forward pass)."""
        policy, reader = self.policy, self.reader
        if policy is None or reader is None:  # a reader exists for a hidden-state policy
            return
        await asyncio.to_thread(read_briefs, policy, [brief], reader.embed)

    def learn_online(self, episodes: Sequence[Episode]) -> None:
        """Update the policy file from one job's episodes, and plan with the result;
        blocking, so run it in a thread."""
        if self.policy_path is None:
            return
        embed = self.reader.embed if self.reader is not None else None
        learned = learn_online(self.policy_path, self.policy, episodes, embed)
        if learned is not None:
            self.policy = learned

    async def aclose(self) -> None:
        await self.conductor.aclose()
