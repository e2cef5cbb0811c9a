"""Evaluation: task suites, strategies, and running them side by side."""

from .run import ORDERS, StrategyRow, TaskResult, by_strategy, evaluate
from .strategies import parse_strategies
from .suite import SuiteTask, load_suite, prepare

__all__ = [
    "ORDERS",
    "StrategyRow",
    "SuiteTask",
    "TaskResult",
    "by_strategy",
    "evaluate",
    "load_suite",
    "parse_strategies",
    "prepare",
]
