"""What each worker is sent: its instructions, the task, the earlier steps it may see, and
its subtask, stable parts first so provider prompt caches hit."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import PurePosixPath

from ..context.echoes import without_copies
from ..edits.format import WHOLE_FILE_LINES, edit_instructions
from ..plan import Plan, Step
from ..protocols import Part, WorkerRequest
from ..task import FileContext, Task
from .results import StepResult

SYSTEM = (
    "You are one worker in a team of coding models directed by a conductor. Do exactly your "
    "subtask, using the task, the files and the earlier steps you are shown. {how}"
    "Never invent file contents you were not shown{read_only}."
)
ROLE_HINT = {
    "analysis": "Analyse; do not write the final code.",
    "generation": "Produce the code change.",
    "debugging": "Check the work so far against the task and tests; output the corrected change.",
}


def system_prompt(task: Task) -> str:
    """The workers' instructions, with the edit format suited to the files under repair."""
    editable = [f for f in task.files if f.editable]
    path = example_path(task) or "the file's path"
    longest = max((f.text.count("\n") for f in editable), default=0)
    if any(f.partial for f in editable):  # a whole file cannot be written from a part
        longest = max(longest, WHOLE_FILE_LINES + 1)
    some_read_only = len(editable) < len(task.files)
    read_only = ", and do not change files marked read only" if some_read_only else ""
    return SYSTEM.format(how=edit_instructions(path, longest), read_only=read_only)


def example_path(task: Task) -> str:
    """The file the edit format's example names. Small models copy it literally, so it is
    the file under repair the task and its failures name (``stats.py`` for
    ``test_stats.py``), else the biggest one; a package's ``__init__.py`` comes last."""
    editable = [f for f in task.files if f.editable]
    said = f"{task.instruction}\n{task.test_failures}"

    def rank(f: FileContext) -> tuple[bool, bool, int]:
        stem = PurePosixPath(f.path).stem
        return (stem == "__init__", stem not in said, -len(f.text))

    return min(editable, key=rank).path if editable else ""


def shown_answer(task: Task, text: str) -> str:
    """An earlier step's answer as a later step sees it: read-only files' code it copied
    left out (``context.echoes``)."""
    return without_copies(text, task.files)


def repeats(plan: Plan, asked: Sequence[Step] = ()) -> frozenset[int]:
    """Steps that ask exactly what an earlier step asks (worker, subtask, what it sees,
    role), in this plan or among ``asked``: the round's earlier calls (independent ones)."""
    seen: set[tuple[object, ...]] = {(s.worker, s.subtask, (), s.role) for s in asked}
    out = set()
    for i, s in enumerate(plan.steps):
        key = (s.worker, s.subtask, s.dependencies(i), s.role)
        if key in seen:
            out.add(i)
        seen.add(key)
    return frozenset(out)


def build_request(
    task: Task,
    plan: Plan,
    index: int,
    results: list[StepResult],
    temperature: float | None = None,
    *,
    seen: Mapping[int, str] | None = None,
) -> WorkerRequest:
    """Stable content first (system, task), then visible history, then the subtask.
    ``seen``: the earlier steps' answers as shown, where they were cut to fit a window."""
    step = plan.steps[index]
    parts = [Part(task.render(), stable=True)]
    if task.repo_map and (step.role == "analysis" or task.map_every_step):
        parts.append(Part(f"## Repository map\n{task.repo_map}", stable=True))
    for j in step.dependencies(index):
        text = seen[j] if seen is not None and j in seen else shown_answer(task, results[j].text)
        prev = plan.steps[j]
        parts.append(
            Part(f"## Step {j} ({prev.role}, by {prev.worker}): {prev.subtask}\n\n{text.strip()}")
        )
    parts.append(Part(f"## Your subtask ({step.role})\n{step.subtask}\n\n{ROLE_HINT[step.role]}"))
    return WorkerRequest(
        system=system_prompt(task),
        parts=tuple(parts),
        subtask=step.subtask,
        temperature=temperature,
        # Code asked for with no file to edit: the answer is its code block, and prose
        # after it (a small model's "The output of the above code will be:") is waste.
        stop_after_code=step.role == "generation" and not task.files,
    )
