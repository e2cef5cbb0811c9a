"""The lanes of a fix job, each with its own trajectory.

The floor lane is static's own: its first call, then its own retry, from its own state
and told only of its own attempts, for ``max_iterations`` rounds or until static would
stop. Every other candidate is extra and never changes the floor's prompts: search's
other leaves, a routing policy's picks, a model conductor's plan. Those run in one more
lane, which starts from the best state any lane found (a round that beats the start may
lead it, never the floor) and is told of the leaf it follows.

- ``static`` alone (also ``single:NAME``): the floor lane only.
- every other strategy: the floor lane and the strategy's lane (``Lane.PLAN``, or
  ``Lane.CONDUCTOR`` for a model conductor); ``[fix] floor = false`` leaves the
  strategy's lane alone, with the whole plan.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from ..plan import Lane
from ..runtime.session import Session
from .candidates import Round, State, lead_of, next_state
from .history import describe, follow
from .stops import Stuck
from .stuck import StuckRule


@dataclass
class LaneState:
    """Where a lane's next round starts, what it is told, and whether it goes on."""

    lane: Lane
    base: State
    history: str = ""
    #: Files its answers named that its later rounds show (``[fix] named_files``).
    named: list[str] = field(default_factory=list)
    stuck: StuckRule = field(default_factory=StuckRule)
    #: Why it stopped ('' while it goes on).
    stopped: str = ""
    #: Whether the stop rule stopped it (not its own stuck rule).
    gave_up: bool = False

    @property
    def active(self) -> bool:
        return not self.stopped

    @property
    def floor(self) -> bool:
        return self.lane is Lane.FLOOR

    def stop(self, why: str, *, gave_up: bool = False) -> None:
        self.stopped, self.gave_up = why, gave_up

    def after(self, rnd: Round, *, shows_more: bool) -> None:
        """Move on from ``rnd``: the next base and history, and the lane's stuck rule."""
        attempts = rnd.attempts_in(self.lane)
        if not attempts:  # the lane ran nothing this round (a green came first)
            return
        before = self.base
        if self.floor:
            mine = rnd.in_lane(Lane.FLOOR)
            self.history = describe(rnd, attempts)
            self.base = next_state(mine, before)
        else:
            mine = rnd.in_lane(self.lane)
            everyone = rnd.candidates
            lead = lead_of(everyone, before)
            if self.lane is Lane.CONDUCTOR or lead is None or len(everyone) < 2:
                self.history = describe(rnd)
            else:
                self.history = follow(rnd, lead)
            self.base = next_state(everyone, before)
        try:
            self.stuck.check(mine, before, shows_more=shows_more)
        except Stuck as e:
            self.stop(str(e))


def lanes_for(session: Session, start: State) -> list[LaneState]:
    """The lanes a job runs, each from ``start``."""
    return [LaneState(lane, start) for lane in session.planner.lanes(session.config.fix.floor)]
