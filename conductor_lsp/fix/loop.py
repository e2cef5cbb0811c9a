"""Fix and test: checkpoint, run tests, plan, run, apply edits, test again.

Stops on green, on budget (calls, $, seconds, iterations) or when stuck (same
failures after an edit, the same edit twice, or no applicable edit twice in a
row). Keeps the best state seen; never ends worse than it started.
"""

from __future__ import annotations

import asyncio
import dataclasses
import hashlib
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Literal

from ..conductor.static import static_plan
from ..edits.parse import parse_edits
from ..edits.workspace import DiskEdit, apply_output_to_disk
from ..errors import BudgetExceeded, ConfigError
from ..plan import Plan
from ..runtime.budget import Meter
from ..runtime.events import EventSink, LoopNote, ignore
from ..runtime.results import JobResult
from ..runtime.session import Session
from ..task import Task
from ..testrun import TestRun, run_tests
from ..usage import Tally
from . import checkpoint as cp
from .context import context_files, describe_round
from .guard import test_guard

Outcome = Literal["green", "budget", "stuck", "failed", "cancelled"]
DEFAULT_INSTRUCTION = (
    "Make the failing tests pass by fixing the code under test. "
    "Do not weaken, skip or delete tests."
)


@dataclass
class Iteration:
    index: int
    job: JobResult | None
    applied: list[str]
    edit_errors: str
    tests: TestRun | None
    #: "conductor" or "baseline" in a round the floor ran; '' otherwise.
    by: str = ""


@dataclass
class FixReport:
    outcome: Outcome
    reason: str
    start: TestRun
    end: TestRun
    checkpoint: cp.Checkpoint
    iterations: list[Iteration] = field(default_factory=list)
    restored: str = ""
    diff: str = ""
    seconds: float = 0.0
    #: Per worker, over all rounds.
    tallies: dict[str, Tally] = field(default_factory=dict)
    #: The conductor's calls over all rounds.
    conductor: Tally = field(default_factory=Tally)

    @property
    def exit_code(self) -> int:
        return 0 if self.end.passed else 1

    @property
    def cost(self) -> float:
        return sum(t.cost for t in self.tallies.values()) + self.conductor.cost


class _Stop(Exception):
    """Ends the loop early with an outcome other than budget (stuck, cancelled)."""

    def __init__(self, outcome: Outcome, reason: str) -> None:
        super().__init__(reason)
        self.outcome, self.reason = outcome, reason


@dataclass
class _State:
    current: TestRun
    #: The best whole run seen, and the checkpoint of the tree it judged.
    best: tuple[TestRun, cp.Checkpoint]
    #: What the next plan is told about the previous round (all of it).
    previous: str = ""
    #: What the baseline is told: only its own previous attempt, as ``static`` would be.
    baseline_previous: str = ""
    last_description: str = ""
    seen_edits: set[str] = field(default_factory=set)
    no_edit_streak: int = 0
    #: An edit is on disk that no whole test run has judged yet.
    unverified: bool = False


class FixLoop:
    def __init__(
        self,
        session: Session,
        *,
        instruction: str = DEFAULT_INSTRUCTION,
        test_command: str | None = None,
        max_iterations: int | None = None,
        on_event: EventSink = ignore,
    ) -> None:
        cfg = session.config
        self.session = session
        self.root = cfg.root
        self.instruction = instruction
        self.command = test_command or cfg.test.command
        if not self.command:
            raise ConfigError("no test command: set [test] command or pass --test")
        self.max_iterations = max_iterations or cfg.budget.max_iterations
        self.on_event = on_event
        self.edits = cfg.edits
        self.allow_test_edits = cfg.fix.allow_test_edits
        self.floor = cfg.fix.floor
        self.meter = Meter(cfg.budget)
        #: The job's id in episodes: its start checkpoint, which undo names too.
        self.job_id = ""
        #: Called with every test run (the server turns failures into diagnostics).
        self.on_tests: Callable[[TestRun], None] = lambda run: None

    def note(self, iteration: int, message: str) -> None:
        self.on_event(LoopNote(iteration, message))

    async def tests(self, previous: TestRun | None) -> TestRun:
        """Failing tests first; the whole suite only once they pass."""
        timeout = self.session.config.test.timeout
        if previous is not None and previous.structured and previous.failures:
            ids = [f.test_id for f in previous.failures]
            first = await run_tests(self.command, self.root, timeout, select=ids)
            if not first.passed:
                self.on_tests(first)
                return first
        run = await run_tests(self.command, self.root, timeout)
        self.on_tests(run)
        return run

    async def run(self) -> FixReport:
        started = time.monotonic()
        start_cp = await asyncio.to_thread(
            cp.create, self.root, f"{cp.JOB_START}: {self.instruction[:60]}"
        )
        self.note(0, f"checkpoint {start_cp.ref}")
        self.job_id = start_cp.ref
        first = await self.tests(None)
        self.note(0, f"tests: {_state(first)}")
        report = FixReport("green", "", first, first, start_cp)
        state = _State(first, (first, start_cp))
        try:
            async with asyncio.timeout(self.meter.seconds_left()):  # a hard cap, tests included
                for k in range(1, self.max_iterations + 1):
                    if state.current.passed:
                        break
                    await self._round(k, state, report)
                else:
                    if not state.current.passed:
                        raise BudgetExceeded(
                            f"budget: iterations ({self.max_iterations} rounds run)"
                        )
        except TimeoutError:
            report.outcome, report.reason = "budget", self.meter.time_spent()
            self.note(0, report.reason)
        except BudgetExceeded as e:
            report.outcome, report.reason = "budget", str(e)
        except _Stop as e:
            report.outcome, report.reason = e.outcome, e.reason
        finally:
            await self._settle(state, report, start_cp, started)
        if state.current.passed:
            report.outcome, report.reason = "green", ""
        elif report.outcome == "green":
            report.outcome = "failed"
        return report

    async def _round(self, k: int, state: _State, report: FixReport) -> None:
        """One round: a plan, its edits and a test run; raises to stop the loop.

        With the floor on, a conductor's own plan that does not make the tests pass is
        followed, from the round's starting state, by exactly the call the ``static``
        strategy makes in this round: so a conductor never solves fewer tasks than the
        baseline, it can only solve them cheaper or solve more."""
        self.meter.check()
        start = state.current
        files = await asyncio.to_thread(context_files, self.root, start, self.edits.all_deny(), [])
        task = Task(self.instruction, tuple(files), test_failures=start.summary())
        tried = ""
        if self.floor and self.session.conductor.asks_model:
            round_cp = await asyncio.to_thread(cp.create, self.root, f"{cp.JOB_ROUND} {k}")
            ask = dataclasses.replace(task, previous=state.previous)
            job, disk = await self._attempt(ask, state, report, None, None, k, "conductor")
            if job.plan.call is None or job.plan.error:  # it fell back: that was the baseline
                await self._conclude(k, job, disk, state, report, "")
                return
            after = await self._judge(k, job, disk, state, report, "conductor")
            if after is not None and after.passed:
                state.current = after
                return
            tried = state.last_description
            self.note(k, "the plan did not make the tests pass: the baseline runs (the floor)")
            await asyncio.to_thread(cp.restore, self.root, round_cp, save=False)
            state.current, state.unverified = start, False
        ask = dataclasses.replace(
            task, previous=state.baseline_previous if tried else state.previous
        )
        plan = static_plan(
            self.session.pool.infos(ask, self.meter.limits.max_cost - self.meter.cost),
            self.session.config.conductor.max_steps,
            ask,
        ) if tried else None  # fmt: skip
        by = "baseline" if tried else ""
        job, disk = await self._attempt(ask, state, report, plan, state.seen_edits, k, by)
        await self._conclude(k, job, disk, state, report, tried)

    async def _judge(
        self, k: int, job: JobResult, disk: DiskEdit, state: _State, report: FixReport, by: str
    ) -> TestRun | None:
        """Record an attempt and test it; None when it wrote nothing."""
        errors = disk.result.report()
        episodes = self.session.episodes
        if not disk.written:
            # Say why truthfully: when the budget ended the job, that is the reason.
            why = job.reason if job.outcome == "budget" else errors or "the output held no edit"
            episodes.outcome(job.episode, state.current, None, refused=why)
            self.note(k, f"no edit applied: {why.splitlines()[0]}")
            report.iterations.append(Iteration(k, job, [], why, None, by))
            state.last_description = describe_round(job, [], why, None)
            if job.outcome == "budget":
                raise BudgetExceeded(job.reason)
            return None
        state.unverified = True
        # What the job left, so a plain undo can tell the job's work from the user's later.
        await asyncio.to_thread(cp.create, self.root, f"{cp.JOB_STEP}, iteration {k}")
        self.note(k, f"edited {', '.join(disk.written)} ({', '.join(disk.result.matches)})")
        for line in disk.result.notes:
            self.note(k, line)
        after = await self.tests(state.current)
        episodes.outcome(job.episode, state.current, after, applied=disk.written, refused=errors)
        self.note(k, f"tests: {_state(after)}")
        report.iterations.append(Iteration(k, job, disk.written, errors, after, by))
        state.last_description = describe_round(job, disk.written, errors, after)
        if not after.selected and after.failing < state.best[0].failing:  # whole runs only
            label = f"{cp.JOB_BEST}, iteration {k}"
            state.best = (after, await asyncio.to_thread(cp.create, self.root, label))
        state.unverified = bool(after.selected)
        return after

    async def _conclude(
        self, k: int, job: JobResult, disk: DiskEdit, state: _State, report: FixReport, tried: str
    ) -> None:
        """The round's deciding attempt: test it, tell the next round, notice when stuck."""
        after = await self._judge(k, job, disk, state, report, "baseline" if tried else "")
        state.baseline_previous = state.last_description
        state.previous = (
            f"{tried}\nThen the baseline (one call to the strongest worker):\n"
            f"{state.last_description}"
            if tried
            else state.last_description
        )
        if after is None:
            state.no_edit_streak += 1
            if state.no_edit_streak >= 2:
                raise _Stop("stuck", "no applicable edit twice in a row")
            return
        state.no_edit_streak = 0
        same = after.signature() == state.current.signature()
        state.current = after
        if same and not after.passed:
            raise _Stop("stuck", "the same failures after an edit")

    async def _attempt(
        self,
        task: Task,
        state: _State,
        report: FixReport,
        plan: Plan | None,
        seen: set[str] | None,
        k: int,
        by: str,
    ) -> tuple[JobResult, DiskEdit]:
        """Run one job (planned, or ``plan``) and apply its answer; counts what it spent.
        ``seen``: the edits proposed before, when proposing one again means stuck."""
        job = await self.session.run(
            task,
            meter=self.meter,
            on_event=self.on_event,
            plan=plan,
            job=self.job_id,
            round=k,
            by=by,
        )
        for name, tally in job.tallies.items():
            report.tallies.setdefault(name, Tally()).merge(tally)
        report.conductor.merge(job.conductor)
        if job.outcome == "cancelled":
            raise _Stop("cancelled", job.reason)
        edits, _ = await asyncio.to_thread(parse_edits, job.output)
        signature = hashlib.sha256(
            repr(sorted((e.path, e.search, e.replace) for e in edits)).encode()
        ).hexdigest()
        if seen is not None and edits and signature in seen:
            report.iterations.append(
                Iteration(len(report.iterations) + 1, job, [], "the same edit again", None)
            )
            raise _Stop("stuck", "the same edit was proposed twice")
        if seen is not None:
            seen.add(signature)
        guard = None if self.allow_test_edits else test_guard(state.current)
        disk = await asyncio.to_thread(
            apply_output_to_disk,
            self.root,
            job.output,
            self.edits,
            targets=task.editable(),
            guard=guard,
        )
        return job, disk

    async def _settle(
        self, state: _State, report: FixReport, start_cp: cp.Checkpoint, started: float
    ) -> None:
        """Whole-suite verdict, the best state restored if the end is worse, the diff.

        When the time budget ran out, no test may run any more: an edit that no whole
        run has judged is undone (back to the best state seen), so the report is true."""
        best_run, best_cp = state.best
        if state.unverified and self.meter.seconds_left() <= 0:
            await asyncio.to_thread(cp.restore, self.root, best_cp)
            report.restored = best_cp.ref
            self.note(0, f"the last edit was not tested in time: restored {best_cp.ref}")
            state.current = report.end = best_run
            await self._finish_record(report, start_cp, started)
            return
        if state.current.selected:  # a partial run says nothing about the other tests
            state.current = await self.tests(None)
        if not state.current.passed and state.current.failing > best_run.failing:
            await asyncio.to_thread(cp.restore, self.root, best_cp)
            report.restored = best_cp.ref
            self.note(0, f"restored the best state ({best_cp.label}): {best_cp.ref}")
            state.current = await self.tests(None)
        report.end = state.current
        await self._finish_record(report, start_cp, started)

    async def _finish_record(
        self, report: FixReport, start_cp: cp.Checkpoint, started: float
    ) -> None:
        """The diff, the time, and a checkpoint of what the job leaves (for undo's check)."""
        report.diff = await asyncio.to_thread(cp.diff, self.root, start_cp)
        await asyncio.to_thread(cp.create, self.root, f"{cp.JOB_END}: {report.outcome}")
        report.seconds = time.monotonic() - started


def _state(run: TestRun) -> str:
    return "passed" if run.passed else f"{run.failing} failing"


__all__ = ["DEFAULT_INSTRUCTION", "FixLoop", "FixReport", "Iteration"]
