"""Whether the answer's Python parses: a result that does not even parse is reported as
such, beside the answer, never shown as if it were one."""

from __future__ import annotations

import ast
import re
import warnings

_OPEN = re.compile(r"^\s*(`{3,}|~{3,})\s*([\w+.-]*)[^\n]*$")
PYTHON_TAGS = {"python", "py", "python3", "py3"}


def code_blocks(text: str) -> list[tuple[int, str, str]]:
    """(line where the block's code starts, 1-based; its tag; its code) for each fenced
    block, an unclosed last one included (the answer was cut)."""
    out: list[tuple[int, str, str]] = []
    lines = text.split("\n")
    i = 0
    while i < len(lines):
        m = _OPEN.match(lines[i])
        if not m:
            i += 1
            continue
        fence, tag = m.group(1), m.group(2).lower()
        j = i + 1
        while j < len(lines) and not (
            lines[j].strip().startswith(fence[0] * len(fence)) and not lines[j].strip("`~ ")
        ):
            j += 1
        out.append((i + 2, tag, "\n".join(lines[i + 1 : j])))
        i = j + 1
    return out


def code_problems(text: str) -> list[str]:
    """One line per Python block that does not parse ("the answer's code does not parse:
    line 3, '(' was never closed"), lines counted in the answer. Blocks of edits (SEARCH/
    REPLACE, diffs) hold fragments and are not checked."""
    out = []
    for start, tag, code in code_blocks(text):
        if tag not in PYTHON_TAGS or _is_edit(code):
            continue
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")  # SyntaxWarning on odd escapes: not our news
                ast.parse(code)
        except SyntaxError as e:
            line = start + (e.lineno or 1) - 1
            out.append(f"the answer's code does not parse: line {line}, {e.msg}")
        except ValueError as e:  # NUL bytes
            out.append(f"the answer's code does not parse: {e}")
    return out


def _is_edit(code: str) -> bool:
    return "<<<<<<< SEARCH" in code or code.lstrip().startswith(("--- ", "@@ ", "diff --git"))
