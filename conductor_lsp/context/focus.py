"""What a task's failures point at, and why: the code a partly shown file must show.

Read from the task, most telling first: the lines the tracebacks' frames name (file and
line; the enclosing definition is shown), the names the failing test functions call
(read from their source, when the task shows it), definitions whose name is part of a
failing test's name (``test_should_private_increment_string`` -> ``_increment_string``),
then the names the instruction and the failures mention. Each comes with its reason,
which the prompt states next to the file.
"""

from __future__ import annotations

import ast
import functools
import re
from collections.abc import Iterable
from dataclasses import dataclass, field

from ..task import Task
from .files import is_test_path

_LOCATION = re.compile(r"([\w./-]+\.py)\"?(?:, line |:)(\d+)")
_WORD = re.compile(r"[A-Za-z_]\w{2,}")
#: A failing test's name: in a test id (``file.py::test_x``) or a section header.
_FAILING = re.compile(r"(?:::|_ )(test\w*)")
#: A failing test's class: ``file.py::LFUDecoratorTest::test_x``.
_CLASS = re.compile(r"::([A-Za-z_]\w*)::test")

IN_TRACEBACK = "in the traceback"
CALLED = "called by the failing test"
NAMED = "named in the task or the failures"


@dataclass(frozen=True)
class Focus:
    #: Lines the failures point at, per file as they wrote it.
    points: dict[str, list[int]] = field(default_factory=dict)
    #: The failing test functions' names.
    failing: tuple[str, ...] = ()
    #: Names the failing tests call, then names the task mentions, with why.
    names: tuple[tuple[str, str], ...] = ()

    def lines_in(self, path: str) -> list[int]:
        """The pointed-at lines of ``path`` (a frame may name it with a longer or a
        shorter path: ``src/pkg/version.py`` and ``pkg/version.py`` are one file)."""
        out: list[int] = []
        for where, lines in self.points.items():
            if where == path or where.endswith("/" + path) or path.endswith("/" + where):
                out += lines
        return out

    def names_for(self, defined: Iterable[str]) -> list[tuple[str, str]]:
        """Names to show in a file defining ``defined``: called by a failing test first,
        then those a failing test's name holds, then the rest mentioned."""
        called = [(n, w) for n, w in self.names if w == CALLED]
        parts = [
            (d, f"part of the failing test's name {t}")
            for d in defined
            for t in self.failing
            if _part_of(d, t)
        ]
        named = [(n, w) for n, w in self.names if w != CALLED]
        return list(dict.fromkeys(called + parts + named))


@functools.lru_cache(maxsize=16)
def focus(task: Task) -> Focus:
    """What ``task``'s failures point at. Cached: fitting one request to a window asks it
    of the same task at every cut, and it parses the test files each time."""
    said = "\n".join([task.instruction, task.test_failures, task.previous])
    points: dict[str, list[int]] = {}
    for path, line in _LOCATION.findall(said):
        points.setdefault(path.removeprefix("./"), []).append(int(line))
    failing = tuple(dict.fromkeys(_FAILING.findall(task.test_failures)))
    classes = set(_CLASS.findall(task.test_failures))
    called: list[str] = []
    for f in task.files:
        if is_test_path(f.path) or not f.editable:
            called += _calls(f.text, set(failing), classes)
    names = [(n, CALLED) for n in dict.fromkeys(called)]
    names += [(n, NAMED) for n in dict.fromkeys(_WORD.findall(said)) if n not in called]
    return Focus(points, failing, tuple(names))


def _calls(source: str, tests: set[str], classes: set[str]) -> list[str]:
    """The names the functions ``tests`` call (``f(...)``, ``obj.f(...)``, and what
    their syntax calls), in order; then the names the failing test ``classes`` set up
    in their own bodies (``DECORATOR = staticmethod(lfu_cache)``: what a test inherited
    from a mixin runs)."""
    try:
        tree = ast.parse(source)
    except (SyntaxError, ValueError):
        return []
    out: list[str] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef) and node.name in tests:
            for inner in ast.walk(node):
                out += _called(inner)
        elif isinstance(node, ast.ClassDef) and node.name in classes:
            for stmt in node.body:
                if not isinstance(stmt, ast.FunctionDef | ast.AsyncFunctionDef):
                    out += [_name(n) for n in ast.walk(stmt) if _name(n)]
    return out


def _name(node: ast.AST) -> str:
    if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Load):
        return node.id
    return node.attr if isinstance(node, ast.Attribute) else ""


#: What the syntax a test uses calls: ``c[k] = v`` is ``__setitem__``, ``len(c)`` is
#: ``__len__``, a class it defines calls its attributes' ``__set_name__``: a bug there is
#: reached by no name the test writes.
_SPECIAL = {
    "len": "__len__", "iter": "__iter__", "list": "__iter__", "sorted": "__iter__",
    "set": "__iter__", "frozenset": "__iter__", "tuple": "__iter__", "dict": "__iter__",
    "enumerate": "__iter__", "zip": "__iter__", "sum": "__iter__", "min": "__iter__",
    "max": "__iter__", "any": "__iter__", "all": "__iter__", "reversed": "__reversed__",
    "hash": "__hash__", "repr": "__repr__", "str": "__str__", "bool": "__bool__",
}  # fmt: skip
_CONTEXT = {ast.Store: "__setitem__", ast.Load: "__getitem__", ast.Del: "__delitem__"}


def call_name(node: ast.Call) -> str:
    """The name a call calls: ``f`` of ``f(...)`` and of ``obj.f(...)`` ('' otherwise)."""
    f = node.func
    return f.id if isinstance(f, ast.Name) else getattr(f, "attr", "")


def _called(node: ast.AST) -> list[str]:
    if isinstance(node, ast.Call):
        name = call_name(node)
        if name and not name.startswith("assert"):
            return [name, *([_SPECIAL[name]] if name in _SPECIAL else [])]
    if isinstance(node, ast.Subscript):
        return [_CONTEXT[type(node.ctx)]]
    if isinstance(node, ast.Compare) and any(isinstance(o, ast.In | ast.NotIn) for o in node.ops):
        return ["__contains__"]
    if isinstance(node, ast.For | ast.comprehension):
        return ["__iter__"]
    if isinstance(node, ast.ClassDef):  # its body's descriptors are told their names
        return ["__set_name__", "__init_subclass__"]
    return []


def _part_of(name: str, test: str) -> bool:
    """``_increment_string`` is part of ``test_should_private_increment_string``: its
    words, in order, are words of the test's name (two words at least, or one long)."""
    words = [w for w in name.lower().split("_") if w]
    have = [w for w in test.lower().removeprefix("test").split("_") if w]
    if not words or (len(words) == 1 and len(words[0]) < 6):
        return False
    n = len(words)
    return any(have[i : i + n] == words for i in range(len(have) - n + 1))
