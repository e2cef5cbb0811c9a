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
from ..context.files import named_files
from ..context.repo_map import RepoMap, repo_map
from ..context.rounds import DEFAULT_INSTRUCTION
from ..errors import BudgetExceeded, ConfigError
from ..plan import Lane
from ..runtime.budget import Meter
from ..runtime.events import EventSink, LoopNote, ignore
from ..runtime.pulse import heartbeat
from ..runtime.results import RunOutcome
from ..runtime.session import Session
from ..testrun import TestRun, run_tests
from .candidates import Round, State, best_of
from .finish import Finisher
from .lanes import LaneState, lanes_for
from .report import FixReport
from .review import Reviewer
from .round import RoundRunner
from .sandbox import Workbench
from .stops import FixOutcome, GaveUp, Green, Stop, Stuck
from .verify import Verifier


def _no_test_command(untrusted: list[str]) -> str:
    withheld = [u for u in untrusted if u.startswith("test.command ")]
    if withheld:
        return (
            f"the workspace's test command was not run: it is not trusted ({withheld[0]}); "
            "trust it with `conductor-lsp trust PATH`, or pass --test"
        )
    return "no test command: set [test] command or pass --test"


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
            raise ConfigError(_no_test_command(session.config.untrusted))
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
        """The job, start to end, never silent for long (``runtime.pulse``)."""
        async with heartbeat(self.on_event) as self.on_event:
            report = await self._run()
            self.note(0, f"job ended: {report.outcome} in {report.seconds:.1f}s")
        return report

    async def _run(self) -> FixReport:
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
            confine=self.session.confinement(),
            env=t.env,
        )
        self.best = start = State({}, first)
        interrupted = False
        try:
            await self._rounds(start, report, verifier)
        except Stop as stop:
            report.outcome, report.reason = stop.outcome, stop.reason
        except BudgetExceeded as e:
            report.outcome, report.reason = FixOutcome.BUDGET, e.why
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
        first = await run_tests(t.command, self.root, t.timeout, env=t.env)
        self.on_tests(first)
        self.note(0, f"tests: {first.state()}")
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
        if start.run.passed:
            raise Green()
        lanes = lanes_for(self.session, start)
        limit = self.config.budget.max_iterations
        progress = False
        for k in range(1, limit + 1):
            self.meter.check()
            rnd = await runner.run(k, lanes, progress)
            report.rounds.append(rnd)
            self._bill(report, rnd)
            self._keep_best(rnd)
            best = self.best.run.state() if self.best is not None else "?"
            self.note(k, f"round over: best so far {best}; {report.spent(so_far=True)}")
            out_of = next(
                (a.run.reason for a in rnd.attempts if a.run.outcome is RunOutcome.BUDGET), ""
            )
            if out_of:
                raise BudgetExceeded(out_of)
            progress = _progressed(rnd)
            for lane in lanes:
                new = self._named(rnd, lane)
                lane.named += new
                lane.after(rnd, shows_more=bool(new))
            if not any(lane.active for lane in lanes):
                raise _ended(lanes)
        raise BudgetExceeded(f"iterations ({limit} rounds run)")

    def _bill(self, report: FixReport, rnd: Round) -> None:
        """The bill so far, beside what the floor would have cost."""
        report.floor_cost += rnd.floor_cost()
        report.strongest = rnd.strongest or report.strongest

    def _keep_best(self, rnd: Round) -> None:
        """A green candidate ends the job; else the round's best is kept if it beats the
        best so far."""
        green = next((c for c in rnd.candidates if c.green), None)
        if green is not None and green.state is not None:
            self.best = green.state
            raise Green()
        assert self.best is not None
        best = best_of(rnd.candidates, self.best)
        if best is not None and best.state is not None and best.state.beats(self.best):
            self.best = best.state

    def _named(self, rnd: Round, lane: LaneState) -> list[str]:
        """Files the lane's answers named (the floor's own; the other lane's, everyone's)
        that no round of it showed yet (see ``named_files``)."""
        room = self.config.fix.named_files - len(lane.named)
        if room <= 0 or not rnd.attempts_in(lane.lane):
            return []
        known = self.repo.files if self.repo is not None else ()
        deny = self.config.edits.all_deny()
        texts = rnd.texts(Lane.FLOOR if lane.floor else None)
        shown = {*rnd.shown.get(lane.lane, []), *lane.named}
        found = named_files(self.root, texts, shown, deny, known, room)
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
                t = cfg.test
                report.end = await run_tests(t.command, self.root, t.timeout, env=t.env)
                self.note(0, f"tests after review: {report.end.state()}")


__all__ = ["DEFAULT_INSTRUCTION", "FixLoop", "FixReport"]


def _progressed(rnd: Round) -> bool:
    """Whether some candidate of the round beat the state its lane started from."""
    return any(
        c.state is not None and a.base is not None and c.state.beats(a.base)
        for a in rnd.attempts
        for c in rnd.of(a)
    )


def _ended(lanes: list[LaneState]) -> Stop:
    """Why a job whose every lane stopped ends: the stop rule's reason if it stopped one,
    else the lanes' stuck rules (the floor's first)."""
    gave_up = next((lane for lane in lanes if lane.gave_up), None)
    if gave_up is not None:
        return GaveUp(gave_up.stopped)
    return Stuck(next(lane.stopped for lane in lanes if lane.stopped))
