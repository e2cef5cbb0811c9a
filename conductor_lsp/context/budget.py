"""One budget for everything a request shows, when the worker's window is known.

A request is the system prompt, the task (files, failing tests, the previous attempt),
the repository map, earlier steps' answers and the subtask; with ``[workers.X] context``
set, all of it plus ``max_tokens`` must fit the window, or a server refuses the request
and a paid API bills it. What gives way, least needed first:

1. the previous attempt, to its head;
2. the repository map, to its first lines;
3. the test output: the first failure's traceback and assertion are kept, the list of
   failures keeps one line per kind of failure ("and 23 more like this");
4. earlier steps' answers, to their head and tail;
5. the files, shown in part (``context.window``: the definitions the failures point at,
   read from every failure's traceback, not only the one the cut test output keeps);
6. whole files: the tests (the traceback quotes the failing one), then the code files
   the failures do not reach (no traceback through them, nothing the failing tests
   call), the last found first;
7. then the previous attempt and the map entirely, and the test output to its list.

What was cut is said in the prompt. When even that does not fit, ``WindowError``: the
step fails with a reason instead of sending a request the window cannot hold.
"""

from __future__ import annotations

import dataclasses
import functools
from collections.abc import Callable, Mapping

from ..errors import ConductorError
from ..task import FileContext, Task
from .failures import condense, ends, head
from .focus import focus
from .window import CHARS_PER_TOKEN, definitions, fit_task, least_share, wants_more

#: Characters kept for the words that say what was cut.
NOTE_ROOM = 600
#: The least share of characters a file shown in part is given: where the files would
#: have less each, whole files go first (the least needed), so that those left show
#: the code the failures point at rather than each its head.
MIN_SHARE = 2000
#: Measures a request built from a task and the earlier steps' texts, in characters.
Size = Callable[[Task, Mapping[int, str]], int]


class WindowError(ConductorError):
    """Nothing cut small enough fits the worker's window."""


@dataclasses.dataclass(frozen=True)
class Fitted:
    task: Task
    #: Earlier steps' answers as shown (cut where they had to be).
    steps: Mapping[int, str]
    #: What was cut, in words (also in ``task.cut``, which the prompt shows).
    cut: tuple[str, ...] = ()
    #: The task as it came, before any cut.
    origin: Task | None = None


def fit(task: Task, steps: Mapping[int, str], size: Size, limit: int) -> Fitted:
    """The task and steps cut, least needed first, until ``size`` is within ``limit``
    characters (0: no limit), the words saying what was cut included."""
    state = Fitted(task, dict(steps), origin=task)
    if limit <= 0 or size(task, steps) <= limit:
        return state
    room = max(limit - NOTE_ROOM, 1)
    for cut in _CUTS:
        state = cut(state, size, room)
        if size(state.task, state.steps) <= room:
            break
    for tighter in (1, 2, 4):  # what is still over (the notes' words) comes off the files
        state = _said(state)
        need = size(state.task, state.steps)
        if need <= limit or not state.task.files:
            break
        smaller = room - tighter * (need - limit) - 100
        state = _files_again(state, size, smaller)
        if size(_said(state).task, state.steps) > limit:
            state = _fewer_files(state, size, smaller)
    state = _said(state)
    need = size(state.task, state.steps)
    if need > limit:
        raise WindowError(f"the request needs {need} characters even cut; the window holds {limit}")
    return state


def _listed(paths: list[str], most: int = 5) -> str:
    """Paths for the note, the first ``most`` by name (a long list would take the room it
    is there to save)."""
    more = f" and {len(paths) - most} more" if len(paths) > most else ""
    return ", ".join(paths[:most]) + more


def _said(state: Fitted) -> Fitted:
    """The words saying what was cut, in the task (the prompt shows them)."""
    said = "\n".join(f"- {c}" for c in state.cut)
    return dataclasses.replace(state, task=dataclasses.replace(state.task, cut=said))


def _files_again(state: Fitted, size: Size, limit: int) -> Fitted:
    """The files that are left, shown in part again from their whole text, in less."""
    whole = {f.path: f for f in (state.origin or state.task).files}
    files = tuple(whole.get(f.path, f) for f in state.task.files)
    task = _in_part(state, dataclasses.replace(state.task, files=files), size, limit)
    return dataclasses.replace(state, task=task)


def fit_window(
    task: Task,
    steps: Mapping[int, str],
    size: Size,
    room: int,
    tokens: Callable[[Task, Mapping[int, str]], int | None] | None = None,
) -> Fitted:
    """``fit`` for a window of ``room`` tokens. Where ``tokens`` cannot count (None: a
    model behind an endpoint, or one not loaded yet) characters are estimated at
    ``CHARS_PER_TOKEN``; where it can (a model loaded in this process) the request is
    counted, cut at its own text's ratio of characters to tokens, and cut again until
    the count fits."""
    whole = tokens(task, steps) if tokens is not None else None
    if tokens is None or whole is None:
        return fit(task, steps, size, int(room * CHARS_PER_TOKEN))
    if whole <= room:
        return Fitted(task, dict(steps), origin=task)
    limit = int(room * size(task, steps) / max(whole, 1))
    for _ in range(4):
        fitted = fit(task, steps, size, limit)
        if (tokens(fitted.task, fitted.steps) or 0) <= room:
            return fitted
        limit = int(limit * 0.9)
    raise WindowError(f"the request needs more than the {room} tokens the window leaves")


def _note(state: Fitted, task: Task, steps: Mapping[int, str], what: str) -> Fitted:
    changed = task != state.task or steps != state.steps
    return Fitted(task, steps, (*state.cut, what) if changed else state.cut, state.origin)


def _over(state: Fitted, size: Size, limit: int) -> int:
    return size(state.task, state.steps) - limit


def _previous_head(state: Fitted, size: Size, limit: int) -> Fitted:
    task = dataclasses.replace(state.task, previous=head(state.task.previous, 1500))
    return _note(state, task, state.steps, "the previous attempt, after its head")


def _map_head(state: Fitted, size: Size, limit: int) -> Fitted:
    now = state.task.repo_map
    keep = max(len(now) - _over(state, size, limit), min(len(now), limit // 10))
    task = dataclasses.replace(state.task, repo_map=head(now, keep))
    return _note(state, task, state.steps, "the repository map, after its first lines")


def _failures_first(state: Fitted, size: Size, limit: int) -> Fitted:
    short = condense(state.task.test_failures, max(limit // 4, 800))
    task = dataclasses.replace(state.task, test_failures=short)
    what = "the test output, past the first failure's traceback (one line per kind of failure)"
    return _note(state, task, state.steps, what)


def _steps_ends(state: Fitted, size: Size, limit: int) -> Fitted:
    if not state.steps:
        return state
    share = max(limit // (5 * len(state.steps)), 400)
    steps = {j: ends(text, share) for j, text in state.steps.items()}
    return _note(state, state.task, steps, "earlier steps' answers, in their middle")


def _in_part(state: Fitted, task: Task, size: Size, limit: int) -> Task:
    """``task`` with its files shown in part so that the whole request is within ``limit``;
    what to show is read from the task as it came (every failure's traceback, where the
    shown test output keeps the first one's)."""
    return _fitted(state, task, _room(state, task, size, limit))


def _fitted(state: Fitted, task: Task, room: int) -> Task:
    return fit_task(task, room, focus(state.origin or state.task))


def _room(state: Fitted, task: Task, size: Size, limit: int) -> int:
    """What ``task``'s render may take for the whole request to be within ``limit``."""
    return max(len(task.render()) - (size(task, state.steps) - limit), 1)


def _thin(task: Task, room: int) -> bool:
    """Whether ``task``'s files, shown in part within ``room`` characters, would each get
    less than ``MIN_SHARE`` (or a third of the room, in a window too small for that; one
    file left is never thin: there is nothing else to give)."""
    return len(task.files) > 1 and least_share(task, room) < min(MIN_SHARE, room // 3)


def _crowded(state: Fitted, fitted: Task, need: Callable[[FileContext], int]) -> bool:
    """Whether a file the failures do not reach takes room from one they reach that
    wants more than it is shown (``_needed``: a file only named holds no frame, nothing
    called)."""
    whole = {f.path: f for f in (state.origin or state.task).files}
    needed = {f.path: need(whole.get(f.path, f)) for f in fitted.files}  # read whole
    if all(needed.values()):
        return False
    seen = focus(state.origin or state.task)
    return any(needed[f.path] and wants_more(whole.get(f.path, f), f, seen) for f in fitted.files)


def _files_in_part(state: Fitted, size: Size, limit: int) -> Fitted:
    room = _room(state, state.task, size, limit)
    if _thin(state.task, room):
        return state  # whole files go first (``_fewer_files``)
    fitted = _fitted(state, state.task, room)
    if len(fitted.files) > 1 and _crowded(state, fitted, _needed(state)):
        return state
    parts = [f.path for f in fitted.files if f.partial]
    what = f"parts of {_listed(parts)} (marked '# ... not shown')" if parts else ""
    return _note(state, fitted, state.steps, what) if parts else state


def _fewer_files(state: Fitted, size: Size, limit: int) -> Fitted:
    """Whole files left out, the least needed first: the tests (the failure's traceback
    already quotes the failing test), then the code files the failures do not reach (no
    traceback line in them, no definition the failing tests call), the last found first;
    the rest fitted again, until they fit and none is shown in less than
    ``MIN_SHARE``."""
    whole = {f.path: f for f in (state.origin or state.task).files}
    files = [whole[f.path] for f in state.task.files]  # whole again, to be refitted
    need = _needed(state)
    left_out: list[str] = []
    task = state.task
    while len(files) > 1:
        tests = [f for f in files if not f.editable]
        drop = min(reversed(tests or files), key=need)  # among equals, the last found
        files.remove(drop)
        left_out.append(drop.path)
        fewer = dataclasses.replace(state.task, files=tuple(files))
        room = _room(state, fewer, size, limit)
        task = _fitted(state, fewer, room)
        fits = size(task, state.steps) <= limit
        if fits and not _thin(fewer, room) and not _crowded(state, task, need):
            break
    if not left_out:
        return state
    return _note(state, task, state.steps, f"the files {_listed(left_out[::-1])}")


def _needed(state: Fitted) -> Callable[[FileContext], int]:
    """How much a file is needed: 2 when a traceback goes through it or its code writes a
    message the failures print, 1 when it defines a name the failing tests call (or
    their classes set up) or one that calls, one a frame called before failing, or one
    the code looks up by a name the failures print, else 0 (``Focus.pointed``)."""
    seen = focus(state.origin or state.task)
    pointed = seen.pointed

    @functools.cache  # asked of the same whole files at every refit of a cut
    def need(f: FileContext) -> int:
        if seen.lines_in(f.path) or f.path in seen.said_in:
            return 2
        return int(any(d.name in pointed for d in definitions(f.text)))

    return need


def _last_resort(state: Fitted, size: Size, limit: int) -> Fitted:
    task = dataclasses.replace(
        state.task,
        previous="",
        repo_map="",
        test_failures=condense(state.task.test_failures, 600, output=False),
    )
    return _note(state, task, state.steps, "the previous attempt, the map and the test output")


_CUTS = (
    _previous_head,
    _map_head,
    _failures_first,
    _steps_ends,
    _files_in_part,
    _fewer_files,
    _last_resort,
)
