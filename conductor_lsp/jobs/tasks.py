"""Plan or run one task (no tests): ``plan_task`` and ``run_task``."""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from ..config.schema import Config
from ..context.repo_map import with_outline
from ..errors import ConductorError
from ..plan import Plan
from ..runtime.results import RunResult
from ..runtime.session import Session
from ..task import Task, file_context
from .hooks import QUIET, Hooks, model_notes


@dataclass(frozen=True)
class TaskRequest:
    #: What to do, in words.
    text: str
    #: Files shown as context: relative to the workspace root, or absolute inside it.
    files: Sequence[str | Path] = ()

    def __post_init__(self) -> None:
        if not self.text.strip():
            raise ConductorError("the task is empty: say in words what to do")


def build_task(config: Config, request: TaskRequest) -> Task:
    """The task with its files and the workspace's outline, checked as the editor checks
    its files: inside the workspace and never on the deny list."""
    deny = config.edits.all_deny()
    files = tuple(file_context(config.root, Path(f), deny) for f in request.files)
    task = Task(request.text, files=files)
    return with_outline(task, config.root, deny, config.fix.repo_map_chars)


async def plan_task(session: Session, request: TaskRequest, hooks: Hooks = QUIET) -> Plan:
    """The conductor's plan for the task; nothing runs."""
    task = await asyncio.to_thread(build_task, session.config, request)
    with model_notes(hooks.on_event):
        return await session.plan(task)


async def run_task(session: Session, request: TaskRequest, hooks: Hooks = QUIET) -> RunResult:
    """Plan and run the task once; the answer is returned, nothing is written."""
    task = await asyncio.to_thread(build_task, session.config, request)
    with model_notes(hooks.on_event):
        return await session.run(task, on_event=hooks.on_event)
