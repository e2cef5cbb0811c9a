"""Why a fix job stops, as exceptions: the class is the outcome, the message the reason.

    Stop
    +-- Green         the tests pass
    +-- Stuck         a round changed nothing: no edit twice, the same failures, the same edit
    +-- Cancelled     the user (or the editor) cancelled
    +-- GaveUp        the stop rule judged no candidate likely to help

A budget that runs out (calls, $, seconds, rounds) is ``errors.BudgetExceeded``, raised
where it is spent (the meter, the engine, the last round) and caught by the loop as it
is, beside these. ``FixLoop.run`` catches them in one place and records the outcome; a
job that runs out of rounds while still failing ends ``budget``.
"""

from __future__ import annotations

from enum import StrEnum
from typing import ClassVar


class FixOutcome(StrEnum):
    """How a fix job ended."""

    GREEN = "green"
    BUDGET = "budget"
    STUCK = "stuck"
    FAILED = "failed"
    CANCELLED = "cancelled"
    STOPPED = "stopped"
    #: It could not start: its configuration or checkpoint was refused (the loop never
    #: ends so, it raises; ``eval`` records it as that task's result and goes on).
    ERROR = "error"


class Stop(Exception):
    """Ends the fix loop early with its class's outcome."""

    outcome: ClassVar[FixOutcome] = FixOutcome.FAILED

    @property
    def reason(self) -> str:
        return str(self)


class Green(Stop):
    outcome = FixOutcome.GREEN


class Stuck(Stop):
    outcome = FixOutcome.STUCK


class Cancelled(Stop):
    outcome = FixOutcome.CANCELLED


class GaveUp(Stop):
    outcome = FixOutcome.STOPPED


__all__ = ["Cancelled", "FixOutcome", "GaveUp", "Green", "Stop", "Stuck"]
