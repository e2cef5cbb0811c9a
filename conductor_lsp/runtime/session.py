"""One configured conductor and worker pool, reused across jobs (server, loop, eval)."""

from __future__ import annotations

import asyncio
import dataclasses
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from ..conductor.registry import make_conductor
from ..conductor.static import static_plan
from ..config.schema import Config
from ..episodes.log import EpisodeLog
from ..episodes.records import Episode
from ..errors import BackendUnavailable, BudgetExceeded, ConfigError, PlanError, WorkerError
from ..plan import Lane, Plan, Step
from ..policy import Policy, figures, learn_online, read_briefs, round_plan, steer
from ..protocols import Conductor, Embedder, WorkerInfo
from ..task import Task
from ..workers.pool import WorkerPool
from .budget import Meter
from .engine import Engine, plan_record
from .events import EventSink, PlanDone, PlanReady, ignore
from .pulse import heartbeat
from .results import JobOutcome, JobResult, StepResult
from .trace import Trace, new_trace_path


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


@dataclass
class Session:
    """A configured conductor and worker pool, reused across jobs (server, loop)."""

    config: Config
    conductor: Conductor = field(init=False)
    pool: WorkerPool = field(init=False)
    episodes: EpisodeLog = field(init=False)

    def __post_init__(self) -> None:
        self.pool = WorkerPool(self.config)
        self.conductor = make_conductor(self.config.conductor, self.config.search)
        self.policy_path = (
            self.config.root / self.config.conductor.policy
            if self.config.conductor.policy
            else None
        )
        #: None until a policy exists (cold start: today's behaviour, exactly).
        self.policy = (
            Policy.load(self.policy_path)
            if self.policy_path is not None and self.policy_path.is_file()
            else None
        )
        #: The conductor that reads briefs for a hidden-state policy (checked once here).
        self.reader = (
            embedder(self.policy, self.conductor)
            if self.policy is not None and self.policy.hidden is not None
            else None
        )
        learn = self.config.learn
        path = self.config.root / learn.episodes if learn.record else None
        self.episodes = EpisodeLog(path, self.pool.secrets(), self.config.root)

    def new_trace(self, label: str = "job") -> Trace:
        if not self.config.trace.enabled:
            return Trace(None)
        path = new_trace_path(self.config.root, self.config.trace.dir, label)
        return Trace(path, self.pool.secrets())

    def infos(self, task: Task, meter: Meter) -> list[WorkerInfo]:
        return self.pool.infos(task, meter.limits.max_cost - meter.cost)

    async def plan(
        self, task: Task, meter: Meter | None = None, infos: list[WorkerInfo] | None = None
    ) -> Plan:
        """Ask the conductor, inside the job's budget: its call counts as a call, its cost as
        cost, and it may not outlast the time budget."""
        meter = meter or Meter(self.config.budget)
        meter.check()
        infos = infos if infos is not None else self.infos(task, meter)
        max_steps = self.config.conductor.max_steps
        if self.policy is not None:
            await self.read_brief(task.brief())
        if self.policy is not None and not self.conductor.asks_model:
            left = meter.limits.max_cost - meter.cost
            return round_plan(
                self.policy,
                task.brief(),
                infos,
                max_steps,
                later=bool(task.previous),
                budget=left,
                prefer=self.config.fix.prefer,
            )
        if self.policy is not None:
            task = dataclasses.replace(task, hints=figures(self.policy, task.brief(), infos))
        try:
            async with asyncio.timeout(meter.seconds_left()):
                plan = await make_plan(self.conductor, task, infos, max_steps)
        except TimeoutError:
            raise BudgetExceeded(meter.time_spent()) from None
        if plan.call is not None:
            meter.calls += 1
            meter.cost += plan.call.cost
        if self.policy is not None and self.config.conductor.policy_steer and not plan.error:
            plan = steer(plan, self.policy, task.brief(), infos)
        return plan

    async def read_brief(self, brief: str) -> None:
        """Give a hidden-state policy the conductor model's reading of ``brief`` (off the
        event loop: it is a forward pass)."""
        policy, reader = self.policy, self.reader
        if policy is None or reader is None:  # a reader exists for a hidden-state policy
            return
        await asyncio.to_thread(read_briefs, policy, [brief], reader.embed)

    async def run(
        self,
        task: Task,
        *,
        on_event: EventSink = ignore,
        meter: Meter | None = None,
        plan: Plan | None = None,
        engine_ref: list[Engine] | None = None,
        on_leaf: Callable[[StepResult], None] | None = None,
        job: str = "",
        round_index: int = 0,
        lane: Lane = Lane.PLAN,
        asked: Sequence[Step] = (),
    ) -> JobResult:
        """Plan (unless given) and run one job; ``engine_ref`` receives the engine for cancel,
        ``on_leaf`` each candidate answer as it arrives. ``job``, ``round_index`` and ``lane``
        go into the episode record (which job, which round, which of its plans)."""
        meter = meter or Meter(self.config.budget)
        trace = self.new_trace()
        started = time.monotonic()
        async with heartbeat(on_event) as on_event:
            try:
                trace.write("task", task=task.render(), root=str(self.config.root))
                infos = self.infos(task, meter)
                if plan is None:
                    try:
                        plan = await self.plan(task, meter, infos)
                    except BudgetExceeded as e:
                        return self._stopped(str(e), started, trace, on_event)
                engine = Engine(
                    self.pool,
                    meter,
                    on_event=on_event,
                    trace=trace,
                    sample_temperature=self.config.search.temperature,
                )
                if engine_ref is not None:
                    engine_ref.append(engine)
                result = await engine.run(plan, task, started=started, on_leaf=on_leaf, asked=asked)
                result.workers = tuple(infos)
                result.recorded = result.record(
                    task,
                    self.config.conductor.max_steps,
                    self.conductor.name,
                    job=job,
                    round_index=round_index,
                    lane=lane,
                )
                result.episode = self.episodes.episode(result.recorded)
                return result
            finally:
                trace.close()

    def _stopped(self, reason: str, started: float, trace: Trace, on_event: EventSink) -> JobResult:
        """A job the budget stopped before a plan existed."""
        plan = Plan(steps=(), source="none", error=reason)
        on_event(PlanReady(plan))
        trace.write("plan", **plan_record(plan))
        result = JobResult(plan, [], JobOutcome.BUDGET, reason, time.monotonic() - started)
        trace.write("done", outcome=JobOutcome.BUDGET, reason=reason, cost=0.0)
        on_event(PlanDone(result))
        return result

    def learn_online(self, episodes: Sequence[Episode]) -> None:
        """Update the policy file (``[conductor] policy``) from one job's episodes, and
        plan with the result; blocking, so run it in a thread."""
        if self.policy_path is None:
            return
        embed = self.reader.embed if self.reader is not None else None
        learned = learn_online(self.policy_path, self.policy, episodes, embed)
        if learned is not None:
            self.policy = learned

    async def aclose(self) -> None:
        await self.pool.aclose()
        await self.conductor.aclose()
