"""When a round changed nothing, the job is stuck: another round would ask the same.

The rules, after each round that was not green:
- no applicable edit twice in a row;
- every candidate proposed an edit already judged on that state;
- every candidate left exactly the failures the round started from.

Never while the next round shows or asks more: a file an answer named that no round
showed yet, or the pool's strongest worker, which has not answered yet (a routing policy
that began with a cheaper one escalates instead of stopping). A round where some leaf
gave no edit is not stuck on the others' unchanged failures: static, whose call held no
edit, retries.
"""

from __future__ import annotations

from ..testrun import TestRun
from .candidates import Round, State
from .stops import Stuck


class StuckRule:
    """Counts rounds in a row with no applicable edit; ``check`` raises ``Stuck``."""

    def __init__(self) -> None:
        self.no_edit = 0

    def check(self, rnd: Round, base: State, *, shows_more: bool) -> None:
        """After ``rnd`` (started from ``base``); ``shows_more``: the next round shows files
        this one did not."""
        judged = [c for c in rnd.candidates if c.tests is not None]
        self.no_edit = 0 if judged else self.no_edit + 1
        if shows_more or rnd.escalates():
            self.no_edit = 0
        elif self.no_edit >= 2:
            raise Stuck("no applicable edit twice in a row")
        elif len(judged) < len(rnd.candidates):
            return
        elif judged and all(c.verdict and c.verdict.repeated for c in judged):
            raise Stuck("the same edit was proposed twice")
        elif judged and all(
            c.tests and c.tests.signature() == base.run.signature() for c in judged
        ):
            raise Stuck("the same failures after an edit")


def _same_failures(run: TestRun | None, base: State) -> bool:
    return run is not None and run.signature() == base.run.signature()
