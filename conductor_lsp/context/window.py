"""Fitting a task to a worker's context window (``[workers.X] context``).

Real repositories have files bigger than a small local model's window: sent whole, the
request is refused ("maximum context length is 8192 tokens") and the worker is never
asked. Such a file is shown in part instead: its imports, the definitions holding the
lines the failures point at, then the definitions the failures and the task name,
biggest files first, until the prompt fits; every gap is one marked line naming what it
hides. Lines shown are the file's own, so SEARCH/REPLACE blocks still match, and a file
shown in part is answered with blocks only (``requests.system_prompt``); the fix loop
refuses an answer that drops definitions the worker was not shown (``fix.guard``)."""

from __future__ import annotations

import ast
import dataclasses
import sys
from collections.abc import Iterable

from ..task import MAX_FILE_CHARS, FileContext, Task
from .focus import IN_TRACEBACK, Focus, call_name, focus

#: A conservative guess of characters per token for code and prose (tokenizers give 3.5-4).
CHARS_PER_TOKEN = 3.0
#: Lines of a file's head (imports, constants) kept when it is shown in part.
HEAD_LINES = 30
#: Functions shown because they call one a traceback goes through, at most, per file.
CALLERS = 2
#: Functions shown because a traceback's function called them before failing, per file.
CALLEES = 2
#: Lines either side of a pointed-at line outside any definition.
AROUND = 12
#: What a partly shown file's header adds ("shown in part: ...", "Shown: ...").
PART_HEADER = 90
#: Tokens of a window kept spare: the chat template's markers, and the estimate's error.
WINDOW_SPARE = 64


def fit_task(task: Task, limit: int, seen: Focus | None = None) -> Task:
    """``task`` with its files shown in part until it renders in ``limit`` characters
    (0, or a task that fits: unchanged). The files share what the rest leaves: a file
    under its share is shown whole and leaves the remainder to the bigger ones. A file
    shown in part says which definitions were chosen, and why (``context.focus``; by
    default read from ``task``; ``seen``: from the task before its test output was cut,
    so every failure's traceback still points at the code it went through)."""
    whole = len(task.render(max_file_chars=sys.maxsize))  # what the files' text takes, all of it
    if limit <= 0 or whole <= limit:
        return task
    seen = seen or focus(task)
    files = list(task.files)
    left = limit - (whole - sum(len(f.text) for f in files))
    order = sorted(range(len(files)), key=lambda k: len(files[k].text))
    for n, i in enumerate(order):
        f, share = files[i], max(left // (len(order) - n), 0)
        if len(f.text) > share:
            files[i] = _in_part(f, seen, share)
        left -= shown_size(files[i])
    return dataclasses.replace(task, files=tuple(files))


def shown_size(f: FileContext) -> int:
    """What ``f`` takes of a share: its text and, shown in part, its header's words."""
    return len(f.text) + (len(f.why) + PART_HEADER if f.partial else 0)


def least_share(task: Task, limit: int) -> int:
    """The share ``fit_task`` would give the smallest file it shows in part within
    ``limit`` characters (a large number when every file fits whole): below a few lines
    of code a file in part shows its head and little else."""
    whole = len(task.render(max_file_chars=sys.maxsize))
    sizes = sorted(len(f.text) for f in task.files)
    left = limit - (whole - sum(sizes))
    for n, length in enumerate(sizes):
        share = max(left // (len(sizes) - n), 0)
        if length > share:
            return share
        left -= length
    return sys.maxsize


def wants_more(whole: FileContext, shown: FileContext, seen: Focus) -> bool:
    """Whether ``whole``, shown in part as ``shown``, would show more of what the failures
    point at in twice the room (a file showing all it wants is not short of room)."""
    if not shown.partial:
        return False
    more = _in_part(whole, seen, 2 * shown_size(shown))
    return more.why != shown.why


def cap_files(task: Task, most: int = MAX_FILE_CHARS, origin: Task | None = None) -> Task:
    """``task`` with each file longer than ``most`` characters shown in part, the parts
    the failures point at (as ``fit_task`` chooses them), whatever the window: no request
    shows more of one file than that (a file past it used to be left out whole, and the
    bug in it never shown). What they point at is read from ``origin`` (the task before
    its test output was cut), else ``task``; only when a file is that long."""
    big = [i for i, f in enumerate(task.files) if len(f.text) > most and not f.partial]
    if not big:
        return task
    seen = focus(origin or task)
    files = list(task.files)
    for i in big:
        files[i] = _in_part(files[i], seen, most)
    return dataclasses.replace(task, files=tuple(files))


def _in_part(f: FileContext, seen: Focus, budget: int) -> FileContext:
    """``f`` shown in about ``budget`` characters, saying which definitions and why."""
    defs = definitions(f.text)
    names = seen.names_for(d.name for d in defs)
    points = seen.lines_in(f.path)
    room, part = budget - PART_HEADER, f
    for _ in range(3):  # the gaps' marks are estimated: what went over comes off
        shown, chosen = _excerpt(f.text, defs, points, names, room)
        if not shown:
            return f
        why = "; ".join(chosen) or "the file's head"
        part = dataclasses.replace(f, text=shown, partial=True, why=why)
        over = shown_size(part) - budget
        if over <= 0:
            break
        room -= over
    return part


#: Line spans shown together (a definition without its docstring is two).
_Part = tuple[tuple[int, int], ...]
#: What to show: the parts to try, biggest first, and what to say of it.
_Wanted = tuple[tuple[_Part, ...], str]


@dataclasses.dataclass(frozen=True)
class _Def:
    name: str
    start: int  # 1-based, decorators included
    end: int
    parents: tuple[int, ...]  # the enclosing definitions' header lines
    kind: str = "def"  # or "class"
    #: The names a function calls (``f(...)``, ``obj.f(...)``), nested functions' too.
    calls: frozenset[str] = frozenset()
    #: Each name it calls, with the first line it calls it on, in line order.
    first_calls: tuple[tuple[int, str], ...] = ()
    #: Its docstring's first and last lines (0, 0: none).
    doc: tuple[int, int] = (0, 0)


def definitions(text: str) -> list[_Def]:
    """Every function and class, nested ones too (none when the text does not parse)."""
    try:
        tree = ast.parse(text)
    except (SyntaxError, ValueError):
        return []
    out: list[_Def] = []

    def walk(node: ast.AST, parents: tuple[int, ...]) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
                start = min([d.lineno for d in child.decorator_list] + [child.lineno])
                kind = "class" if isinstance(child, ast.ClassDef) else "def"
                first = () if kind == "class" else _first_calls(child)
                end = child.end_lineno or start
                calls = frozenset(name for _, name in first)
                doc = _doc(child)
                out.append(_Def(child.name, start, end, parents, kind, calls, first, doc))
                walk(child, (*parents, child.lineno))
            else:
                walk(child, parents)

    walk(tree, ())
    return out


def _doc(node: ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef) -> tuple[int, int]:
    first = node.body[0] if len(node.body) > 1 else None  # a body of a docstring alone: none
    if isinstance(first, ast.Expr) and isinstance(getattr(first.value, "value", 0), str):
        return first.lineno, first.end_lineno or first.lineno
    return 0, 0


def _first_calls(node: ast.AST) -> tuple[tuple[int, str], ...]:
    first: dict[str, int] = {}
    for n in ast.walk(node):
        if isinstance(n, ast.Call) and (name := call_name(n)):
            first[name] = min(first.get(name, n.lineno), n.lineno)
    return tuple(sorted((line, name) for name, line in first.items()))


def _callees(defs: list[_Def], d: _Def, line: int, seen: set[str]) -> list[_Wanted]:
    """The functions of this file that ``d`` (a traceback frame's) called before its
    failing ``line``: a wrong value is often made there and only fails where it is
    used (``loads`` fails in ``unsign`` on the signer ``iter_unsigners`` made).
    ``seen``: those already taken (at most ``CALLEES``)."""
    here = {e.name: e for e in defs if e.kind == "def"}
    out = []
    for at, name in d.first_calls:
        e = here.get(name)
        if at > line or len(seen) >= CALLEES:
            break
        if e is None or e is d or name in seen or e.start <= line <= e.end:
            continue
        seen.add(name)
        out.append((_whole(e), f"{name} (called by {d.name} before line {line})"))
    return out


def _callers(defs: list[_Def], line: int, seen: set[str]) -> list[_Wanted]:
    """The functions that call a definition the traceback's ``line`` is in (the one that
    built the failing wrapper, or chose it): the failure is where the code ran, the bug
    may be where it was chosen. ``seen``: callers already taken (at most ``CALLERS``). A
    function calling a class or function of its own (each factory builds its own
    ``Descriptor``) does not call the one in the traceback."""
    through = {d.name for d in defs if d.start <= line <= d.end}
    out = []
    for d in defs:
        if d.kind != "def" or not d.calls & through or d.name in through or d.name in seen:
            continue
        own = {e.name for e in defs if d.start < e.start <= d.end}
        called = sorted((d.calls - own) & through)
        if not called:
            continue
        if len(seen) >= CALLERS:
            break
        seen.add(d.name)
        out.append((_whole(d), f"{d.name} (calls {called[0]}, in the traceback)"))
    return out


def _wanted(defs: list[_Def], points: list[int], names: list[tuple[str, str]]) -> Iterable[_Wanted]:
    """What to show in the order it matters, each as the parts to try, biggest first, and
    what to say of it: each pointed-at line's innermost definition (else the lines
    around it) and the functions that call it, then each named definition, then the
    file's head."""
    callers: set[str] = set()
    callees: set[str] = set()
    for line in points:
        inner = [d for d in defs if d.start <= line <= d.end]
        if not inner:
            yield (((max(line - AROUND, 1), line + AROUND),),), ""
            continue
        d = max(inner, key=lambda d: d.start)
        yield from (_one_line(p) for p in d.parents)
        yield _in_traceback(d, line), f"{d.name} ({IN_TRACEBACK}, line {line})"
        yield from _callers(defs, line, callers)
        yield from _callees(defs, d, line, callees)
    by_name: dict[str, list[_Def]] = {}
    for d in defs:
        by_name.setdefault(d.name, []).append(d)
    scopes = {p for line in points for d in defs if d.start <= line <= d.end for p in d.parents}
    for name, why in names:
        for d in _nearest(by_name.get(name, []), scopes):
            yield from (_one_line(p) for p in d.parents)
            header = _header(d, defs)
            yield (*_whole(d), *([(header,)] if header else [])), f"{d.name} ({why})"
    first = min((d.start for d in defs), default=HEAD_LINES + 1)
    yield (((1, min(first - 1, HEAD_LINES)),),), ""


def _one_line(line: int) -> _Wanted:  # an enclosing class's or function's header
    return (((line, line),),), ""


def _whole(d: _Def) -> tuple[_Part, ...]:
    return (((d.start, d.end),),)


def _in_traceback(d: _Def, line: int) -> tuple[_Part, ...]:
    """A traceback's definition: whole; else its code without a docstring of more than
    ``AROUND`` lines; else its lines around ``line``, inside it (the lines past its end
    are another definition's): more of those before ``line``, where its values were
    made."""
    options: list[_Part] = [((d.start, d.end),)]
    lo, hi = d.doc
    if hi - lo >= AROUND and not lo <= line <= hi:
        options.append(((d.start, lo - 1), (hi + 1, d.end)))
    after = min(d.end, line + AROUND // 2)
    before = max(d.start, line - 2 * AROUND + (after - line))
    options.append(((before, after),))
    return tuple(options)


def _nearest(same: list[_Def], scopes: set[int]) -> list[_Def]:
    """Of the definitions sharing a name (a ``wrapper`` in each of six factories), those
    inside a class or function a traceback goes through, else the first two: one shows what
    the name does, six take a small window's share of the file (the first two: one may
    be a stub)."""
    near = [d for d in same if scopes & set(d.parents)]
    return near or same[:2]


def _header(d: _Def, defs: list[_Def]) -> tuple[int, int] | None:
    """A class too big to show whole: its first lines, up to its first method."""
    if d.kind != "class":
        return None
    first = min((c.start for c in defs if d.start < c.start <= d.end), default=d.end + 1)
    return d.start, min(d.start + 2, first - 1)


def excerpt(text: str, points: list[int], names: list[str], budget: int) -> str | None:
    """The file's most relevant lines in about ``budget`` characters, each gap marked;
    None when nothing smaller than the whole file can be shown."""
    named = [(n, "named") for n in names]
    return _excerpt(text, definitions(text), points, named, budget)[0]


def _excerpt(
    text: str, defs: list[_Def], points: list[int], names: list[tuple[str, str]], budget: int
) -> tuple[str | None, list[str]]:
    """``excerpt``, and what it chose, in words ("bump (in the traceback, line 159)")."""
    lines = text.splitlines()
    keep: set[int] = set()
    chosen: list[str] = []
    used = 0
    wanted = list(_wanted(defs, points, names))
    for options, why in wanted:
        for part in options:
            span = [n for n in _lines(part, len(lines)) if n not in keep]
            if not span:  # all of it shown already
                break
            cost = sum(len(lines[n - 1]) + 1 for n in span) + 80 * len(part)
            cost += len(why) + 2 if why and why not in chosen else 0  # the words saying why
            if used + cost <= budget:
                keep.update(span)
                used += cost
                if why and span and why not in chosen:
                    chosen.append(why)
                break
    if not keep and wanted:  # nothing fits: the most telling, at its smallest
        options, why = wanted[0]
        keep.update(_lines(options[-1], len(lines)))
        chosen += [why] if why else []
    if len(keep) >= len(lines):
        return None, chosen
    return _render(lines, keep, defs), chosen


def _lines(part: _Part, most: int) -> list[int]:
    return [n for lo, hi in part for n in range(max(lo, 1), min(hi, most) + 1)]


def _render(lines: list[str], keep: set[int], defs: list[_Def]) -> str:
    out: list[str] = []
    n = 1
    while n <= len(lines):
        if n in keep:
            out.append(lines[n - 1])
            n += 1
            continue
        end = n
        while end + 1 <= len(lines) and end + 1 not in keep:
            end += 1
        hidden = [d.name for d in defs if n <= d.start <= end]
        what = f": {', '.join(hidden[:8])}{', ...' if len(hidden) > 8 else ''}" if hidden else ""
        out.append(f"# ... lines {n}-{end} not shown{what}")
        n = end + 1
    return "\n".join(out) + "\n"
