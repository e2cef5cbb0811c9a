"""The two seams of the system: conductors write plans, workers answer subtasks.

Implementations never inherit these; they are looked up by a short name
(``conductor.backend``, ``workers.NAME.provider``).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

from .config import WorkerConfig
from .plan import Plan, Role
from .task import Task
from .usage import Usage


@dataclass(frozen=True)
class Part:
    """One block of a worker prompt; ``stable`` blocks come first and are cacheable."""

    text: str
    stable: bool = False


@dataclass(frozen=True)
class WorkerRequest:
    system: str
    parts: tuple[Part, ...]
    role: Role = "generation"
    subtask: str = ""

    def prompt_text(self) -> str:
        return "\n\n".join(p.text for p in self.parts)


@dataclass(frozen=True)
class WorkerResponse:
    text: str
    usage: Usage = Usage()
    cost: float = 0.0
    model: str = ""
    elapsed: float = 0.0
    attempts: int = 1
    raw: dict[str, Any] | None = field(default=None, repr=False)


@dataclass(frozen=True)
class WorkerInfo:
    """What the conductor is told about a worker."""

    name: str
    description: str
    price_in: float
    price_out: float
    provider: str


class Worker(Protocol):
    name: str
    config: WorkerConfig

    async def complete(
        self, request: WorkerRequest, on_text: Callable[[str], None] | None = None
    ) -> WorkerResponse: ...

    async def aclose(self) -> None: ...


class Conductor(Protocol):
    name: str

    async def plan(self, task: Task, workers: Sequence[WorkerInfo], max_steps: int) -> Plan:
        """Write a plan; raise ``PlanError`` when the output is unusable."""
        ...

    async def aclose(self) -> None: ...
