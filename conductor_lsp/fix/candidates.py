"""The fix loop's vocabulary: states, candidates, verdicts and rounds.

A round starts from a *state* (the job's start with some files changed, and the
whole-suite run that judged it). Its plans run; every leaf's answer is a *candidate*;
each candidate gets a *verdict* from the tests in its own sandbox. The best verified
state so far is where the next round starts and what the user's files become at the end.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from ..conductor.static import strongest
from ..episodes.records import LEAF_REFUSED_KEEP, Leaf
from ..plan import Lane
from ..runtime.results import JobResult, StepResult
from ..testrun import TestRun


@dataclass(frozen=True)
class State:
    """The job's start with ``files`` (path -> bytes) written over it, judged by ``run``."""

    files: Mapping[str, bytes]
    run: TestRun
    label: str = "the start"

    def beats(self, other: State) -> bool:
        return (self.run.passed and not other.run.passed) or self.run.failing < other.run.failing


@dataclass
class Verdict:
    """What the tests said of one candidate (``tests`` is None when nothing was applied)."""

    applied: list[str] = field(default_factory=list)
    errors: str = ""
    tests: TestRun | None = None
    notes: tuple[str, ...] = ()
    #: The same edit as an earlier candidate on the same state: that verdict, reused.
    repeated: bool = False

    @property
    def green(self) -> bool:
        return self.tests is not None and self.tests.passed

    def text(self) -> str:
        """One line: green, N failing, or why nothing was tested."""
        if self.tests is None:
            why = (self.errors or "the answer held no edit").strip().splitlines()
            return f"no edit applied: {why[0] if why else ''}"
        state = "green" if self.tests.passed else f"{self.tests.failing} failing"
        return state + (" (the same edit as before)" if self.repeated else "")


@dataclass
class Candidate:
    """One leaf's answer in one round, and what became of it."""

    round: int
    step: StepResult
    #: Which of the round's plans gave it.
    lane: Lane = Lane.PLAN
    verdict: Verdict | None = None
    #: Its state when its edit applied and a whole-suite run judged it.
    state: State | None = None

    @property
    def worker(self) -> str:
        return self.step.step.worker

    @property
    def tests(self) -> TestRun | None:
        """The run that judged its edit (None: not judged, or nothing applied)."""
        return self.verdict.tests if self.verdict else None

    @property
    def green(self) -> bool:
        return self.verdict is not None and self.verdict.green

    @property
    def order(self) -> tuple[int, int]:
        """Its place in the round's plans, which breaks ties: not the order in which the
        answers came back. The floor comes before a conductor's plan, so that a tie leaves
        the next round where static's next round starts."""
        return (self.lane is Lane.CONDUCTOR, self.step.index)

    @property
    def label(self) -> str:
        lane = f"{self.lane} " if self.lane else ""
        return f"round {self.round}, {lane}step {self.step.index} ({self.worker})"

    def leaf(self) -> Leaf | None:
        """Its own verdict as the episode records it (None: never judged, another
        candidate was green first, so it says nothing)."""
        v = self.verdict
        if v is None:
            return None
        failing = None if v.tests is None else v.tests.failing
        refused = v.errors[:LEAF_REFUSED_KEEP]
        return Leaf(self.step.index, self.worker, tuple(v.applied), refused, v.green, failing)


@dataclass
class Attempt:
    """One job of a round: a plan and its run, in its lane; ``brief``, the task as its
    conductor saw it."""

    lane: Lane
    job: JobResult
    brief: str = ""


@dataclass
class Round:
    index: int
    base: State
    attempts: list[Attempt] = field(default_factory=list)
    candidates: list[Candidate] = field(default_factory=list)
    #: The files the round showed (paths).
    shown: list[str] = field(default_factory=list)

    def texts(self) -> list[str]:
        """Every step's answer, leaves or not (an analysis may name a file)."""
        return [s.text for a in self.attempts for s in a.job.steps if s.ok]

    def escalates(self) -> bool:
        """Whether the pool's strongest model worker gave none of this round's candidates:
        the next round asks it (a policy or a conductor began with a cheaper one), so a
        cheap answer that changed nothing is no reason yet to call the job stuck."""
        infos = next((a.job.workers for a in self.attempts if a.job.workers), ())
        models = [w for w in infos if not w.is_tool]
        if not models or not self.candidates:
            return False
        top = strongest(models).name
        return all(c.worker != top for c in self.candidates)

    def of(self, attempt: Attempt) -> list[Candidate]:
        return [c for c in self.candidates if c.lane is attempt.lane]

    def best(self) -> Candidate | None:
        """The candidate with the fewest failing tests on a whole run (plan order breaks
        ties), if it is not worse than the round's start."""
        judged = [c for c in self.candidates if c.state is not None]
        if not judged:
            return None
        top = min(judged, key=lambda c: (c.state.run.failing if c.state else 0, *c.order))
        assert top.state is not None
        return top if top.state.run.failing <= self.base.run.failing else None

    def lead(self) -> Candidate | None:
        """The candidate the next round debugs from (its files and its history): the best,
        if it beat the round's start; else the first in plan order, static's own call
        where the floor runs, so the strongest's retry starts where static's retry starts."""
        best = self.best()
        if best is not None and best.state is not None and best.state.beats(self.base):
            return best
        return min(self.candidates, key=lambda c: c.order, default=None)

    def next_base(self) -> State:
        """Where the next round starts: the lead's state unless it is worse than this
        round's start (static's own rule when it is the only candidate)."""
        lead = self.lead()
        state = lead.state if lead is not None else None
        return (
            state if state is not None and state.run.failing <= self.base.run.failing else self.base
        )


def escalated(rounds: Sequence[Round]) -> bool:
    """Whether the pool's strongest worker has given no candidate in any round yet."""
    return bool(rounds) and all(r.escalates() for r in rounds)
