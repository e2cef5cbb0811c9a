"""Budgets for calls, dollars and seconds, shared by a job or by a whole fix loop.

The conductor's calls count like workers' calls. Every reason names the budget, so a
report says truthfully why a job stopped: a result's reason follows its outcome
``budget``, ``BudgetExceeded``'s message adds the ``budget:`` head.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field

from ..config.schema import BudgetConfig
from ..errors import BudgetExceeded


@dataclass
class Meter:
    limits: BudgetConfig
    calls: int = 0
    cost: float = 0.0
    started: float = field(default_factory=time.monotonic)

    def elapsed(self) -> float:
        return time.monotonic() - self.started

    def seconds_left(self) -> float:
        return max(0.0, self.limits.max_seconds - self.elapsed())

    def time_spent(self) -> str:
        return f"time ({self.limits.max_seconds:g}s spent)"

    def exhausted(self) -> str:
        """Why no further model call may start, or '' while budget remains."""
        if self.calls >= self.limits.max_calls:
            return f"calls ({self.calls} of {self.limits.max_calls} made)"
        if self.cost >= self.limits.max_cost:
            return f"cost (${self.cost:.4f} of ${self.limits.max_cost:g} spent)"
        if self.seconds_left() <= 0:
            return self.time_spent()
        return ""

    def check(self) -> None:
        """Raise ``BudgetExceeded`` (saying which budget) once no call may start."""
        why = self.exhausted()
        if why:
            raise BudgetExceeded(why)

    def reserve_call(self) -> None:
        """Count a call before it starts; ``BudgetExceeded`` if it may not."""
        self.check()
        self.calls += 1
