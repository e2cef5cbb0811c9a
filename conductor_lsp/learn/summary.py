"""What the episodes say: counts, green rate, $ per green fix, per plan shape."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from ..conductor.registry import make_conductor
from ..config.schema import Config
from ..episodes.records import Episode
from ..policy.fit import examples_from
from ..policy.planner import embedder
from ..policy.predict import Policy
from ..policy.reading import read_briefs
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


@dataclass
class CalibrationRow:
    """Judged candidates whose predicted chance of green fell in [low, low + 20%)."""

    low: int
    candidates: int = 0
    green: int = 0


def policy_reading(config: Config, episodes: Sequence[Episode]) -> tuple[Path, Policy] | None:
    """The configured policy (None: none, or no file yet), its features read for the
    episodes' tasks (a hidden-state policy reads them with the conductor model)."""
    c = config.conductor
    path = config.root / c.policy if c.policy else None
    if path is None or not path.is_file():
        return None
    policy = Policy.load(path)
    if policy.hidden is not None:
        reader = embedder(policy, make_conductor(c))
        read_briefs(policy, (e.task for e in episodes), reader.embed)
    return path, policy


def calibration(policy: Policy, episodes: Sequence[Episode]) -> list[CalibrationRow]:
    """The policy's predictions against the verdicts, by predicted chance: a calibrated
    policy's leaves predicted at 70-80% turn green about 75% of the time."""
    examples = examples_from(episodes, Policy(wordings=dict(policy.wordings)))
    rows = [CalibrationRow(i * 20) for i in range(5)]
    for e in examples:
        row = rows[min(4, int(policy.p_green(e.brief, e.action, e.workers) * 5))]
        row.candidates += 1
        row.green += e.green
    return rows
