"""What the episodes say: counts, green rate, $ per green fix, per plan shape."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from ..episodes.records import Episode
from .reward import Weights, reward


def shape(episode: Episode) -> str:
    """A plan's shape: where it came from and the workers of its steps, in order."""
    return episode.shape


@dataclass
class ShapeRow:
    shape: str
    episodes: int = 0
    tested: int = 0
    green: int = 0
    cost: float = 0.0
    reward: float = 0.0

    @property
    def green_rate(self) -> float:
        return self.green / self.tested if self.tested else 0.0

    @property
    def cost_per_green(self) -> float | None:
        return self.cost / self.green if self.green else None


def by_shape(episodes: Sequence[Episode], weights: Weights | None = None) -> list[ShapeRow]:
    """One row per plan shape, most used first, and a total row last."""
    weights = weights or Weights()
    rows: dict[str, ShapeRow] = {}
    total = ShapeRow("all")
    for e in episodes:
        row = rows.setdefault(e.shape, ShapeRow(e.shape))
        for r in (row, total):
            r.episodes += 1
            r.tested += e.outcome is not None and e.outcome.tested
            r.green += e.green
            r.cost += e.cost
            r.reward += reward(e, weights)
    ordered = sorted(rows.values(), key=lambda r: (-r.episodes, r.shape))
    return [*ordered, total]
