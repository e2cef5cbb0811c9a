"""The conductor prompt, from one readable template file.

Two answer formats: ``lists`` (the RL Conductor's three Python lists, which the
local grammar enforces) and ``json`` (the same lists in a JSON object, which a
server's JSON-schema decoding enforces). The examples name the pool's own
strongest and cheapest workers (the last one has two leaves: two candidate fixes the
tests choose between), and their subtasks name no code, so a small model
that copies an example verbatim (SmolLM2 does, every time) copies a plan that fits
any task instead of sending a worker after a function that is not there.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from importlib import resources
from string import Template
from typing import Literal

from ..plan import ROLES
from ..protocols import WorkerInfo
from ..task import Task
from .static import strongest

Format = Literal["lists", "json"]
_SPLIT = "=== TASK ===\n"

_ANSWER = {
    "lists": (
        "Answer with exactly three Python lists of equal length and nothing after them:\n"
        "model_id = [worker ids, one per step]\n"
        'subtasks = ["subtask of step 0", "subtask of step 1", ...]\n'
        'access_list = [what each step sees: "all" (every earlier step), [] (none) '
        "or [indices of earlier steps]]"
    ),
    "json": (
        "Answer with one JSON object holding three lists of equal length:\n"
        '{"model_id": [worker ids, one per step], "subtasks": ["subtask of step 0", ...], '
        '"access_list": [what each step sees: "all" (every earlier step), [] (none) '
        "or [indices of earlier steps]]}"
    ),
}


@dataclass(frozen=True)
class ConductorPrompt:
    """``system`` is the fixed prefix (cacheable); ``user`` carries the task."""

    system: str
    user: str


def _template() -> str:
    prompts = resources.files("conductor_lsp.conductor").joinpath("prompts")
    text = prompts.joinpath("conductor.md").read_text("utf-8")
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
        kind = ", a tool: it cannot write code" if w.is_tool else ""
        lines.append(f"{i}: {w.name}, {desc}{kind}, {price}")
    return "\n".join(lines)


def _examples(workers: Sequence[WorkerInfo], fmt: Format) -> str:
    models = [i for i, w in enumerate(workers) if not w.is_tool]
    if not models:
        return ""
    strong = list(workers).index(strongest(workers))
    cheap = min(models, key=lambda i: (workers[i].strength, workers[i].price_out, i))
    plans = [
        (
            "the parser crashes on empty input",
            [strong],
            ["Fix the bug that the failing tests show; change only what the fix needs."],
            ["all"],
        ),
        (
            "some totals are wrong, and it is not clear why",
            [cheap, strong],
            [
                "Find the cause of the failing tests and name the lines to change.",
                "Write the fix for the cause found in step 0.",
            ],
            [[], "all"],
        ),
        (
            "a small bug that a cheap worker may fix as well as the strongest",
            [cheap, strong],
            [
                "Fix the bug that the failing tests show; change only what the fix needs.",
                "Fix the bug that the failing tests show; change only what the fix needs.",
            ],
            [[], []],
        ),
    ]
    out = []
    for task, ids, subtasks, access in plans:
        if fmt == "json":
            body = json.dumps({"model_id": ids, "subtasks": subtasks, "access_list": access})
        else:
            body = (
                f"model_id = {ids}\nsubtasks = {json.dumps(subtasks)}\n"
                f"access_list = {json.dumps(access)}"
            )
        out.append(f'Example (task: "{task}"):\n{body}')
    return "\n\n".join(out)


def build_prompt(
    task: Task, workers: Sequence[WorkerInfo], max_steps: int, fmt: Format = "lists"
) -> ConductorPrompt:
    return prompt_for(task.brief(), workers, max_steps, fmt)


def prompt_for(
    brief: str, workers: Sequence[WorkerInfo], max_steps: int, fmt: Format = "lists"
) -> ConductorPrompt:
    """The prompt for a task already briefed (as episodes record it)."""
    head, tail = _template().split(_SPLIT, 1)
    system = Template(head).safe_substitute(
        workers=describe_workers(workers),
        max_steps=max_steps,
        roles=", ".join(ROLES),
        answer=_ANSWER[fmt],
        examples=_examples(workers, fmt),
    )
    user = Template(tail).safe_substitute(task=brief)
    return ConductorPrompt(system=system.strip(), user=user.strip())
