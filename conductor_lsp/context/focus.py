"""What a task's failures point at, and why: the code a partly shown file must show.

Read from the task, most telling first: the lines the tracebacks' frames name (file and
line; the enclosing definition is shown), the names the failing test functions call
(read from their source, when the task shows it), definitions whose name is part of a
failing test's name (``test_should_private_increment_string`` -> ``_increment_string``),
what a frame's function called before its line (in whichever file defines it), methods
looked up by a name built at run time from a value the failures print (``getattr(self,
'visit_' + t)`` and ``'not_expression'`` -> ``visit_not_expression``), what the
functions the failing test calls call first, then the names the instruction and the
failures mention. Each comes with its reason, which the prompt states next to the file.
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
#: A pytest section header, "____ test_name ____": one failure's traceback follows.
SECTION = re.compile(r"^_{3,} .+ _{3,}$", re.M)
_WORD = re.compile(r"[A-Za-z_]\w{2,}")
#: A word the failures print quoted: a value (``'type': 'not_expression'``).
_VALUE = re.compile(r"""['"]([A-Za-z_]\w*)['"]""")
#: A failing test's name: in a test id (``file.py::test_x``) or a section header.
_FAILING = re.compile(r"(?:::|_ )(test\w*)")
#: A failing test's class: ``file.py::LFUDecoratorTest::test_x``.
_CLASS = re.compile(r"::([A-Za-z_]\w*)::test")

IN_TRACEBACK = "in the traceback"
CALLED = "called by the failing test"
NAMED = "named in the task or the failures"
#: The callees shown of each function a failing test calls (``window.CALLEES`` is a
#: traceback function's, per file).
TEST_CALLEES = 2


@dataclass(frozen=True)
class Focus:
    #: Lines the failures point at, per file as they wrote it.
    points: dict[str, list[int]] = field(default_factory=dict)
    #: The failing test functions' names.
    failing: tuple[str, ...] = ()
    #: Names the failing tests call, then names the task mentions, with why.
    names: tuple[tuple[str, str], ...] = ()
    #: The files whose code writes a message the failures print: where the error was
    #: made, as a frame is, though a test caught it and no frame is left there.
    said_in: tuple[str, ...] = ()

    def lines_in(self, path: str) -> list[int]:
        """The pointed-at lines of ``path`` (a frame may name it with a longer or a
        shorter path: ``src/pkg/version.py`` and ``pkg/version.py`` are one file)."""
        out: list[int] = []
        for where, lines in self.points.items():
            if where == path or where.endswith("/" + path) or path.endswith("/" + where):
                out += lines
        return out

    @property
    def pointed(self) -> frozenset[str]:
        """The names a failing test, a frame or a function the test calls calls, or the
        code looks up by name: a file defining one is needed more than one the failures
        merely mention."""
        return frozenset(n for n, why in self.names if why != NAMED)

    def names_for(self, defined: Iterable[str]) -> list[tuple[str, str]]:
        """Names to show in a file defining ``defined``: called by a failing test first
        (those its name holds too before the rest: ``test_discard`` calls ``_check``
        and ``discard``), then those a failing test's name holds, then those a frame
        called, a message the failures print comes from, the code looks up by name or a
        function the test calls calls, then the rest mentioned."""
        called = [(n, w) for n, w in self.names if w == CALLED]
        both = [(n, w) for n, w in called if any(_part_of(n, t) for t in self.failing)]
        parts = [
            (d, f"part of the failing test's name {t}")
            for d in defined
            for t in self.failing
            if _part_of(d, t)
        ]
        named = [(n, w) for n, w in self.names if w != CALLED]
        return list(dict.fromkeys(both + called + parts + named))


@functools.lru_cache(maxsize=16)
def focus(task: Task) -> Focus:
    """What ``task``'s failures point at. Cached: fitting one request to a window asks it
    of the same task at every cut, and it parses the test files each time. Of each
    failure's frames the innermost comes first (where it was raised: a parser's
    traceback six frames deep in one module spent the module's share on the outer
    five), then the rest from the outside in."""
    said = "\n".join([task.instruction, task.test_failures, task.previous])
    points: dict[str, list[int]] = {}
    for section in SECTION.split(said):  # each failure's innermost frame first
        found = _LOCATION.findall(section)
        for path, line in found[-1:] + found[:-1]:
            points.setdefault(path.removeprefix("./"), []).append(int(line))
    failing = tuple(dict.fromkeys(_FAILING.findall(task.test_failures)))
    classes = set(_CLASS.findall(task.test_failures))
    parsed = [(f, _parse(f.text)) for f in task.files]
    called: list[str] = []
    for f, tree in parsed:
        if tree and (is_test_path(f.path) or not f.editable):
            called += _calls(tree, set(failing), classes)
    trees = {f.path: t for f, t in parsed if t and not f.partial}
    defs = {path: [n for n in ast.walk(t) if isinstance(n, _DEFINES)] for path, t in trees.items()}
    names = [(n, CALLED) for n in dict.fromkeys(called)]
    names += [(n, w) for n, w in _frame_calls(defs, points).items() if n not in called]
    printed = _messages(defs, task.test_failures)
    names += [(n, why) for _, n, why in printed]
    looked = _looked_up(trees, defs, said)
    names += looked
    names += _called_calls(defs, list(dict.fromkeys(called)), "which the failing test calls")
    names += _called_calls(defs, [n for n, _ in looked], "looked up by name")
    taken = {n for n, _ in names}
    names += [(n, NAMED) for n in dict.fromkeys(_WORD.findall(said)) if n not in taken]
    first: dict[str, str] = {}
    for name, why in names:
        first.setdefault(name, why)
    said_in = tuple(dict.fromkeys(path for path, _, _ in printed))
    return Focus(points, failing, tuple(first.items()), said_in)


def _called_calls(defs: _Defs, called: list[str], how: str) -> list[tuple[str, str]]:
    """What the functions a failing test calls (or the code looks up by name: ``how``)
    call first (``TEST_CALLEES`` each, of those the task's code defines): a test that
    fails by assertion names no frame, and the wrong value is often made one call
    further (``groupby`` calls ``getter``; ``pattern_to_regex`` calls
    ``__normalize_segments``; ``visit_comparator`` calls ``_is_comparable``)."""
    nodes = [n for path, found in defs.items() if not is_test_path(path) for n in found]
    defined = {n.name for n in nodes}
    out: list[tuple[str, str]] = []
    for fn in (
        n for name in called for n in nodes if n.name == name and not isinstance(n, ast.ClassDef)
    ):
        calls = sorted(
            (c.lineno, m) for c in ast.walk(fn) if isinstance(c, ast.Call) for m in _called(c)
        )
        mine = [m for m in dict.fromkeys(m for _, m in calls) if m in defined and m not in called]
        why = f"called by {fn.name}, {how}"
        out += [(m, why) for m in mine[:TEST_CALLEES]]
    return out


#: A message's pieces around its placeholders (``%s``, ``%(name)r``, ``{}``, ``{0:>4}``).
_PLACEHOLDER = re.compile(r"%(?:\(\w+\))?[-#0 +]?\d*(?:\.\d+)?[sdrfixgeXEGc]|\{[^{}]*\}")
#: The messages matched at most: a common phrase would point everywhere.
MESSAGES = 3


def _messages(defs: _Defs, failures: str) -> list[tuple[str, str, str]]:
    """The functions of the code under test holding a message the failures print
    (``"Unclosed %s delimiter"`` -> ``_consume_until``): where an error was raised is
    where the wrong state was seen, whatever caught it since. A message is a string of
    words with a fixed part of ten characters or more; its pieces must appear in order.
    Each as its file, the function and why."""
    out: list[tuple[str, str, str]] = []
    for path, found in defs.items():
        if is_test_path(path):
            continue
        for fn in (n for n in found if not isinstance(n, ast.ClassDef)):
            for text in _strings(fn):
                if len(out) < MESSAGES and _printed(text, failures):
                    flat = text.replace("\n", "\\n")
                    shown = flat if len(flat) <= 40 else flat[:37] + "..."
                    why = f"makes the message '{shown}' the failures print"
                    out.append((path, fn.name, why))
                    break
    return out


def _strings(fn: ast.FunctionDef | ast.AsyncFunctionDef) -> list[str]:
    """The strings a function itself writes (a nested function's are its own), an
    f-string with its values as ``{}``; a docstring is not a message."""
    out: list[str] = []
    todo: list[ast.AST] = list(fn.body[1:] if ast.get_docstring(fn) else fn.body)
    while todo:
        n = todo.pop()
        if isinstance(n, _DEFINES):
            continue
        if isinstance(n, ast.Constant) and isinstance(n.value, str):
            out.append(n.value)
        elif isinstance(n, ast.JoinedStr):
            out.append(
                "".join(str(v.value) if isinstance(v, ast.Constant) else "{}" for v in n.values)
            )
        else:
            todo += ast.iter_child_nodes(n)
    return out


def _printed(text: str, failures: str) -> bool:
    """Whether ``text``'s fixed pieces appear in ``failures``: each line's in order on one
    line, its lines in order (a message of several lines is printed with pytest's ``E``
    before each)."""
    lines = [[p for p in _PLACEHOLDER.split(line) if p.strip()] for line in text.split("\n")]
    lines = [pieces for pieces in lines if pieces]
    if not lines or max(len(p) for ps in lines for p in ps) < 10 or " " not in text.strip():
        return False
    one = (".*?".join(re.escape(p) for p in pieces) for pieces in lines)
    return re.search(r"[\s\S]*?".join(one), failures) is not None


def _looked_up(trees: _Trees, defs: _Defs, said: str) -> list[tuple[str, str]]:
    """The definitions a name built at run time reaches from a value the failures print
    (``getattr(self, 'visit_' + node['type'])`` and ``'type': 'not_expression'`` reach
    ``visit_not_expression``): a parser's or a visitor's methods, which no call names."""
    prefixes = dict.fromkeys(p for t in trees.values() for p in _prefixes(t))
    if not prefixes:
        return []
    defined = {n.name for found in defs.values() for n in found}
    return [
        (p + w, f"looked up by name: '{p}' + '{w}', a value in the failures")
        for w in dict.fromkeys(_VALUE.findall(said))
        for p in prefixes
        if p + w in defined
    ]


def _prefixes(tree: ast.Module) -> list[str]:
    """What ``getattr(obj, PREFIX + x)`` looks up, for each such call (``'visit_' + x``,
    ``'visit_%s' % x``, ``f'visit_{x}'``, ``'visit_{}'.format(x)``): the dispatch of a
    visitor or a parser, whose methods no call names."""
    out = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and call_name(node) == "getattr" and len(node.args) > 1:
            arg = node.args[1]
            head: object = None
            if isinstance(arg, ast.BinOp) and isinstance(arg.op, ast.Add | ast.Mod):
                head = getattr(arg.left, "value", None)
            elif isinstance(arg, ast.JoinedStr) and arg.values:
                head = getattr(arg.values[0], "value", None)
            elif isinstance(arg, ast.Call) and getattr(arg.func, "attr", "") == "format":
                head = getattr(getattr(arg.func, "value", None), "value", None)
            if isinstance(head, str):
                prefix = re.split(r"[%{]", head)[0]
                out += [prefix] if re.fullmatch(r"\w{2,}[A-Za-z_]", prefix) else []
    return out


_DEFINES = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)
#: The task's files that parse, by path (those shown whole: a part's lines are not the file's).
_Trees = dict[str, ast.Module]
#: Their functions and classes, nested ones too, by path.
_Defs = dict[str, list[ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef]]


def _frame_calls(defs: _Defs, points: dict[str, list[int]]) -> dict[str, str]:
    """The names each traceback frame's function calls before its line that its own file
    does not define, with why: a wrong value is often made by a callee in another file
    (the parser's ``_parse`` fails on the tokens the lexer's ``tokenize`` made) and fails
    only where it is used. Those of its own file are ``window._callees``' (a few)."""
    out: dict[str, str] = {}
    for path, found in defs.items():
        lines = Focus(points).lines_in(path)
        defined = [n for n in found if not isinstance(n, ast.ClassDef)]
        own = {n.name for n in found}
        for line in lines:
            inner = [n for n in defined if n.lineno <= line <= (n.end_lineno or n.lineno)]
            if not inner:
                continue
            fn = max(inner, key=lambda n: n.lineno)
            calls = sorted(
                (c.lineno, name)
                for c in ast.walk(fn)
                if isinstance(c, ast.Call) and c.lineno <= line
                for name in _called(c)
            )
            why = f"called by {fn.name} before line {line}"
            out.update((name, why) for _, name in calls if name not in own and name not in out)
    return out


def _parse(text: str) -> ast.Module | None:
    try:
        return ast.parse(text)
    except (SyntaxError, ValueError):
        return None


def _calls(tree: ast.Module, tests: set[str], classes: set[str]) -> list[str]:
    """The names the functions ``tests`` call (``f(...)``, ``obj.f(...)``, and what
    their syntax calls), in order; then the names the failing test ``classes`` set up
    in their own bodies (``DECORATOR = staticmethod(lfu_cache)``: what a test inherited
    from a mixin runs)."""
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
    "assertEqual": "__eq__", "assertNotEqual": "__ne__",
}  # fmt: skip
_COMPARE = {
    ast.Eq: "__eq__",
    ast.NotEq: "__ne__",
    ast.In: "__contains__",
    ast.NotIn: "__contains__",
}
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
        return [_SPECIAL[name]] if name in _SPECIAL else []
    if isinstance(node, ast.Subscript):
        return [_CONTEXT[type(node.ctx)]]
    if isinstance(node, ast.Compare):
        return [_COMPARE[type(o)] for o in node.ops if type(o) in _COMPARE]
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
