"""When to give up on a lane: the chance that its next round turns the tests green,
learned from recorded rounds (which failed rounds were followed by a green one).

The routing policy already predicts each candidate's chance of green; after a failed
round those predictions are too hopeful (the easy tasks are gone), and a round that made
no progress is less likely to be followed by one that does. The rule is a small logistic
model over what the loop knows before it asks: the policy's chance that any of the
lane's next candidates is green (its log-odds), the round's number, whether the last
round made progress, and whether the lane is the floor. It is fitted on the episodes'
rounds and stored in the policy's file; a policy without one never stops a lane early.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field

from .features import sigmoid

FEATURES = ("bias", "logit", "unknown", "round", "progress", "floor")


@dataclass(frozen=True)
class Turn:
    """A lane's next round after a failed one, as the rule sees it (and, in fitting,
    whether it was green)."""

    chance: float | None
    round: int
    progress: bool
    floor: bool
    green: bool = False

    def x(self) -> list[float]:
        p = min(max(self.chance if self.chance is not None else 0.5, 1e-4), 1 - 1e-4)
        known = self.chance is not None
        logit = math.log(p / (1 - p)) if known else 0.0
        return [1.0, logit, 0.0 if known else 1.0, float(self.round), float(self.progress),
                float(self.floor)]  # fmt: skip


@dataclass
class StopRule:
    weights: list[float] = field(default_factory=lambda: [0.0] * len(FEATURES))
    #: How many recorded turns it was fitted on.
    turns: int = 0
    #: What ``weights`` weigh, in order: a file over other features is refused.
    features: tuple[str, ...] = FEATURES

    def __post_init__(self) -> None:
        if tuple(self.features) != FEATURES:
            raise ValueError(f"a stop rule over {list(self.features)}, not {list(FEATURES)}")

    def chance(self, turn: Turn) -> float:
        return sigmoid(sum(w * x for w, x in zip(self.weights, turn.x(), strict=True)))


def fit_stop_rule(turns: Sequence[Turn], *, epochs: int = 300, l2: float = 1e-2) -> StopRule:
    """Logistic regression by gradient descent (a handful of features: milliseconds)."""
    w = [0.0] * len(FEATURES)
    rows = [(t.x(), float(t.green)) for t in turns]
    rate = 0.5
    for _ in range(epochs):
        grad = [0.0] * len(w)
        for x, y in rows:
            err = sigmoid(sum(a * b for a, b in zip(w, x, strict=True))) - y
            for i, xi in enumerate(x):
                grad[i] += err * xi
        n = max(len(rows), 1)
        w = [wi - rate * (g / n + l2 * wi) for wi, g in zip(w, grad, strict=True)]
    return StopRule(w, len(rows))
