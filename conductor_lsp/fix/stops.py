"""Why a fix job stops, as exceptions: the class is the outcome, the message the reason.

    Stop
    +-- Green         the tests pass
    +-- OutOfBudget   calls, $, seconds or rounds spent ("budget: ...")
    +-- Stuck         a round changed nothing: no edit twice, the same failures, the same edit
    +-- Cancelled     the user (or the editor) cancelled

``FixLoop.run`` catches them in one place and records the outcome; a job that runs
out of rounds while still failing ends ``failed`` unless a stop said otherwise.
"""

from __future__ import annotations

from typing import ClassVar, Literal

Outcome = Literal["green", "budget", "stuck", "failed", "cancelled"]


class Stop(Exception):
    """Ends the fix loop early with its class's outcome."""

    outcome: ClassVar[Outcome] = "failed"

    @property
    def reason(self) -> str:
        return str(self)


class Green(Stop):
    outcome = "green"


class OutOfBudget(Stop):
    outcome = "budget"


class Stuck(Stop):
    outcome = "stuck"


class Cancelled(Stop):
    outcome = "cancelled"


__all__ = ["Cancelled", "Green", "OutOfBudget", "Outcome", "Stop", "Stuck"]
