"""One round of the fix loop: its plans run side by side, every leaf is judged in a sandbox
the moment it answers, the rest stop once one is green; then each plan's episode learns
what its candidates did.

A round runs one plan per lane: the strategy's own (``Lane.PLAN``); with a model
conductor, its plan (``Lane.CONDUCTOR``) beside static's own call (``Lane.FLOOR``); or,
after a routing policy's cheaper picks beat nothing, the floor alone.
"""

from __future__ import annotations

import asyncio
import dataclasses
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from ..conductor.static import static_plan
from ..episodes.records import OutcomeRecord
from ..plan import Lane, Plan
from ..runtime.budget import Meter
from ..runtime.engine import Engine
from ..runtime.events import CandidateJudged, EventSink
from ..runtime.results import JobOutcome, StepResult
from ..runtime.session import Session
from ..runtime.trace import Trace
from ..task import Task
from ..usage import Tally
from .candidates import Attempt, Candidate, Round, State
from .context import context_files
from .history import Histories
from .repo_map import RepoMap
from .report import FixReport
from .stops import Cancelled
from .verify import Verifier

GREEN_FOUND = "a candidate made the tests pass"


@dataclass
class RoundRunner:
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

    async def run(
        self, k: int, base: State, histories: Histories, named: list[str], *, floor: bool
    ) -> Round:
        """Round ``k`` from ``base``: ``floor`` runs static's own first call alone."""
        rnd = Round(k, base)
        task = await self._task(rnd, named)
        stopper = _Stopper()
        checks: list[asyncio.Task[None]] = []
        lanes = self._lanes(task, histories, floor)
        attempts = [
            asyncio.create_task(self._attempt(rnd, lane, ask, plan, histories, stopper, checks))
            for lane, ask, plan in lanes
        ]
        try:
            done = await asyncio.gather(*attempts, return_exceptions=True)
            for result in done:  # an attempt cancelled for a green candidate is not one
                if isinstance(result, Exception):
                    raise result
            rnd.attempts = [r for r in done if isinstance(r, Attempt)]
            for outcome in await asyncio.gather(*checks, return_exceptions=True):
                if isinstance(outcome, Exception):
                    raise outcome
        finally:
            for t in [*attempts, *checks]:
                t.cancel()
            await asyncio.gather(*attempts, *checks, return_exceptions=True)
        for a in rnd.attempts:
            self._record(rnd, a)
            if a.job.outcome is JobOutcome.CANCELLED:
                raise Cancelled(a.job.reason or "cancelled")
        return rnd

    async def _task(self, rnd: Round, named: list[str]) -> Task:
        """The round's task: the files its failures involve (read in a sandbox of its
        start), the failures, and the repository map's outline of the rest."""
        cfg = self.session.config
        bench = self.verifier.bench
        box = await bench.open(rnd.base.files, f"r{rnd.index}-context")
        try:
            files = await asyncio.to_thread(
                context_files, box.path, rnd.base.run, cfg.edits.all_deny(), named
            )
        finally:
            await bench.discard(box)
        rnd.shown = [f.path for f in files]
        outline = ""
        if self.repo is not None:
            outline = await asyncio.to_thread(self.repo.render, rnd.shown, cfg.fix.repo_map_chars)
        summary = rnd.base.run.summary()
        return Task(self.instruction, tuple(files), test_failures=summary, repo_map=outline)

    def _lanes(
        self, task: Task, histories: Histories, floor: bool
    ) -> list[tuple[Lane, Task, Plan | None]]:
        """(lane, task, plan: None to ask the conductor) for each of the round's plans."""
        cfg = self.session.config
        if not ((cfg.fix.floor and self.session.conductor.asks_model) or floor):
            return [(Lane.PLAN, task, None)]
        # static's own call, told only of its own earlier attempts (none before a floor
        # round: the strongest has not answered yet)
        ask = dataclasses.replace(task, previous=histories[Lane.FLOOR])
        infos = self.session.infos(ask, self.meter)
        plan = static_plan(infos, cfg.conductor.max_steps, ask)
        beside: list[tuple[Lane, Task, Plan | None]] = (
            [] if floor else [(Lane.CONDUCTOR, task, None)]
        )
        return [*beside, (Lane.FLOOR, ask, plan)]

    async def _attempt(
        self,
        rnd: Round,
        lane: Lane,
        ask: Task,
        plan: Plan | None,
        histories: Histories,
        stopper: _Stopper,
        checks: list[asyncio.Task[None]],
    ) -> Attempt:
        if lane is not Lane.FLOOR:
            ask = dataclasses.replace(ask, previous=histories[lane])

        def on_leaf(step: StepResult) -> None:
            cand = Candidate(rnd.index, step, lane)
            rnd.candidates.append(cand)
            checks.append(asyncio.create_task(self._check(cand, rnd.base, ask, stopper, checks)))

        me = asyncio.current_task()
        assert me is not None
        job = await self.session.run(
            ask,
            meter=self.meter,
            on_event=self.on_event,
            plan=plan,
            engine_ref=stopper.ref(me),
            on_leaf=on_leaf,
            job=self.job_id,
            round_index=rnd.index,
            lane=lane,
        )
        for name, tally in job.tallies.items():
            self.report.tallies.setdefault(name, Tally()).merge(tally)
        self.report.conductor.merge(job.conductor)
        return Attempt(lane, job, ask.brief())

    async def _check(
        self,
        cand: Candidate,
        base: State,
        task: Task,
        stopper: _Stopper,
        checks: list[asyncio.Task[None]],
    ) -> None:
        self.note(cand.round, f"testing {cand.label} in a sandbox")
        await self.verifier.judge(cand, base, task)
        v = cand.verdict
        assert v is not None
        for line in v.notes:
            self.note(cand.round, f"{cand.label}: {line}")
        self.on_event(CandidateJudged(cand.round, cand.label, cand.worker, v.text(), v.green))
        if v.green:
            stopper.finish_early(GREEN_FOUND)
            me = asyncio.current_task()
            for t in checks:
                if t is not me:
                    t.cancel()

    def _record(self, rnd: Round, attempt: Attempt) -> None:
        """The episode's outcome (its best leaf, and each leaf's own verdict), and each
        verdict at the end of the job's trace; the joined episode joins the report."""
        mine = rnd.of(attempt)
        leaves = [leaf for c in mine if (leaf := c.leaf()) is not None]
        if attempt.job.trace_path:
            trace = Trace(Path(attempt.job.trace_path), self.session.pool.secrets())
            for leaf in leaves:
                trace.write("verdict", **leaf.to_json())
            trace.close()
        runs = [(c, c.tests) for c in mine if c.tests is not None]
        top = min(runs, key=lambda pair: pair[1].failing, default=None)
        refused = "; ".join(c.verdict.errors for c in mine if c.verdict and c.verdict.errors)
        outcome = OutcomeRecord.of_runs(
            rnd.base.run,
            top[1] if top else None,
            applied=top[0].verdict.applied if top and top[0].verdict else [],
            refused=refused or ("" if mine else attempt.job.reason or "no answer"),
            leaves=leaves,
            id=attempt.job.episode,
        )
        self.session.episodes.outcome(outcome)
        if attempt.job.recorded is not None:
            self.report.episodes.append(attempt.job.recorded.with_outcome(outcome))


class _Stopper:
    """Stops a round's remaining work once a candidate is green: engines finish early, and
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
