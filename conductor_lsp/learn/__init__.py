"""Learning from use: the reward of an episode, summaries, and training the conductor."""

from ..episodes.log import read_episodes
from ..episodes.records import Episode
from .reward import Weights, reward, success
from .summary import CalibrationRow, ShapeRow, by_shape, calibration, policy_reading, shape

__all__ = [
    "CalibrationRow",
    "Episode",
    "ShapeRow",
    "Weights",
    "by_shape",
    "calibration",
    "policy_reading",
    "read_episodes",
    "reward",
    "shape",
    "success",
]
