"""Learning from use: the reward of an episode, summaries, and training the conductor."""

from .reward import Weights, reward, success
from .summary import ShapeRow, by_shape, shape

__all__ = ["ShapeRow", "Weights", "by_shape", "reward", "shape", "success"]
