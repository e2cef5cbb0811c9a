"""One wave of a round: the candidates that run at once, one job per lane, every leaf
judged in its own sandbox as it answers; the first green stops the rest (engines
finish early, a plan still being written is dropped), and each job's episode learns
what its candidates did."""

from __future__ import annotations

import asyncio
import dataclasses
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from ..conductor.shapes import (
    Chain,
    ShapeName,
    chain_of,
    is_follow_up,
    is_repair,
    joined,
    read_shape,
)
from ..context.repo_map import RepoMap
from ..episodes.records import VerdictRecord
from ..plan import Lane, Plan, Step
from ..policy import Option
from ..runtime.budget import Meter
from ..runtime.engine import Engine
from ..runtime.events import CandidateJudged, EventSink
from ..runtime.results import StepResult
from ..runtime.session import Session
from ..runtime.trace import Trace
from ..storage.records import as_data
from ..task import Task
from ..usage import Tally
from .candidates import Attempt, Candidate, Round, State
from .lanes import LaneState
from .report import FixReport
from .verify import Verifier

GREEN_FOUND = "a candidate made the tests pass"


@dataclass
class Shared:
    """What every round of one job shares: the session, the job's meter and sandboxes,
    where progress goes, and the report that sums the bills."""

    session: Session
    meter: Meter
    verifier: Verifier
    instruction: str
    job_id: str
    on_event: EventSink
    note: Callable[[int, str], None]
    report: FixReport
    repo: RepoMap | None = None


@dataclass
class Offer:
    """What one lane would run this round: its task, the plan its candidates come from
    (None: a model conductor's, still to be written) and its options."""

    lane: LaneState
    task: Task
    plan: Plan | None
    options: list[Option]


class WaveRunner:
    """Runs a round's waves in turn; remembers what was asked, so a repeated call samples."""

    def __init__(self, runner: Shared, rnd: Round) -> None:
        self.runner = runner
        self.rnd = rnd
        self.asked: list[Step] = []

    async def run(self, n: int, options: list[Option], offers: list[Offer]) -> bool:
        """Wave ``n``: its options, one job per lane; whether a candidate was green."""
        jobs = []
        for offer in offers:
            mine = [o for o in options if o.lane is offer.lane.lane]
            if mine:
                jobs.append((offer, _plan_of(offer, mine)))
        stopper = _Stopper()
        checks: list[asyncio.Task[None]] = []
        asked = list(self.asked)
        self.asked += [s for _, plan in jobs if plan is not None for s in plan.steps]
        tasks = [
            asyncio.create_task(self._attempt(n, offer, plan, asked, stopper, checks))
            for offer, plan in jobs
        ]
        attempts: list[Attempt] = []
        try:
            done = await asyncio.gather(*tasks, return_exceptions=True)
            for result in done:  # an attempt cancelled for a green candidate is not one
                if isinstance(result, Exception):
                    raise result
            attempts = [r for r in done if isinstance(r, Attempt)]
            self.rnd.attempts += attempts
            for outcome in await asyncio.gather(*checks, return_exceptions=True):
                if isinstance(outcome, Exception):
                    raise outcome
        finally:
            for t in [*tasks, *checks]:
                t.cancel()
            await asyncio.gather(*tasks, *checks, return_exceptions=True)
        for a in attempts:
            self._record(a)
        return any(c.green for c in self.rnd.candidates)

    async def _attempt(
        self,
        n: int,
        offer: Offer,
        plan: Plan | None,
        asked: list[Step],
        stopper: _Stopper,
        checks: list[asyncio.Task[None]],
    ) -> Attempt:
        runner, rnd, lane, ask = self.runner, self.rnd, offer.lane, offer.task
        base = lane.base

        def on_leaf(step: StepResult) -> None:
            cand = Candidate(rnd.index, step, lane.lane, wave=n, shape=_shape_of(plan, step))
            rnd.candidates.append(cand)
            checks.append(asyncio.create_task(self._check(cand, base, ask, stopper, checks)))

        me = asyncio.current_task()
        assert me is not None
        job = await runner.session.run(
            ask,
            meter=runner.meter,
            on_event=runner.on_event,
            plan=plan,
            engine_ref=stopper.ref(me),
            on_leaf=on_leaf,
            job=runner.job_id,
            round_index=rnd.index,
            lane=lane.lane,
            asked=asked,
        )
        for name, tally in job.tallies.items():
            runner.report.tallies.setdefault(name, Tally()).merge(tally)
        runner.report.conductor.merge(job.conductor)
        return Attempt(lane.lane, job, ask.brief(), base, n)

    async def _check(
        self,
        cand: Candidate,
        base: State,
        task: Task,
        stopper: _Stopper,
        checks: list[asyncio.Task[None]],
    ) -> None:
        runner = self.runner
        runner.note(cand.round, f"testing {cand.label} in a sandbox")
        await runner.verifier.judge(cand, base, task)
        v = cand.verdict
        assert v is not None
        for line in v.notes:
            runner.note(cand.round, f"{cand.label}: {line}")
        runner.on_event(CandidateJudged(cand.round, cand.label, cand.worker, v.text(), v.green))
        if v.green:
            stopper.finish_early(GREEN_FOUND)
            me = asyncio.current_task()
            for t in checks:
                if t is not me:
                    t.cancel()

    def _record(self, attempt: Attempt) -> None:
        """The episode's outcome (its best leaf, and each leaf's own verdict), and each
        verdict at the end of the job's trace; the joined episode joins the report."""
        session, report = self.runner.session, self.runner.report
        mine = self.rnd.of(attempt)
        leaves = [leaf for c in mine if (leaf := c.leaf()) is not None]
        if attempt.run.trace_path:
            trace = Trace(Path(attempt.run.trace_path), session.pool.secrets())
            for leaf in leaves:
                trace.write("verdict", **as_data(leaf))
            trace.close()
        runs = [(c, c.tests) for c in mine if c.tests is not None]
        top = min(runs, key=lambda pair: pair[1].failing, default=None)
        refused = "; ".join(c.verdict.errors for c in mine if c.verdict and c.verdict.errors)
        assert attempt.base is not None
        outcome = VerdictRecord.of_runs(
            attempt.base.run,
            top[1] if top else None,
            applied=top[0].verdict.applied if top and top[0].verdict else [],
            refused=refused or ("" if mine else attempt.run.reason or "no answer"),
            leaves=leaves,
            id=attempt.run.episode,
            floor_cost=attempt.run.cost
            if attempt.lane is Lane.FLOOR and not attempt.follow_up
            else self.rnd.floor_estimate,
        )
        session.episodes.outcome(outcome)
        if attempt.run.recorded is not None:
            report.episodes.append(attempt.run.recorded.with_outcome(outcome))


def _plan_of(offer: Offer, options: list[Option]) -> Plan | None:
    """The plan a lane runs in this wave: its whole plan for a unit option (None: a model
    conductor's, to be written) and for the floor, else those options' chains."""
    if any(o.step is None for o in options):
        return offer.plan
    assert offer.plan is not None
    own = not any(o.review or (o.step and is_follow_up(o.step.subtask)) for o in options)
    if offer.lane.lane is Lane.FLOOR and own:
        return offer.plan
    parts = [Chain((*o.before, o.step)) for o in options if o.step is not None]
    return dataclasses.replace(offer.plan, steps=joined(parts))


def _shape_of(plan: Plan | None, step: StepResult) -> str:
    """A leaf's shape for people ('' for a call alone, or a plan not known beforehand)."""
    if is_repair(step.step.subtask):
        return f"repair: {step.step.worker} writes the edits of an answer that held none"
    if is_follow_up(step.step.subtask):
        return read_shape((step.step,)).describe()
    if plan is None or not 0 <= step.index < len(plan.steps):
        return ""
    shape = chain_of(plan.steps, step.index).shape()
    return "" if shape.name is ShapeName.SOLO else shape.describe()


class _Stopper:
    """Stops a wave's remaining work once a candidate is green: engines finish early, and
    an attempt still waiting for its plan (a conductor still writing) is cancelled."""

    def __init__(self) -> None:
        self.reason = ""
        self.engines: list[Engine] = []
        self.planning: set[asyncio.Task[Attempt]] = set()

    def ref(self, task: asyncio.Task[Attempt]) -> list[Engine]:
        """The ``engine_ref`` for ``task``'s job: its engine, once made, stops if told to."""
        self.planning.add(task)
        stopper = self

        class Ref(list[Engine]):
            def append(self, engine: Engine) -> None:
                super().append(engine)
                stopper.planning.discard(task)
                stopper.engines.append(engine)
                if stopper.reason:
                    engine.finish_early(stopper.reason)

        return Ref()

    def finish_early(self, reason: str) -> None:
        self.reason = reason
        for engine in self.engines:
            engine.finish_early(reason)
        for task in self.planning:
            task.cancel()
