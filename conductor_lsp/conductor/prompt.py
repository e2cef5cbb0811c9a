"""The conductor prompt, from one readable template file."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from importlib import resources
from string import Template

from ..plan import ROLES
from ..protocols import WorkerInfo
from ..task import Task

_SPLIT = "=== TASK ===\n"


@dataclass(frozen=True)
class ConductorPrompt:
    """``system`` is the fixed prefix (cacheable); ``user`` carries the task."""

    system: str
    user: str


def _template() -> str:
    text = (
        resources.files("conductor_lsp.conductor")
        .joinpath("prompts/conductor.md")
        .read_text("utf-8")
    )
    if text.startswith("<!--"):
        text = text[text.index("-->") + 3 :].lstrip("\n")
    return text


def describe_workers(workers: Sequence[WorkerInfo]) -> str:
    lines = []
    for i, w in enumerate(workers):
        price = (
            "free" if w.price_in == 0 and w.price_out == 0 else f"${w.price_in:g}/${w.price_out:g}"
        )
        desc = w.description or f"{w.provider} model"
        lines.append(f"{i}: {w.name}, {desc}, {price}")
    return "\n".join(lines)


def build_prompt(task: Task, workers: Sequence[WorkerInfo], max_steps: int) -> ConductorPrompt:
    head, tail = _template().split(_SPLIT, 1)
    system = Template(head).safe_substitute(
        workers=describe_workers(workers), max_steps=max_steps, roles=", ".join(ROLES)
    )
    user = Template(tail).safe_substitute(task=task.render())
    return ConductorPrompt(system=system.strip(), user=user.strip())
