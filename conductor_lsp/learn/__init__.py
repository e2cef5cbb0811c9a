"""Learning from use: the reward of an episode, summaries, and training the conductor."""

from .reward import Weights, reward, success
from .summary import ShapeRow, shape, summarize

__all__ = ["ShapeRow", "Weights", "reward", "shape", "success", "summarize"]
