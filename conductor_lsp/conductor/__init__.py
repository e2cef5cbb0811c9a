"""Conductors: write a plan for a task and a pool of workers, found by backend name."""

from .output import parse_for_workers, parse_plan
from .prompt import build_prompt
from .registry import BACKENDS, backend_class, make_conductor
from .static import StaticConductor, static_plan

__all__ = [
    "BACKENDS",
    "StaticConductor",
    "backend_class",
    "build_prompt",
    "make_conductor",
    "parse_for_workers",
    "parse_plan",
    "static_plan",
]
