"""The seams of the system: conductors write plans, workers answer subtasks.

Implementations never inherit these; they are registered by a short name
(``conductor.backend``, ``workers.NAME.provider``) and found through the
registries in ``conductor.registry`` and ``workers.registry``.
"""

from __future__ import annotations

import asyncio
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, ClassVar, Protocol, runtime_checkable

from .answers import AnswerWatch, TokenFlow
from .config.schema import ConductorConfig, Config, TestConfig, WorkerConfig
from .plan import Plan
from .task import Task
from .usage import Usage

#: A row of ``doctor``: (status, detail); status is "ok", "no" or "info".
Check = tuple[str, str]


@dataclass(frozen=True)
class Part:
    """One block of a worker prompt; ``stable`` blocks come first and are cacheable."""

    text: str
    stable: bool = False


@dataclass(frozen=True)
class WorkerRequest:
    system: str
    parts: tuple[Part, ...]
    #: The step's subtask alone (it is also the last part), for workers that act on it.
    subtask: str = ""
    #: Extra fields for the request body (structured output: response_format, grammar).
    options: Mapping[str, Any] = field(default_factory=dict)
    #: Sampling temperature for this call only (a repeated leaf samples); None: the worker's.
    temperature: float | None = None
    #: The subtask asks for code alone: the answer ends where its first code block closes.
    stop_after_code: bool = False
    #: The answer's tokens as they come (its watch counts them; the engine reports them).
    flow: TokenFlow = field(default_factory=TokenFlow, compare=False, repr=False)

    def temperature_for(self, configured: float) -> float:
        """This call's temperature: the request's, else the worker's (negative: the
        provider's default)."""
        return configured if self.temperature is None else self.temperature

    def prompt_text(self) -> str:
        return "\n\n".join(p.text for p in self.parts)

    def chars(self) -> int:
        """What the request sends, in characters: what a window is fitted by."""
        return len(self.system) + sum(len(p.text) for p in self.parts)

    def text(self) -> str:
        """What the request sends, as one text (to estimate its tokens by)."""
        return "\n".join([self.system, *(p.text for p in self.parts)])

    def watch(self) -> AnswerWatch:
        """A fresh watch over this request's answer (see ``answers.watch``)."""
        return AnswerWatch(code=self.stop_after_code, flow=self.flow)


@dataclass(frozen=True)
class WorkerResponse:
    text: str
    usage: Usage = Usage()
    cost: float = 0.0
    model: str = ""
    elapsed: float = 0.0
    attempts: int = 1
    #: Why generation was stopped before the model ended it ('' when it was not): a loop
    #: (the answer keeps one copy), or the end of the code that was asked for.
    cut: str = ""


@dataclass(frozen=True)
class WorkerInfo:
    """What the conductor is told about a worker."""

    name: str
    description: str
    price_in: float
    price_out: float
    provider: str
    #: A tool (the tests runner) rather than a model: its answer is never code.
    is_tool: bool = False
    #: The configured ``strength`` (higher codes better); orders equally priced workers.
    strength: int = 0
    #: Whether one call fits what is left of the job's $ budget.
    affordable: bool = True


class Limits:
    """Per-endpoint concurrency limits shared by the workers of one pool: live state (its
    semaphores), handed to every worker in its ``WorkerContext``."""

    def __init__(self) -> None:
        self._sems: dict[tuple[str, str], asyncio.Semaphore] = {}

    def for_endpoint(self, provider: str, base_url: str, size: int) -> asyncio.Semaphore:
        key = (provider, base_url)
        if key not in self._sems:
            self._sems[key] = asyncio.Semaphore(size)
        return self._sems[key]


@dataclass
class WorkerContext:
    """What a worker may need besides its own section: the workspace and shared limits."""

    root: Path
    test: TestConfig = field(default_factory=TestConfig)
    limits: Limits = field(default_factory=Limits)


class Worker(Protocol):
    name: str
    config: WorkerConfig

    async def complete(self, request: WorkerRequest) -> WorkerResponse: ...

    async def aclose(self) -> None: ...


class WorkerClass(Protocol):
    """A provider as registered: what ``doctor`` and the defaults read, and how to build one."""

    is_tool: ClassVar[bool]
    #: Joins the default pool (with the defaults below) when its key is set.
    auto: ClassVar[bool]
    needs_key: ClassVar[bool]
    key_envs: ClassVar[tuple[str, ...]]
    requires_model: ClassVar[bool]
    default_model: ClassVar[str]
    default_base_url: ClassVar[str]
    default_description: ClassVar[str]
    default_price_in: ClassVar[float]
    default_price_out: ClassVar[float]

    def __call__(self, name: str, config: WorkerConfig, context: WorkerContext) -> Worker: ...

    def doctor(self, name: str, config: WorkerConfig, full: Config) -> Check: ...


class Conductor(Protocol):
    name: str
    #: Whether plans come from a model (so they may fail, and cost); static ones do not.
    asks_model: ClassVar[bool]

    async def plan(self, task: Task, workers: Sequence[WorkerInfo], max_steps: int) -> Plan:
        """Write a plan; raise ``PlanError`` when the output is unusable."""
        ...

    async def aclose(self) -> None: ...


@runtime_checkable
class Embedder(Protocol):
    """A conductor that runs its model in this process and can read a text with it: a
    routing policy's features of a task (its hidden state of the brief)."""

    def embed(self, text: str) -> list[float]:
        """The model's last hidden state, averaged over the text's tokens; blocking."""
        ...

    def model_identity(self) -> str:
        """Which weights read it (a policy fitted on one model's states needs that model)."""
        ...


class ConductorClass(Protocol):
    """A conductor backend as registered."""

    #: Runs a model in this process from a file or directory (``conductor.model``).
    local: ClassVar[bool]
    #: Is built with the ``[search]`` section too (``cls(config, search=...)``).
    uses_search: ClassVar[bool]

    def __call__(self, config: ConductorConfig) -> Conductor: ...

    def doctor(self, config: ConductorConfig) -> Check: ...
