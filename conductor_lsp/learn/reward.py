"""The reward a plan earns, from its episode: one documented function.

    reward = success - cost_weight * dollars - seconds_weight * seconds - format_penalty

``success`` is 1 when the tests went green (and the user neither undid the job nor
rejected any of its fix in review), else
the fraction of the originally failing tests that now pass, or 0 if any test that
passed before now fails, the answer was never tested, or the job was undone.
``dollars`` and ``seconds`` are the whole job's, the conductor's own call included.
``format_penalty`` applies when the conductor's answer was not a valid plan (and the
static plan had to stand in for it). Weights come from ``[learn]``.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..config.schema import LearnConfig
from ..episodes.records import Episode, VerdictRecord


@dataclass(frozen=True)
class Weights:
    cost: float = LearnConfig.cost_weight
    seconds: float = LearnConfig.seconds_weight
    format_penalty: float = LearnConfig.format_penalty

    @classmethod
    def of(cls, learn: LearnConfig) -> Weights:
        return cls(learn.cost_weight, learn.seconds_weight, learn.format_penalty)


def success(outcome: VerdictRecord | None, undone: bool = False) -> float:
    """1 for green, else the share of the failing tests fixed; 0 if anything broke."""
    if outcome is None or undone:
        return 0.0
    if outcome.green:
        return 1.0
    before, after = outcome.failing_before, outcome.failing_after
    if not before or after is None or outcome.broke:
        return 0.0
    return len(set(before) - set(after)) / len(set(before))


def reward(episode: Episode, weights: Weights | None = None) -> float:
    """The reward of one joined episode (see ``episodes.log.read_episodes``)."""
    weights = weights or Weights()
    # A fix the user rejected (any hunk, in review) or undid is no success, however green.
    value = success(episode.outcome, episode.undone or bool(episode.rejected))
    value -= weights.cost * episode.cost
    value -= weights.seconds * episode.seconds
    if episode.fallback and episode.asked_model:
        value -= weights.format_penalty  # a model was asked, and its answer was no plan
    return value
