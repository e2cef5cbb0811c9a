"""Fix and test: checkpoint, test, and in each round plan, judge every candidate, keep the best.

Candidates are applied and tested in sandboxes (``fix.sandbox``), never in the user's
files: those change once, when the job ends, to the best verified state (green, or
else the one with the fewest failing tests when it beats the start; ``fix.finish``). A
file the user changed during the job is never overwritten; the fix is kept in a
checkpoint instead. A round is ``fix.round``; when to give up, ``fix.stuck``; stops are
exceptions (``fix.stops``, and ``errors.BudgetExceeded``) caught in ``run`` alone.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable

from ..checkpoints import store as cp
from ..checkpoints.store import Checkpoint
from ..config.schema import Config
from ..errors import BudgetExceeded, ConfigError
from ..runtime.budget import Meter
from ..runtime.events import EventSink, LoopNote, ignore
from ..runtime.session import Session
from ..testrun import TestRun, run_tests
from .candidates import Round, State, escalated
from .context import named_files
from .finish import Finisher
from .history import Histories
from .repo_map import RepoMap, repo_map
from .report import FixReport
from .review import Reviewer
from .round import RoundRunner
from .sandbox import Workbench
from .stops import FixOutcome, Green, Stop
from .stuck import StuckRule
from .verify import Verifier

DEFAULT_INSTRUCTION = (
    "Make the failing tests pass by fixing the code under test. "
    "Do not weaken, skip or delete tests."
)


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
        if not session.config.test.command:
            raise ConfigError("no test command: set [test] command or pass --test")
        self.session = session
        self.root = session.config.root
        self.instruction = instruction
        self.on_event = on_event
        self.on_tests = on_tests
        self.busy = busy
        self.review = review
        self.meter = Meter(session.config.budget)
        #: The job's id in episodes: its start checkpoint, which undo names too.
        self.job_id = ""
        #: The best verified state so far: what the workspace becomes at the end.
        self.best: State | None = None
        #: The workspace's outline, read once a job (the job writes only at its end).
        self.repo: RepoMap | None = None

    @property
    def config(self) -> Config:
        return self.session.config

    def note(self, k: int, message: str) -> None:
        self.on_event(LoopNote(k, message))

    async def run(self) -> FixReport:
        started = time.monotonic()
        start_cp, first = await self._begin()
        report = FixReport(FixOutcome.FAILED, "", first, first, start_cp)
        bench = await asyncio.to_thread(Workbench, self.root, start_cp)
        t = self.config.test
        verifier = Verifier(
            bench,
            t.command,
            t.timeout,
            self.config.edits,
            allow_test_edits=self.config.fix.allow_test_edits,
            jobs=t.jobs,
        )
        self.best = start = State({}, first)
        interrupted = False
        try:
            await self._rounds(start, report, verifier)
        except Stop as stop:
            report.outcome, report.reason = stop.outcome, stop.reason
        except BudgetExceeded as e:
            report.outcome, report.reason = FixOutcome.BUDGET, str(e)
        except asyncio.CancelledError:
            report.outcome, report.reason, interrupted = FixOutcome.CANCELLED, "cancelled", True
        finally:
            await bench.close()
        if report.outcome is FixOutcome.GREEN:
            report.reason = ""
        await self._finish(report, start_cp, self.best or start)
        report.seconds = time.monotonic() - started
        self.on_tests(report.end)
        if self.config.learn.online:
            await asyncio.to_thread(self.session.learn_online, report.episodes)
        if interrupted:
            raise asyncio.CancelledError
        return report

    async def _begin(self) -> tuple[Checkpoint, TestRun]:
        """The start checkpoint (the job's id), the first test run, the repository map."""
        start_cp = await asyncio.to_thread(
            cp.create, self.root, f"{cp.JOB_START}: {self.instruction[:60]}"
        )
        self.note(0, f"checkpoint {start_cp.ref}")
        self.job_id = start_cp.ref
        t = self.config.test
        first = await run_tests(t.command, self.root, t.timeout)
        self.on_tests(first)
        self.note(0, f"tests: {_state(first)}")
        if self.config.fix.repo_map_chars > 0:
            self.repo = await asyncio.to_thread(repo_map, self.root, self.config.edits.all_deny())
        return start_cp, first

    async def _rounds(self, start: State, report: FixReport, verifier: Verifier) -> None:
        """Round after round until a stop; a time budget bounds all of it, tests included."""
        try:
            async with asyncio.timeout(self.meter.seconds_left()):
                await self._each_round(start, report, verifier)
        except TimeoutError:
            raise BudgetExceeded(self.meter.time_spent()) from None

    async def _each_round(self, start: State, report: FixReport, verifier: Verifier) -> None:
        runner = RoundRunner(
            self.session,
            self.meter,
            verifier,
            self.instruction,
            self.job_id,
            self.on_event,
            self.note,
            report,
            self.repo,
        )
        base, histories, stuck = start, Histories(), StuckRule()
        limit = self.config.budget.max_iterations
        named: list[str] = []
        for k in range(1, limit + 1):
            if base.run.passed:
                raise Green()
            self.meter.check()
            floor = self._floor_due(report, start)
            rnd = await runner.run(k, start if floor else base, histories, named, floor=floor)
            report.rounds.append(rnd)
            self._keep_best(rnd, start)
            histories.after(rnd, floor_beside=self.session.conductor.asks_model)
            spent = next((a.job.reason for a in rnd.attempts if a.job.outcome == "budget"), "")
            if spent:
                raise BudgetExceeded(spent)
            new = self._named(rnd, named)
            named += new
            stuck.check(rnd, base, shows_more=bool(new))
            base = rnd.next_base()
        raise BudgetExceeded(f"budget: iterations ({limit} rounds run)")

    def _keep_best(self, rnd: Round, start: State) -> None:
        """A green candidate ends the job; else the round's best is kept if it beats the
        best so far."""
        green = next((c for c in rnd.candidates if c.green), None)
        if green is not None and green.state is not None:
            self.best = green.state
            raise Green()
        best = rnd.best()
        if best is not None and best.state is not None and best.state.beats(self.best or start):
            self.best = best.state

    def _floor_due(self, report: FixReport, start: State) -> bool:
        """After a routing policy's cheaper picks beat nothing, the strongest is asked what
        static asks it first (the floor), not to retry their failure: with the real pair
        those retries lost tasks that static's first call solved."""
        s = self.session
        led = s.policy is not None and not s.conductor.asks_model
        return self.config.fix.floor and led and self.best is start and escalated(report.rounds)

    def _named(self, rnd: Round, named: list[str]) -> list[str]:
        """Files this round's answers named that no round showed yet (see ``named_files``)."""
        room = self.config.fix.named_files - len(named)
        if room <= 0:
            return []
        known = self.repo.files if self.repo is not None else ()
        deny = self.config.edits.all_deny()
        found = named_files(self.root, rnd.texts(), {*rnd.shown, *named}, deny, known, room)
        if found:
            self.note(rnd.index, f"the next round also shows {', '.join(found)} (named)")
        return found

    async def _finish(self, report: FixReport, start_cp: Checkpoint, best: State) -> None:
        """The one write (or a checkpoint instead); a fix the user pruned in review is
        tested as written, and the episodes learn it was not wanted as it was."""
        cfg = self.config
        finisher = Finisher(
            self.root, start_cp, cfg.edits.all_deny(), self.busy, self.note, self.review
        )
        await finisher.finish(report, best, write=report.outcome is not FixOutcome.CANCELLED)
        if report.rejected:
            self.session.episodes.review(self.job_id, report.rejected)
            if report.written:
                report.end = await run_tests(cfg.test.command, self.root, cfg.test.timeout)
                self.note(0, f"tests after review: {_state(report.end)}")


def _state(run: TestRun) -> str:
    return "passed" if run.passed else f"{run.failing} failing"


__all__ = ["DEFAULT_INSTRUCTION", "FixLoop", "FixReport"]
