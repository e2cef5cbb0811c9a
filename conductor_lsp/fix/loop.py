"""Fix and test: checkpoint, test, and in each round plan, judge every candidate, keep the best.

Candidates are applied and tested in sandboxes (``fix.sandbox``), never in the user's
files: those change once, when the job ends, to the best verified state (green, or
else the one with the fewest failing tests when it beats the start). A file the user
changed during the job is never overwritten; the fix is kept in a checkpoint instead.
Stops are exceptions (``fix.stops``) caught in ``run`` alone.
"""

from __future__ import annotations

import asyncio
import dataclasses
import time
from collections.abc import Callable
from pathlib import Path

from ..conductor.static import static_plan
from ..errors import BudgetExceeded, ConfigError
from ..plan import Plan
from ..runtime.budget import Meter
from ..runtime.engine import Engine
from ..runtime.events import CandidateJudged, EventSink, LoopNote, ignore
from ..runtime.results import StepResult
from ..runtime.session import Session
from ..runtime.trace import Trace
from ..task import Task
from ..testrun import TestRun, run_tests
from ..usage import Tally
from . import checkpoint as cp
from .candidates import (
    Attempt,
    Candidate,
    Round,
    State,
    describe,
    escalated,
    follow,
    leaf_records,
)
from .context import context_files, named_files
from .finish import Finisher
from .online import learn_online
from .repo_map import RepoMap, repo_map
from .report import FixReport
from .review import Reviewer
from .sandbox import Workbench
from .stops import Cancelled, Green, OutOfBudget, Stop, Stuck
from .verify import Verifier

DEFAULT_INSTRUCTION = (
    "Make the failing tests pass by fixing the code under test. "
    "Do not weaken, skip or delete tests."
)
GREEN_FOUND = "a candidate made the tests pass"


class FixLoop:
    def __init__(
        self,
        session: Session,
        *,
        instruction: str = DEFAULT_INSTRUCTION,
        on_event: EventSink = ignore,
        on_tests: Callable[[TestRun], None] = lambda run: None,
        busy: Callable[[str], bool] = lambda rel: False,
        review: Reviewer | None = None,
    ) -> None:
        """``on_tests`` sees the workspace's test runs (the start and the end); ``busy``
        says whether the user is editing a file right now (an unsaved buffer); ``review``
        shows the final fix's hunks to the user, and only those accepted are written."""
        cfg = session.config
        if not cfg.test.command:
            raise ConfigError("no test command: set [test] command or pass --test")
        self.session = session
        self.root = cfg.root
        self.instruction = instruction
        self.on_event = on_event
        self.on_tests = on_tests
        self.busy = busy
        self.review = review
        self.meter = Meter(cfg.budget)
        #: The job's id in episodes: its start checkpoint, which undo names too.
        self.job_id = ""
        #: The best verified state so far: what the workspace becomes at the end.
        self.best: State | None = None
        #: The workspace's outline, read once a job (the job writes only at its end).
        self.repo: RepoMap | None = None

    def note(self, k: int, message: str) -> None:
        self.on_event(LoopNote(k, message))

    async def run(self) -> FixReport:
        started = time.monotonic()
        cfg = self.session.config
        start_cp = await asyncio.to_thread(
            cp.create, self.root, f"{cp.JOB_START}: {self.instruction[:60]}"
        )
        self.note(0, f"checkpoint {start_cp.ref}")
        self.job_id = start_cp.ref
        first = await run_tests(cfg.test.command, self.root, cfg.test.timeout)
        self.on_tests(first)
        self.note(0, f"tests: {_state(first)}")
        report = FixReport("failed", "", first, first, start_cp)
        if cfg.fix.repo_map_chars > 0:
            self.repo = await asyncio.to_thread(repo_map, self.root, cfg.edits.all_deny())
        bench = await asyncio.to_thread(Workbench, self.root, start_cp)
        verifier = Verifier(
            bench,
            cfg.test.command,
            cfg.test.timeout,
            cfg.edits,
            allow_test_edits=cfg.fix.allow_test_edits,
            jobs=cfg.test.jobs,
        )
        self.best = start = State({}, first)
        interrupted = False
        try:
            await self._rounds(start, report, verifier)
        except Stop as stop:
            report.outcome, report.reason = stop.outcome, stop.reason
        except asyncio.CancelledError:
            report.outcome, report.reason, interrupted = "cancelled", "cancelled", True
        finally:
            await bench.close()
        if report.outcome == "green":
            report.reason = ""
        finisher = Finisher(
            self.root, start_cp, cfg.edits.all_deny(), self.busy, self.note, self.review
        )
        await finisher.finish(report, self.best or start, write=report.outcome != "cancelled")
        if report.rejected:
            # What the user kept was never tested alone: test it now, and teach the
            # episodes that this fix was not wanted as it was.
            self.session.episodes.review(self.job_id, report.rejected)
            if report.written:
                report.end = await run_tests(cfg.test.command, self.root, cfg.test.timeout)
                self.note(0, f"tests after review: {_state(report.end)}")
        report.seconds = time.monotonic() - started
        self.on_tests(report.end)
        if cfg.learn.online:
            await asyncio.to_thread(learn_online, self.session, report)
        if interrupted:
            raise asyncio.CancelledError
        return report

    async def _rounds(self, start: State, report: FixReport, verifier: Verifier) -> None:
        """Round after round until a stop; a time budget bounds all of it, tests included."""
        try:
            async with asyncio.timeout(self.meter.seconds_left()):
                await self._each_round(start, report, verifier)
        except TimeoutError:
            raise OutOfBudget(self.meter.time_spent()) from None
        except BudgetExceeded as e:
            raise OutOfBudget(str(e)) from None

    async def _each_round(self, start: State, report: FixReport, verifier: Verifier) -> None:
        base, previous, no_edit = start, {"": "", "conductor": "", "baseline": ""}, 0
        limit = self.session.config.budget.max_iterations
        named: list[str] = []
        for k in range(1, limit + 1):
            if base.run.passed:
                raise Green()
            self.meter.check()
            floor = self._floor_due(report, start)
            here = start if floor else base
            rnd = await self._round(k, here, previous, verifier, report, named, floor=floor)
            report.rounds.append(rnd)
            green = next((c for c in rnd.candidates if c.green), None)
            if green is not None and green.state is not None:
                self.best = green.state
                raise Green()
            best = rnd.best()
            if best is not None and best.state is not None and best.state.beats(self.best or start):
                self.best = best.state
            for a in rnd.attempts:
                previous[a.by] = describe(rnd, [a])
            previous[""] = previous["conductor"] = describe(rnd)
            lead = rnd.lead()
            if lead is not None and len(rnd.candidates) > 1:
                # the strongest's retry is told of the leaf the next round starts from
                which = "baseline" if self.session.conductor.asks_model else ""
                previous[which] = follow(rnd, lead)
            spent = next((a.job.reason for a in rnd.attempts if a.job.outcome == "budget"), "")
            if spent:
                raise OutOfBudget(spent)
            new = self._named(rnd, named)
            named += new
            runs = [(c, c.tests) for c in rnd.candidates if c.tests is not None]
            no_edit = 0 if runs else no_edit + 1
            if new or rnd.escalates():  # the next round shows or asks more: not stuck yet
                no_edit = 0
            elif no_edit >= 2:
                raise Stuck("no applicable edit twice in a row")
            elif len(runs) < len(rnd.candidates):  # a leaf gave no edit: static would retry
                pass
            elif runs and all(c.verdict and c.verdict.repeated for c, _ in runs):
                raise Stuck("the same edit was proposed twice")
            elif runs and all(run.signature() == base.run.signature() for _, run in runs):
                raise Stuck("the same failures after an edit")
            base = rnd.next_base()
        raise OutOfBudget(f"budget: iterations ({limit} rounds run)")

    def _floor_due(self, report: FixReport, start: State) -> bool:
        """After a routing policy's cheaper picks beat nothing, the strongest is asked what
        static asks it first (the floor), not to retry their failure: with the real pair
        those retries lost tasks that static's first call solved."""
        s = self.session
        led = s.policy is not None and not s.conductor.asks_model
        return s.config.fix.floor and led and self.best is start and escalated(report.rounds)

    def _named(self, rnd: Round, named: list[str]) -> list[str]:
        """Files this round's answers named that no round showed yet (see ``named_files``)."""
        room = self.session.config.fix.named_files - len(named)
        if room <= 0:
            return []
        known = self.repo.files if self.repo is not None else ()
        deny = self.session.config.edits.all_deny()
        found = named_files(self.root, rnd.texts(), {*rnd.shown, *named}, deny, known)[:room]
        if found:
            self.note(rnd.index, f"the next round also shows {', '.join(found)} (named)")
        return found

    async def _round(
        self,
        k: int,
        base: State,
        previous: dict[str, str],
        verifier: Verifier,
        report: FixReport,
        named: list[str],
        *,
        floor: bool = False,
    ) -> Round:
        """Run the round's plans; judge every leaf as it answers; stop the rest once one is
        green. With the floor, the baseline's own call runs beside a conductor's plan, or
        (``floor``) alone, as the round after a policy's cheaper picks."""
        rnd = Round(k, base)
        cfg = self.session.config
        box = await verifier.bench.open(base.files, f"r{k}-context")
        try:
            files = await asyncio.to_thread(
                context_files, box.path, base.run, cfg.edits.all_deny(), named
            )
        finally:
            await verifier.bench.discard(box)
        rnd.shown = [f.path for f in files]
        outline = ""
        if self.repo is not None:
            outline = await asyncio.to_thread(self.repo.render, rnd.shown, cfg.fix.repo_map_chars)
        task = Task(
            self.instruction,
            tuple(files),
            test_failures=base.run.summary(),
            repo_map=outline,
        )
        plans: list[tuple[str, Task, Plan | None]] = [("", task, None)]
        if (cfg.fix.floor and self.session.conductor.asks_model) or floor:
            # static's own call, told only of its own earlier attempts (none before a floor
            # round: the strongest has not answered yet)
            ask = dataclasses.replace(task, previous=previous["baseline"])
            infos = self.session.infos(ask, self.meter)
            baseline = static_plan(infos, cfg.conductor.max_steps, ask)
            mine = [] if floor else [("conductor", task, None)]
            plans = [*mine, ("baseline", ask, baseline)]
        stopper = _Stopper()
        checks: list[asyncio.Task[None]] = []

        def leaf(by: str, ask: Task) -> Callable[[StepResult], None]:
            def on_leaf(step: StepResult) -> None:
                cand = Candidate(k, step, by)
                rnd.candidates.append(cand)
                checks.append(
                    asyncio.create_task(self._check(cand, base, ask, verifier, stopper, checks))
                )

            return on_leaf

        async def attempt(by: str, ask: Task, plan: Plan | None) -> Attempt:
            ask = ask if by == "baseline" else dataclasses.replace(ask, previous=previous[by])
            me = asyncio.current_task()
            assert me is not None
            job = await self.session.run(
                ask,
                meter=self.meter,
                on_event=self.on_event,
                plan=plan,
                engine_ref=stopper.ref(me),
                on_leaf=leaf(by, ask),
                job=self.job_id,
                round_index=k,
                by=by,
            )
            for name, tally in job.tallies.items():
                report.tallies.setdefault(name, Tally()).merge(tally)
            report.conductor.merge(job.conductor)
            return Attempt(by, job, ask.brief())

        tasks = [asyncio.create_task(attempt(*p)) for p in plans]
        try:
            done = await asyncio.gather(*tasks, return_exceptions=True)
            for result in done:  # an attempt cancelled for a green candidate is not one
                if isinstance(result, Exception):
                    raise result
            rnd.attempts = [r for r in done if isinstance(r, Attempt)]
            for outcome in await asyncio.gather(*checks, return_exceptions=True):
                if isinstance(outcome, Exception):
                    raise outcome
        finally:
            for t in [*tasks, *checks]:
                t.cancel()
            await asyncio.gather(*tasks, *checks, return_exceptions=True)
        for a in rnd.attempts:
            self._record(rnd, a)
            if a.job.outcome == "cancelled":
                raise Cancelled(a.job.reason or "cancelled")
        return rnd

    async def _check(
        self,
        cand: Candidate,
        base: State,
        task: Task,
        verifier: Verifier,
        stopper: _Stopper,
        checks: list[asyncio.Task[None]],
    ) -> None:
        self.note(cand.round, f"testing {cand.label} in a sandbox")
        await verifier.judge(cand, base, task)
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
        verdict at the end of the job's trace."""
        mine = rnd.of(attempt)
        if attempt.job.trace_path:
            trace = Trace(Path(attempt.job.trace_path), self.session.pool.secrets())
            for record in leaf_records(mine):
                trace.write("verdict", **record)
            trace.close()
        runs = [(c, c.tests) for c in mine if c.tests is not None]
        top = min(runs, key=lambda pair: pair[1].failing, default=None)
        refused = "; ".join(c.verdict.errors for c in mine if c.verdict and c.verdict.errors)
        self.session.episodes.outcome(
            attempt.job.episode,
            rnd.base.run,
            top[1] if top else None,
            applied=top[0].verdict.applied if top and top[0].verdict else [],
            refused=refused or ("" if mine else attempt.job.reason or "no answer"),
            leaves=leaf_records(mine),
        )


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


def _state(run: TestRun) -> str:
    return "passed" if run.passed else f"{run.failing} failing"


__all__ = ["DEFAULT_INSTRUCTION", "FixLoop", "FixReport"]
