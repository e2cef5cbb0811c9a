"""Evaluation: task suites, strategies, and running them side by side."""

from .run import Row, TaskResult, evaluate, summarize
from .strategies import parse_strategies
from .suite import SuiteTask, load_suite, prepare

__all__ = [
    "Row",
    "SuiteTask",
    "TaskResult",
    "evaluate",
    "load_suite",
    "parse_strategies",
    "prepare",
    "summarize",
]
