"""Read worker output into file edits: SEARCH/REPLACE blocks, unified diffs, whole files.

The output is untrusted text: anything we cannot read becomes a parse failure
that names the output line, never an exception.
"""

from __future__ import annotations

import re

from .model import EditFailure, EditKind, FileEdit

_SEARCH = re.compile(r"^\s*<{5,9} ?SEARCH\s*$")
_DIVIDER = re.compile(r"^\s*={5,9}\s*$")
_REPLACE = re.compile(r"^\s*>{5,9} ?REPLACE\s*$")
_FENCE = re.compile(r"^\s*(`{3,}|~{3,})(.*)$")
# Absolute and home paths are read too, so that they are refused by name later.
_PATHLIKE = re.compile(r"^([A-Za-z]:)?[~/\\\w.@+-][\w./\\@+-]*$")
_FILE_NAME = re.compile(r"[\w./-]*\w\.[A-Za-z][A-Za-z0-9]{0,7}")
_HUNK = re.compile(r"^@@ -(\d+)(?:,(\d+))? \+(\d+)(?:,(\d+))? @@")


def clean_path(line: str) -> str:
    """A path from a line like ``### `src/app.py`:``, ``File: src/app.py`` or
    ``**File `src/app.py`:**``, else ''."""
    s = line.strip()
    s = re.sub(r"^(#+|\*\*|[-*]\s)", "", s).strip()
    s = re.sub(r"^(file|path|filename)(\s*:\s*|\s+(?=`))", "", s, flags=re.I)
    s = s.strip("*`'\" ").rstrip(":").strip("*`'\" ")
    if not s or " " in s or len(s) > 300 or not _PATHLIKE.match(s):
        return ""
    if "/" not in s and "." not in s:
        return ""
    return s


def _path_before(lines: list[str], i: int) -> str:
    """The path named on the nearest meaningful line above ``i`` (skipping fences)."""
    j = i - 1
    while j >= 0 and (not lines[j].strip() or _FENCE.match(lines[j])):
        fence = _FENCE.match(lines[j])
        if fence and clean_path(fence.group(2)):  # ```python src/app.py
            return clean_path(fence.group(2))
        j -= 1
    return clean_path(lines[j]) if j >= 0 else ""


def parse_edits(output: str) -> tuple[list[FileEdit], list[EditFailure]]:
    """All edits in ``output`` in order, and the parse failures."""
    lines = output.replace("\r\n", "\n").split("\n")
    edits: list[FileEdit] = []
    failures: list[EditFailure] = []
    last_path = ""
    in_edit_fence = False  # inside a fence that wraps SEARCH/REPLACE blocks or a diff
    i = 0
    while i < len(lines):
        line = lines[i]
        if in_edit_fence and _FENCE.match(line) and not _FENCE.match(line).group(2).strip():  # type: ignore[union-attr]
            in_edit_fence = False
            i += 1
            continue
        if _SEARCH.match(line):
            path = _path_before(lines, i) or last_path
            i, edit, failure = _read_block(lines, i, path)
            if failure:
                failures.append(failure)
            elif edit:
                edits.append(edit)
                last_path = edit.path
            continue
        if line.startswith("--- ") and i + 1 < len(lines) and lines[i + 1].startswith("+++ "):
            i = _read_diff(lines, i, edits, failures)
            continue
        fence = _FENCE.match(line)
        if fence:
            nxt = _read_fenced(lines, i, fence.group(1), edits, failures)
            in_edit_fence = nxt == i + 1
            i = nxt
            continue
        i += 1
    return edits, failures


def _read_block(
    lines: list[str], i: int, path: str
) -> tuple[int, FileEdit | None, EditFailure | None]:
    start = i + 1
    search: list[str] = []
    replace: list[str] = []
    target = search
    i += 1
    while i < len(lines):
        if _DIVIDER.match(lines[i]) and target is search:
            target = replace
        elif _REPLACE.match(lines[i]) and target is replace:
            # No path: "" for now; applying it resolves that (the only file under repair).
            return _finished(path, search, replace, start, i + 1)
        elif _SEARCH.match(lines[i]):
            break
        elif target is replace and _FENCE.match(lines[i]) and not lines[i].strip().strip("`~"):
            # The answer's fence closed right after the new lines: the marker was forgotten.
            return _finished(path, search, replace, start, i)
        else:
            target.append(lines[i])
        i += 1
    return i, None, EditFailure(path or "?", "unterminated SEARCH/REPLACE block", start)


def _finished(
    path: str, search: list[str], replace: list[str], start: int, after: int
) -> tuple[int, FileEdit | None, EditFailure | None]:
    text_s = "\n".join(search) + ("\n" if search else "")
    text_r = "\n".join(replace) + ("\n" if replace else "")
    return after, FileEdit(path, "replace", text_s, text_r, source_line=start), None


def _diff_path(header: str) -> str:
    p = header[4:].split("\t")[0].strip()
    if p == "/dev/null":
        return p
    if p.startswith(("a/", "b/")):
        p = p[2:]
    return p


def _read_diff(lines: list[str], i: int, edits: list[FileEdit], failures: list[EditFailure]) -> int:
    old, new = _diff_path(lines[i]), _diff_path(lines[i + 1])
    start = i + 1
    i += 2
    if new == "/dev/null":
        failures.append(EditFailure(old, "deleting files is not supported", start))
    path = old if new == "/dev/null" else new
    while i < len(lines):
        m = _HUNK.match(lines[i])
        if not m:
            break
        hunk_line = i + 1
        i += 1
        minus: list[str] = []
        plus: list[str] = []
        while i < len(lines) and not _HUNK.match(lines[i]) and not lines[i].startswith("--- "):
            body = lines[i]
            if body.startswith("\\"):  # "\ No newline at end of file"
                i += 1
                continue
            tag, text = (body[:1], body[1:]) if body else (" ", "")
            if tag not in " +-":
                break
            if tag in " -":
                minus.append(text)
            if tag in " +":
                plus.append(text)
            i += 1
        while minus and plus and minus[-1] == "" and plus[-1] == "" and i >= len(lines):
            minus.pop()  # trailing blank line of the output, not of the hunk
            plus.pop()
        if new == "/dev/null":
            continue
        s = "\n".join(minus) + ("\n" if minus else "")
        r = "\n".join(plus) + ("\n" if plus else "")
        if old == "/dev/null":
            edits.append(FileEdit(path, "whole", "", r, source_line=hunk_line))
        else:
            edits.append(FileEdit(path, "diff", s, r, int(m.group(1)), hunk_line))
    if i == start + 1:
        failures.append(EditFailure(path, "diff header without hunks", start))
    return i


def _read_fenced(
    lines: list[str], i: int, fence: str, edits: list[FileEdit], failures: list[EditFailure]
) -> int:
    """A fenced block preceded by its path is a whole file, unless it holds other edits;
    without a path it is a ``block`` (path ""), which only the single file under repair
    may take, after checks (``edits.blocks``)."""
    path = _path_before(lines, i) or clean_path(_FENCE.match(lines[i]).group(2))  # type: ignore[union-attr]
    j = i + 1
    body: list[str] = []
    while j < len(lines) and not lines[j].strip().startswith(fence[0] * len(fence)):
        if _SEARCH.match(lines[j]) or (
            lines[j].startswith("--- ") and j + 1 < len(lines) and lines[j + 1].startswith("+++ ")
        ):
            return i + 1  # the fence wraps SEARCH/REPLACE or a diff: read those instead
        body.append(lines[j])
        j += 1
    if j >= len(lines):
        return i + 1
    closing = _FENCE.match(lines[j])
    if len(body) == 1 and clean_path(body[0]) and closing and closing.group(2).strip():
        # "```\ncalc.py\n```python\n...": a fence holding just a path, then the file's
        # own fence (small models write this); the path names the next block.
        lines[j - 1] = ""  # keep line numbers; the next fence finds the path above it
        lines[i] = body[0]
        return j
    named = clean_path(body[0]) if body and body[0].lstrip().startswith("#") else ""
    if not path and _FILE_NAME.fullmatch(named):
        # "```python\n# stats.py\n...": the path as the block's first comment line
        path, body = named, body[1:]
    kind: EditKind = "whole" if path else "block"
    edits.append(FileEdit(path, kind, "", "\n".join(body) + "\n", source_line=i + 1))
    return j + 1
