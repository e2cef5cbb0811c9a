"""Plans: what the conductor writes and the engine runs."""

from __future__ import annotations

import dataclasses
import re
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any, Literal

from .errors import PlanError
from .storage.records import CONVERTER
from .testrun import clip
from .usage import Usage

Role = Literal["analysis", "generation", "debugging"]
ROLES: tuple[Role, ...] = ("analysis", "generation", "debugging")

#: ``"all"`` or the indices of earlier steps whose subtask and response a step sees.
Access = Literal["all"] | tuple[int, ...]


def _read_access(value: Any, _: Any) -> Access:
    if value == "all":
        return "all"
    if isinstance(value, list | tuple):
        return tuple(int(i) for i in value)
    raise ValueError(f"access must be 'all' or a list of step numbers, got {value!r}")


CONVERTER.register_structure_hook(Access, _read_access)

#: How much of a conductor's raw answer traces and episodes keep: its head and its tail.
RAW_KEEP = 4_000


class Lane(StrEnum):
    """Which of a round's plans a job ran. A strategy alone in its round runs its ``PLAN``;
    beside a model conductor's plan (``CONDUCTOR``) runs static's own call, the ``FLOOR``
    (also the round after a routing policy's cheaper picks beat nothing)."""

    PLAN = ""
    CONDUCTOR = "conductor"
    FLOOR = "floor"

    @classmethod
    def read(cls, text: str) -> Lane:
        """A recorded lane; records written before the floor had its name say "baseline"."""
        return cls.FLOOR if text == "baseline" else cls(text)


_DEBUG_WORDS = re.compile(
    r"\b(debug\w*|test\w*|verif\w*|review\w*|check\w*|validat\w*|critique\w*)\b", re.I
)
_ANALYSIS_WORDS = re.compile(
    r"\b(analy[sz]\w*|find\w*|identif\w*|investigat\w*|explain\w*|understand\w*|why|"
    r"diagnos\w*|locate\w*|inspect\w*|plan\w*|outline\w*)\b",
    re.I,
)
_GENERATION_WORDS = re.compile(
    r"\b(writ\w*|implement\w*|generat\w*|creat\w*|fix\w*|rewrit\w*|add\w*|produc\w*)\b", re.I
)


def infer_role(subtask: str) -> Role:
    """Guess a role from the subtask's wording, since the native format has none.

    The first verb usually says what the step is for, so the earliest match wins.
    """
    best: tuple[int, Role] | None = None
    candidates: tuple[tuple[re.Pattern[str], Role], ...] = (
        (_DEBUG_WORDS, "debugging"),
        (_ANALYSIS_WORDS, "analysis"),
        (_GENERATION_WORDS, "generation"),
    )
    for pattern, role in candidates:
        m = pattern.search(subtask)
        if m and (best is None or m.start() < best[0]):
            best = (m.start(), role)
    return best[1] if best else "generation"


@dataclass(frozen=True)
class Step:
    worker: str
    subtask: str
    access: Access = "all"
    role: Role = "generation"

    def dependencies(self, index: int) -> tuple[int, ...]:
        return tuple(range(index)) if self.access == "all" else tuple(self.access)


@dataclass(frozen=True)
class ConductorCall:
    """What writing a plan cost: the conductor is a paid model too."""

    usage: Usage = Usage()
    cost: float = 0.0
    seconds: float = 0.0
    model: str = ""


@dataclass(frozen=True)
class Plan:
    steps: tuple[Step, ...]
    #: Where the plan came from: a backend name, or ``static (fallback: why)``.
    source: str = "static"
    #: The conductor's raw text, kept for traces, episodes and the plan report.
    raw: str = ""
    notes: tuple[str, ...] = field(default=())
    #: The model call that wrote it (None: no model was asked, as for ``static``).
    call: ConductorCall | None = None
    #: Why the conductor's output was not a usable plan ('' when it was).
    error: str = ""

    def leaves(self) -> tuple[int, ...]:
        """The steps whose answer no later step sees: each one is a candidate answer.

        A chain has one leaf, its last step (the RL Conductor's final answer); a plan of
        independent steps is as many candidates as steps."""
        seen: set[int] = set()
        for i, s in enumerate(self.steps):
            seen.update(s.dependencies(i))
        return tuple(i for i in range(len(self.steps)) if i not in seen)

    def spent(self) -> str:
        """What asking the conductor cost, in words ('' when no model was asked)."""
        if self.call is None:
            return ""
        u = self.call.usage
        return (
            f"conductor {u.input_tokens}+{u.output_tokens} tokens, ${self.call.cost:.4f}, "
            f"{self.call.seconds:.1f}s"
        )

    def kept(self) -> Plan:
        """The plan as records keep it: the conductor's raw answer, its head and its tail."""
        return dataclasses.replace(self, raw=clip(self.raw, RAW_KEEP, RAW_KEEP))


def access_text(access: Access) -> str:
    """An access list for people: all, none, or the step numbers."""
    if access == "all":
        return "all"
    return ",".join(map(str, access)) if access else "none"


def validate_plan(
    steps: list[Step], workers: list[str], max_steps: int, tools: frozenset[str] = frozenset()
) -> None:
    """Raise ``PlanError`` naming the first problem, so the fallback can say why."""
    if not steps:
        raise PlanError("the plan has no steps")
    if steps[-1].worker in tools:
        raise PlanError(
            f"the last step uses the tool {steps[-1].worker!r}; its answer becomes the edits, "
            "so it must be a model"
        )
    if len(steps) > max_steps:
        raise PlanError(f"the plan has {len(steps)} steps; at most {max_steps} are allowed")
    for i, step in enumerate(steps):
        if step.worker not in workers:
            raise PlanError(f"step {i} names unknown worker {step.worker!r}")
        if not step.subtask.strip():
            raise PlanError(f"step {i} has an empty subtask")
        if step.role not in ROLES:
            raise PlanError(f"step {i} has unknown role {step.role!r}")
        if step.access != "all":
            for j in step.access:
                if j == i:
                    raise PlanError(f"step {i} lists itself in its access list")
                if j > i:
                    raise PlanError(f"step {i} refers forward to step {j} in its access list")
                if j < 0:
                    raise PlanError(f"step {i} refers to negative step {j}")
