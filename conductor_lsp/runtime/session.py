"""One configured conductor and worker pool, reused across jobs (server, loop, eval)."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from ..config.schema import Config
from ..episodes.log import EpisodeLog
from ..episodes.records import Episode
from ..errors import BudgetExceeded
from ..plan import Lane, Plan, Step
from ..policy import Planner, Policy
from ..protocols import Conductor, WorkerInfo
from ..task import Task
from ..testrun import Confinement
from ..workers.pool import WorkerPool
from .budget import Meter
from .engine import Engine, plan_record
from .events import EventSink, PlanDone, PlanReady, ignore
from .pulse import heartbeat
from .results import RunOutcome, RunResult, StepResult
from .trace import Trace, new_trace_path


@dataclass
class Session:
    """A configured conductor and worker pool, reused across jobs (server, loop); ``async
    with Session(config) as s`` closes its workers' connections and models at the end."""

    config: Config
    pool: WorkerPool = field(init=False)
    episodes: EpisodeLog = field(init=False)

    def __post_init__(self) -> None:
        self.pool = WorkerPool(self.config)
        #: Who plans what: the backend and the routing policy, chosen once here.
        self.planner = Planner.of(self.config)
        learn = self.config.learn
        path = self.config.root / learn.episodes if learn.record else None
        self.episodes = EpisodeLog(path, self.pool.secrets(), self.config.root)

    @property
    def conductor(self) -> Conductor:
        return self.planner.conductor

    @property
    def policy(self) -> Policy | None:
        return self.planner.policy

    def confinement(self) -> Confinement:
        """How tests of code we did not write run here (a candidate's in its sandbox):
        without the keys this configuration uses, by name and by value."""
        values = frozenset(s.reveal() for s in self.pool.secrets() if s)
        return Confinement(self.config.key_names(), values, self.config.test.walls)

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
        left = meter.limits.max_cost - meter.cost
        if not self.planner.asks_model:  # no call to wait for or to pay
            return await self.planner.plan(task, infos, max_steps, left)
        try:
            async with asyncio.timeout(meter.seconds_left()):
                plan = await self.planner.plan(task, infos, max_steps, left)
        except TimeoutError:
            raise BudgetExceeded(meter.time_spent()) from None
        if plan.call is not None:
            meter.calls += 1
            meter.cost += plan.call.cost
        return plan

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
    ) -> RunResult:
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
                        return self._stopped(e, started, trace, on_event)
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

    def _stopped(
        self, stop: BudgetExceeded, started: float, trace: Trace, on_event: EventSink
    ) -> RunResult:
        """A job the budget stopped before a plan existed."""
        plan, reason = Plan(steps=(), source="none", error=str(stop)), stop.why
        on_event(PlanReady(plan))
        trace.write("plan", **plan_record(plan))
        result = RunResult(plan, [], RunOutcome.BUDGET, reason, time.monotonic() - started)
        trace.write("done", outcome=RunOutcome.BUDGET, reason=reason, cost=0.0)
        on_event(PlanDone(result))
        return result

    def learn_online(self, episodes: Sequence[Episode]) -> None:
        """Update the policy file (``[conductor] policy``) from one job's episodes, and
        plan with the result; blocking, so run it in a thread."""
        self.planner.learn_online(episodes)

    async def aclose(self) -> None:
        await self.pool.aclose()
        await self.planner.aclose()

    async def __aenter__(self) -> Session:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()
