"""Conductors: write a plan for a task and a pool of workers, found by backend name.

Modules named as in ``workers`` play the same role here for the conductor: ``registry``
(the backends, as ``workers.registry`` lists the providers), ``in_process`` (what the
in-process backends share), ``openai`` and ``llama_cpp`` (a backend on the same engine as
the provider of that name); ``transformers`` plans with ``models.transformers``.
"""

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
