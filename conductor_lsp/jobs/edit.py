"""Edit one buffer as the editor holds it, with one plan: ``edit_buffer``.

The job builds the task (the buffer's text, the selection, the problem), runs one plan
and hands its answer to the door's ``apply`` (the editor applies edits to live buffers
through a workspace edit, all or nothing); no tests run. Its two kinds: ``problem``
(fix the diagnostics at a range) and ``rewrite`` (implement or rewrite a selection).
"""

from __future__ import annotations

import asyncio
import re
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

from ..context.repo_map import with_outline
from ..episodes.records import VerdictRecord
from ..runtime.results import RunOutcome, RunResult
from ..runtime.session import Session
from ..task import FileContext, Task, file_context
from .hooks import QUIET, Hooks, model_notes

EditKind = Literal["problem", "rewrite"]
_COMMENT = re.compile(r"^\s*(#|//|--|/\*|\*)\s?(.*?)\s*(\*/)?$")
#: A rewrite's instruction when neither the user nor the selection's comments give one.
REWRITE = "Implement or rewrite the selected code."


def instruction_from_selection(text: str) -> str:
    """The comment lines at the top of a selection, read as the instruction."""
    lines = []
    for line in text.splitlines():
        m = _COMMENT.match(line)
        if not m:
            break
        if m.group(2):
            lines.append(m.group(2))
    return " ".join(lines)


@dataclass(frozen=True)
class EditRequest:
    kind: EditKind
    #: The buffer's file (inside the workspace, not on the deny list).
    path: Path
    #: The buffer's text as the editor holds it (unsaved changes included).
    text: str
    instruction: str = ""
    #: 1-based inclusive lines of the range or selection, if any.
    lines: tuple[int, int] | None = None
    #: The selected text (a rewrite's subject).
    selected: str = ""
    #: The problems at the range, as "line N: message".
    diagnostics: Sequence[str] = ()
    #: The job's id in episodes (its undo marks them).
    episode_job: str = ""


@dataclass
class Applied:
    """What the door's ``apply`` did: the files edited, or why nothing was."""

    paths: list[str] = field(default_factory=list)
    errors: str = ""


#: The door's way to apply an answer: (answer, the files it may edit) -> what it did.
Apply = Callable[[str, Sequence[str]], Awaitable[Applied]]


@dataclass
class EditReport:
    result: RunResult
    #: None when the run did not finish with an answer (no edit was tried).
    applied: Applied | None = None


def edit_task(session: Session, request: EditRequest) -> Task:
    """The task the request describes; ``EditError`` for a file outside the workspace or
    on the deny list."""
    config = session.config
    deny = config.edits.all_deny()
    shown = file_context(config.root, request.path, deny, text=request.text)
    instruction = request.instruction
    if request.kind == "problem" and not instruction:
        instruction = "Fix this problem: " + "; ".join(request.diagnostics or ["(see file)"])
    if request.kind == "rewrite":
        instruction = instruction or instruction_from_selection(request.selected) or REWRITE
    if request.kind == "rewrite" and request.lines is not None:
        a, b = request.lines
        instruction += f"\n\nThe selection (lines {a}-{b}):\n```\n{request.selected}\n```"
    files = (FileContext(shown.path, request.text, request.lines),)
    task = Task(instruction, files=files, diagnostics=tuple(request.diagnostics))
    return with_outline(task, config.root, deny, config.fix.repo_map_chars)


async def edit_buffer(
    session: Session, request: EditRequest, apply: Apply, hooks: Hooks = QUIET
) -> EditReport:
    """One plan on the buffer; a finished answer goes to ``apply`` and what it did is
    recorded with the plan's episode."""
    task = await asyncio.to_thread(edit_task, session, request)
    with model_notes(hooks.on_event):
        result = await session.run(task, on_event=hooks.on_event, job=request.episode_job)
    if result.outcome is not RunOutcome.DONE:
        return EditReport(result)
    applied = await apply(result.output, task.editable())
    session.episodes.outcome(
        VerdictRecord.of_runs(
            None, None, applied=applied.paths, refused=applied.errors, id=result.episode
        )
    )
    return EditReport(result, applied)
