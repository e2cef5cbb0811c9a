"""What the episodes say: counts, green rate, $ per green fix, per plan shape."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from .reward import Weights, reward


def shape(episode: dict[str, Any]) -> str:
    """A plan's shape: where it came from and the workers of its steps, in order."""
    plan = episode.get("plan") or {}
    source = str(plan.get("source", "?"))
    kind = "fallback" if "fallback" in source else source.split(" ")[0]
    workers = " > ".join(str(s.get("worker")) for s in plan.get("steps") or [])
    return f"{kind}: {workers or '(none)'}"


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


def by_shape(episodes: Sequence[dict[str, Any]], weights: Weights | None = None) -> list[ShapeRow]:
    """One row per plan shape, most used first, and a total row last."""
    weights = weights or Weights()
    rows: dict[str, ShapeRow] = {}
    total = ShapeRow("all")
    for e in episodes:
        row = rows.setdefault(shape(e), ShapeRow(shape(e)))
        for r in (row, total):
            r.episodes += 1
            outcome = e.get("outcome")
            r.tested += outcome is not None and outcome.get("failing_after") is not None
            r.green += bool(outcome and outcome.get("green") and not e.get("undone"))
            r.cost += float((e.get("result") or {}).get("cost") or 0.0)
            r.reward += reward(e, weights)
    ordered = sorted(rows.values(), key=lambda r: (-r.episodes, r.shape))
    return [*ordered, total]
