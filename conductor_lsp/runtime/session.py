"""One configured conductor and worker pool, reused across jobs (server, loop, eval)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from ..conductor.registry import make_conductor
from ..conductor.static import static_plan
from ..config.schema import Config
from ..errors import BackendUnavailable, ConfigError, PlanError, WorkerError
from ..plan import Plan
from ..protocols import Conductor, WorkerInfo
from ..task import Task
from ..workers.pool import WorkerPool
from .budget import Meter
from .engine import Engine
from .events import EventSink, ignore
from .results import JobResult
from .trace import Trace, new_trace_path


async def make_plan(
    conductor: Conductor, task: Task, workers: Sequence[WorkerInfo], max_steps: int
) -> Plan:
    """The conductor's plan, or the static plan with the reason it was needed."""
    try:
        return await conductor.plan(task, workers, max_steps)
    except (PlanError, BackendUnavailable, WorkerError, ConfigError) as e:
        return static_plan(workers, max_steps, note=f"{conductor.name}: {e}")


@dataclass
class Session:
    """A configured conductor and worker pool, reused across jobs (server, loop)."""

    config: Config
    conductor: Conductor = field(init=False)
    pool: WorkerPool = field(init=False)

    def __post_init__(self) -> None:
        self.pool = WorkerPool(self.config)
        self.conductor = make_conductor(self.config.conductor)

    def new_trace(self, label: str = "job") -> Trace:
        if not self.config.trace.enabled:
            return Trace(None)
        path = new_trace_path(self.config.root, self.config.trace.dir, label)
        return Trace(path, self.pool.secrets())

    async def plan(self, task: Task) -> Plan:
        return await make_plan(
            self.conductor, task, self.pool.infos(), self.config.conductor.max_steps
        )

    async def run(
        self,
        task: Task,
        *,
        on_event: EventSink = ignore,
        meter: Meter | None = None,
        plan: Plan | None = None,
        engine_ref: list[Engine] | None = None,
    ) -> JobResult:
        """Plan (unless given) and run one job; ``engine_ref`` receives the engine for cancel."""
        meter = meter or Meter(self.config.budget)
        trace = self.new_trace()
        try:
            trace.write("task", task=task.render())
            plan = plan or await self.plan(task)
            engine = Engine(self.pool, meter, on_event=on_event, trace=trace)
            if engine_ref is not None:
                engine_ref.append(engine)
            return await engine.run(plan, task)
        finally:
            trace.close()

    async def aclose(self) -> None:
        await self.pool.aclose()
        await self.conductor.aclose()
