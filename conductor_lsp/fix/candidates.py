"""The fix loop's vocabulary: states, candidates, verdicts, attempts and rounds.

Each lane of a round (``plan.Lane``) starts from a *state* of its own (the job's start
with some files changed, and the whole-suite run that judged it). Its plans run in
waves (``attempts``); every leaf's answer is a *candidate*; each candidate gets a
*verdict* from the tests in its own sandbox. The best verified state so far is what the
user's files become at the end.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from ..conductor.shapes import is_follow_up
from ..edits import no_edit
from ..episodes.records import LEAF_REFUSED_KEEP, Leaf
from ..plan import Lane
from ..runtime.results import RunResult, StepResult
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
            return no_edit(self.errors)
        return self.tests.state() + (" (the same edit as before)" if self.repeated else "")


@dataclass
class Candidate:
    """One leaf's answer in one round, and what became of it."""

    round: int
    step: StepResult
    #: Which of the round's plans gave it.
    lane: Lane = Lane.PLAN
    verdict: Verdict | None = None
    #: Which of the round's waves asked it (1: the first).
    wave: int = 1
    #: Its state when its edit applied and a whole-suite run judged it.
    state: State | None = None
    #: The shape it came from, for people ('' for a call alone): "architect: big
    #: describes, small edits", or a repair.
    shape: str = ""

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
    def order(self) -> tuple[bool, int, int]:
        """Its place in the round's plans, which breaks ties: not the order in which the
        answers came back. The floor comes first, so that a tie leaves the other lanes
        where static's next round starts; then the waves in the order they ran."""
        return (self.lane is not Lane.FLOOR, self.wave, self.step.index)

    @property
    def label(self) -> str:
        lane = f"{self.lane} " if self.lane else ""
        wave = f", wave {self.wave}" if self.wave > 1 else ""
        return (
            f"round {self.round}{wave}, {lane}step {self.step.index} ({self.shape or self.worker})"
        )

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
    """One run of a round: a plan and its result, in its lane and wave, from its lane's
    ``base``; ``brief``, the task as its conductor saw it."""

    lane: Lane
    run: RunResult
    brief: str = ""
    base: State | None = None
    wave: int = 1

    @property
    def follow_up(self) -> bool:
        """Whether it only followed up earlier answers (reviews, repairs): no lane's own call."""
        return bool(self.run.steps) and all(is_follow_up(s.step.subtask) for s in self.run.steps)


@dataclass
class Round:
    index: int
    attempts: list[Attempt] = field(default_factory=list)
    candidates: list[Candidate] = field(default_factory=list)
    #: The files each lane's task showed (paths).
    shown: dict[Lane, list[str]] = field(default_factory=dict)
    #: The floor's call this round: its worker, and its price as estimated beforehand.
    strongest: str = ""
    floor_estimate: float = 0.0

    def floor_cost(self) -> float:
        """What the floor (static's call to the strongest worker) paid this round, or,
        where it did not run, would have paid: the baseline's bill."""
        floor = [a for a in self.attempts_in(Lane.FLOOR) if not a.follow_up]
        return sum(a.run.cost for a in floor) if floor else self.floor_estimate

    def texts(self, lane: Lane | None = None) -> list[str]:
        """Every step's answer (of one lane), leaves or not (an analysis may name a file)."""
        return [
            s.text
            for a in self.attempts
            if lane is None or a.lane is lane
            for s in a.run.steps
            if s.ok
        ]

    def of(self, attempt: Attempt) -> list[Candidate]:
        return [c for c in self.candidates if c.lane is attempt.lane and c.wave == attempt.wave]

    def in_lane(self, lane: Lane) -> list[Candidate]:
        return [c for c in self.candidates if c.lane is lane]

    def attempts_in(self, lane: Lane) -> list[Attempt]:
        return [a for a in self.attempts if a.lane is lane]


def best_of(candidates: Sequence[Candidate], base: State) -> Candidate | None:
    """The candidate with the fewest failing tests on a whole run (plan order breaks
    ties), if it is not worse than ``base``."""
    judged = [c for c in candidates if c.state is not None]
    if not judged:
        return None
    top = min(judged, key=lambda c: (c.state.run.failing if c.state else 0, *c.order))
    assert top.state is not None
    return top if top.state.run.failing <= base.run.failing else None


def lead_of(candidates: Sequence[Candidate], base: State) -> Candidate | None:
    """The candidate a lane's next round debugs from (its files and its history): the
    best, if it beat ``base``; else the first in plan order (static's own call where the
    floor ran), so the strongest's retry starts where static's retry starts."""
    best = best_of(candidates, base)
    if best is not None and best.state is not None and best.state.beats(base):
        return best
    return min(candidates, key=lambda c: c.order, default=None)


def next_state(candidates: Sequence[Candidate], base: State) -> State:
    """Where a lane's next round starts: its lead's state unless that is worse than
    ``base`` (static's own rule when it is the only candidate)."""
    lead = lead_of(candidates, base)
    state = lead.state if lead is not None else None
    return state if state is not None and state.run.failing <= base.run.failing else base
