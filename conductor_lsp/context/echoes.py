"""Earlier steps' answers as a later step is shown them: without the code of read-only
files they copied.

A small model asked to analyse often answers with "the corrected code": a copy of the
test file (its ``check`` and ``test_...`` functions), edited. A later step that sees it
copies it again as its change, and the edit is refused (a test written into the file
under repair). Seen on the pipeline chain held out on HumanEval-fix (2026-12-07): in 20
of 40 chains small's analysis held a block redefining the test file's functions, big's
change copied it in 14, and 11 of the chain's answers were refused for it. A later step
is therefore shown an earlier answer with the read-only files' definitions left out of
its code blocks (a block left with nothing else is left out whole), and a block that is
mostly a read-only file's lines replaced by a line saying so. The answer itself, judged
and recorded, is unchanged. Pure: no I/O.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Iterable, Sequence

from ..edits.blocks import statement_span
from ..task import FileContext

#: A fenced code block: its fence line (language and all), its body and its closing fence.
_FENCE = re.compile(
    r"^(?P<open>[ \t]*```[^\n`]*\n)(?P<body>.*?)(?P<close>^[ \t]*```[ \t]*$)", re.M | re.S
)
#: A top-level definition of a file, read without parsing it (a file shown in part has
#: gaps that do not parse).
_TOP_DEF = re.compile(r"^(?:async[ \t]+)?(?:def|class)[ \t]+(\w+)", re.M)
#: The share of a block's lines from one read-only file that makes it a copy of it.
COPY_SHARE = 0.5
#: The fewest such lines: a block of two common lines is no copy.
COPY_LINES = 3


def without_copies(text: str, files: Sequence[FileContext]) -> str:
    """``text`` (an earlier step's answer) as a later step is shown it, given the task's
    files: the read-only files' code its blocks copied, left out and said."""
    read_only = [f for f in files if not f.editable and f.text]
    if not read_only or "```" not in text:
        return text
    editable = _lines(f.text for f in files if f.editable)

    def shown(m: re.Match[str]) -> str:
        body = m.group("body")
        for f in read_only:
            kept = _without_definitions(body, f)
            if kept is None:
                return _left_out(f.path, "definitions")
            if kept != body:
                return m.group("open") + kept + m.group("close")
            if _copies_lines(body, f, editable):
                return _left_out(f.path, "lines")
        return m.group(0)

    return _FENCE.sub(shown, text)


def _left_out(path: str, what: str) -> str:
    return f"(a code block left out here: a copy of the read-only `{path}`'s {what})"


def _without_definitions(body: str, f: FileContext) -> str | None:
    """``body`` less the top-level definitions named as ``f``'s (as it was where it has
    none, or does not parse); None when nothing but imports is left."""
    names = set(_TOP_DEF.findall(f.text))
    try:
        tree = ast.parse(body)
    except SyntaxError:
        return body
    defs = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)
    dropped = [n for n in tree.body if isinstance(n, defs) and n.name in names]
    if not names or not dropped:
        return body
    rest = [n for n in tree.body if n not in dropped]
    if all(isinstance(n, ast.Import | ast.ImportFrom) for n in rest):
        return None
    lines = body.splitlines(keepends=True)
    for node in sorted(dropped, key=lambda n: -n.lineno):  # bottom up
        first, last = statement_span(node)
        lines[first:last] = []
    said = ", ".join(n.name for n in dropped)
    note = f"# (left out: {said}, the read-only {f.path}'s; not to be changed)\n"
    return note + "".join(lines).strip("\n") + "\n"


def _copies_lines(body: str, f: FileContext, editable: set[str]) -> bool:
    """Most of ``body``'s lines are ``f``'s, and more of them than the editable files'."""
    lines = [line.strip() for line in body.splitlines() if len(line.strip()) >= 4]
    read_only = _lines([f.text])
    theirs = sum(line in read_only for line in lines)
    ours = sum(line in editable for line in lines)
    return theirs >= max(COPY_LINES, COPY_SHARE * len(lines)) and theirs > ours


def _lines(texts: Iterable[str]) -> set[str]:
    return {line.strip() for t in texts for line in t.splitlines() if len(line.strip()) >= 4}
