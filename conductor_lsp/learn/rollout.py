"""Rollouts: run a plan the conductor wrote, for real, and score it.

A rollout takes a suite task, a worker pool and a plan's text; in a fresh copy of the
task it runs the plan through the engine on the pool's workers, applies each leaf's
answer in a copy of its own (the tests themselves protected) and runs the task's tests:
as in the fix loop, the plan is as good as its best candidate. The score is the reward
of ``learn.reward`` over the resulting episode, so training and recorded use agree.
"""

from __future__ import annotations

import asyncio
import tempfile
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..conductor.output import parse_for_workers
from ..config.schema import Config
from ..configure.load import derive
from ..context import fix_instruction, repo_map, round_task
from ..edits.workspace import apply_output_to_disk
from ..episodes.records import Episode, VerdictRecord
from ..errors import ConductorError, PlanError
from ..eval.suite import SuiteTask, prepare
from ..fix.guard import test_guard
from ..protocols import WorkerInfo
from ..runtime.budget import Meter
from ..runtime.session import Session
from ..task import Task
from ..testrun import Confinement, TestRun, run_tests
from .reward import Weights, reward, success


@dataclass(frozen=True)
class Pool:
    """A worker pool as configuration: ``[workers.NAME]`` tables, in the conductor's order."""

    name: str
    workers: Mapping[str, Mapping[str, Any]]


@dataclass
class Rollout:
    reward: float
    valid: bool
    green: bool = False
    success: float = 0.0
    cost: float = 0.0
    seconds: float = 0.0
    steps: int = 0
    error: str = ""


@dataclass
class Start:
    """A task's starting point, the same for every rollout: its first test run and the
    task the fix loop's first round shows (``context.round_task``, as in use)."""

    run: TestRun
    view: Task


@dataclass
class Rollouts:
    """Runs rollouts for tasks and pools, with a shared base configuration."""

    #: The configuration rollouts start from (None: the built-in defaults); each rollout
    #: replaces its workers by the pool's.
    base: Config | None
    weights: Weights
    max_steps: int = 5
    concurrency: int = 2
    _starts: dict[str, Start] = field(default_factory=dict)
    _lock: asyncio.Lock | None = None

    def config(self, repo: Path, task: SuiteTask, pool: Pool) -> Config:
        layer = {
            "workers": {n: dict(w) for n, w in pool.workers.items()},
            "conductor": {"backend": "static", "max_steps": self.max_steps},
            "test": {"command": task.test_command()},
            "trace": {"enabled": False},
            "learn": {"record": False},
        }
        return derive(self.base, layer, root=repo)

    def infos(self, task: SuiteTask, pool: Pool) -> list[WorkerInfo]:
        """What the conductor is told about ``pool`` (workers are not contacted)."""
        with tempfile.TemporaryDirectory(prefix="conductor-pool-") as tmp:
            session = Session(self.config(Path(tmp), task, pool))
            return session.pool.infos()

    async def start(self, task: SuiteTask) -> Start:
        """The task's first test run and view, computed once."""
        if task.name not in self._starts:
            with tempfile.TemporaryDirectory(prefix="conductor-start-") as tmp:
                repo = prepare(task, Path(tmp))
                config = derive(self.base, {"test": {"command": task.test_command()}}, root=repo)
                run = await run_tests(task.test_command(), repo, 120, confine=Confinement())
                view = await asyncio.to_thread(_first_round, task, repo, run, config)
            self._starts[task.name] = Start(run, view)
        return self._starts[task.name]

    async def task_view(self, task: SuiteTask) -> Task:
        """The task as the fix loop's first round shows it."""
        return (await self.start(task)).view

    async def run(self, task: SuiteTask, pool: Pool, plan_text: str) -> Rollout:
        """Score one plan for one task and pool (never raises for a bad plan)."""
        start = await self.start(task)
        with tempfile.TemporaryDirectory(prefix="conductor-rollout-") as tmp:
            repo = prepare(task, Path(tmp))
            session = Session(self.config(repo, task, pool))
            try:
                return await self._run(task, start, repo, session, plan_text)
            finally:
                await session.aclose()

    async def _run(
        self, task: SuiteTask, start: Start, repo: Path, session: Session, plan_text: str
    ) -> Rollout:
        infos = session.pool.infos()
        try:
            plan = parse_for_workers(plan_text, infos, max_steps=self.max_steps, source="train")
        except PlanError as e:
            return Rollout(-self.weights.format_penalty, False, error=str(e))
        view = start.view
        job = await session.run(view, plan=plan, meter=Meter(session.config.budget))
        after = None
        for i, answer in enumerate(job.answers()):  # every leaf is a candidate, as in fix
            here = repo if i == 0 else prepare(task, repo.parent / f"leaf-{i}")
            disk = await asyncio.to_thread(
                apply_output_to_disk,
                here,
                answer.text,
                session.config.edits,
                targets=view.editable(),
                guard=test_guard(start.run),
            )
            if not disk.written:
                continue
            run = await run_tests(task.test_command(), here, 120, confine=Confinement())
            if after is None or run.failing < after.failing:
                after = run
            if run.passed:
                break
        outcome = VerdictRecord.of_runs(start.run, after)
        green = outcome.green
        episode = Episode("rollout", outcome=outcome, cost=job.cost, seconds=job.seconds)
        value = reward(episode, self.weights)
        return Rollout(
            value,
            True,
            green=green,
            success=success(outcome),
            cost=job.cost,
            seconds=job.seconds,
            steps=len(plan.steps),
        )

    async def many(self, items: Sequence[tuple[SuiteTask, Pool, str]]) -> list[Rollout]:
        """Rollouts side by side, at most ``concurrency`` at once; errors become rollouts."""
        limit = asyncio.Semaphore(max(1, self.concurrency))

        async def one(task: SuiteTask, pool: Pool, text: str) -> Rollout:
            async with limit:
                try:
                    return await self.run(task, pool, text)
                except ConductorError as e:  # a worker or checkpoint error: scored, not fatal
                    return Rollout(0.0, True, error=str(e))

        return list(await asyncio.gather(*(one(*item) for item in items)))


def _first_round(task: SuiteTask, repo: Path, run: TestRun, config: Config) -> Task:
    """What ``eval`` and the fix loop show in a task's first round, built by the same
    function: the instruction with the standing rule, the deny list, the outline."""
    deny = config.edits.all_deny()
    return round_task(
        fix_instruction(task.instruction),
        repo,
        run,
        deny,
        repo=repo_map(repo, deny),
        map_chars=config.fix.repo_map_chars,
    )
