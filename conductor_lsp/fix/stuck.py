"""When a lane's round changed nothing, the lane is stuck: another round would ask the same.

The rules, after each round of a lane that was not green:
- no applicable edit twice in a row;
- every candidate proposed an edit already judged on that state;
- every candidate left exactly the failures the lane's round started from.

Never while the next round shows more (a file an answer named that no round showed
yet). A round where some leaf gave no edit is not stuck on the others' unchanged
failures: static, whose call held no edit, retries. For the floor lane these are
static's own rules, so it stops where static stops.
"""

from __future__ import annotations

from collections.abc import Sequence

from ..testrun import TestRun
from .candidates import Candidate, State
from .stops import Stuck


class StuckRule:
    """Counts a lane's rounds in a row with no applicable edit; ``check`` raises ``Stuck``."""

    def __init__(self) -> None:
        self.no_edit = 0

    def check(self, candidates: Sequence[Candidate], base: State, *, shows_more: bool) -> None:
        """After a round of the lane (its ``candidates``, started from ``base``);
        ``shows_more``: the next round shows files this one did not."""
        judged = [c for c in candidates if c.tests is not None]
        self.no_edit = 0 if judged else self.no_edit + 1
        if shows_more:
            self.no_edit = 0
        elif self.no_edit >= 2:
            raise Stuck("no applicable edit twice in a row")
        elif len(judged) < len(candidates):
            return
        elif judged and all(c.verdict and c.verdict.repeated for c in judged):
            raise Stuck("the same edit was proposed twice")
        elif judged and all(_same_failures(c.tests, base) for c in judged):
            raise Stuck("the same failures after an edit")


def _same_failures(run: TestRun | None, base: State) -> bool:
    return run is not None and run.signature() == base.run.signature()
