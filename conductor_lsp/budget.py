"""Budgets for calls, dollars and seconds, shared by a job or by a whole fix loop."""

from __future__ import annotations

import time
from dataclasses import dataclass, field

from .config import BudgetConfig


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

    def exhausted(self) -> str:
        """Why no further model call may start, or '' while budget remains."""
        if self.calls >= self.limits.max_calls:
            return f"call budget spent ({self.calls}/{self.limits.max_calls} calls)"
        if self.cost >= self.limits.max_cost:
            return f"cost budget spent (${self.cost:.4f} of ${self.limits.max_cost:g})"
        if self.seconds_left() <= 0:
            return f"time budget spent ({self.limits.max_seconds:g}s)"
        return ""

    def reserve_call(self) -> str:
        """Count a call before it starts; returns why not, or ''."""
        why = self.exhausted()
        if not why:
            self.calls += 1
        return why
