"""What a fix job reports: its outcome, rounds and candidates, what it wrote, and the bill."""

from __future__ import annotations

from dataclasses import dataclass, field

from ..checkpoints import store as cp
from ..episodes.records import Episode
from ..testrun import TestRun
from ..usage import Tally
from .candidates import Candidate, Round
from .stops import FixOutcome


@dataclass
class FixReport:
    outcome: FixOutcome
    reason: str
    start: TestRun
    end: TestRun
    checkpoint: cp.Checkpoint
    rounds: list[Round] = field(default_factory=list)
    #: Files the job changed in the workspace (once, at the end).
    written: list[str] = field(default_factory=list)
    #: The checkpoint taken after the write (None: nothing written).
    end_checkpoint: cp.Checkpoint | None = None
    #: A verified fix that was not written (files changed meanwhile, or cancelled).
    kept: str = ""
    #: Which candidate's state the job ended with ('' when no state beat the start).
    best: str = ""
    #: Hunks the user rejected in review, each with its reason (``path:lines: reason``).
    rejected: list[str] = field(default_factory=list)
    #: The user asked, in review, for another try with those reasons.
    again: bool = False
    diff: str = ""
    seconds: float = 0.0
    #: Per worker, over all rounds and candidates.
    tallies: dict[str, Tally] = field(default_factory=dict)
    #: The conductor's calls over all rounds.
    conductor: Tally = field(default_factory=Tally)
    #: What the floor would have cost (static's call to the strongest worker): its own
    #: calls where it ran, else its price on the round's prompt (an estimate, shown "~").
    floor_cost: float = 0.0
    #: The pool's strongest worker (whose bill ``floor_cost`` is).
    strongest: str = ""
    #: Each plan's episode with its outcome joined, as recorded (what online learning reads).
    episodes: list[Episode] = field(default_factory=list)

    @property
    def exit_code(self) -> int:
        return 0 if self.end.passed else 1

    def tests(self) -> str:
        """What the tests said at the start and the end, as every door says it
        ("1 failing -> passed")."""
        return f"{self.start.state()} -> {self.end.state()}"

    def spent(self, *, so_far: bool = False) -> str:
        """``$0.0040 so far; big alone ~$0.0110``: the bill beside static's."""
        floor = f"; the floor ({self.strongest}) ~${self.floor_cost:.4f}" if self.strongest else ""
        return f"${self.cost:.4f}{' so far' if so_far else ''}{floor}"

    @property
    def cost(self) -> float:
        return sum(t.cost for t in self.tallies.values()) + self.conductor.cost

    @property
    def candidates(self) -> list[Candidate]:
        return [c for r in self.rounds for c in r.candidates]
