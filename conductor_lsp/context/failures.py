"""Test output cut to what a small window holds (``context.budget``'s third cut).

pytest prints, for the frame where a failure was raised, that function's source up to
the failing line; the files a request shows hold the same function again (the lines a
traceback points at are what a file in part shows first). In a 4096-token window that
copy took a third of the room the failing code needed, and a long frame in the standard
library (``re``'s parser, ninety lines) took the place of the test's assertion. Cut, a
failure keeps the failing test's own frame whole, and every later frame its arguments,
the lines just above its failing line, that line and the error."""

from __future__ import annotations

import itertools
import re

from .focus import SECTION

#: What varies between failures of one kind: numbers and quoted values.
_DETAIL = re.compile(r"\d+|'[^']*'|\"[^\"]*\"")
#: The line pytest prints between one frame of a traceback and the next.
_BETWEEN = re.compile(r"^((?:_ ){5,}_?[ \t]*)$", re.M)
#: Where the test run's output was clipped (``testrun.result.clip``).
_CLIPPED = re.compile(r"^\.\.\. \[\d+ characters cut\] \.\.\.$", re.M)
#: Where a frame ran (``src/pkg/mod.py:212: TOMLDecodeError``, ``...:187: in loads``).
_WHERE = re.compile(r"^\S+:\d+: ")
#: Lines of a frame kept above its failing line: where the values it used were made.
ABOVE = 3
#: The most characters of one line of a frame's arguments (``src = '...'``).
ARGS_LINE = 300
#: What stands for a frame's lines not shown.
HIDDEN = "    ..."


def condense(summary: str, limit: int, *, output: bool = True) -> str:
    """A test report (``TestRun.summary``) in about ``limit`` characters: the command and
    state, one line per kind of failure with how many more are like it, then (``output``)
    the first failure's section of the output, its traceback and assertion, each frame
    past the test's own cut to its failing line (``compact``)."""
    lines = summary.strip().splitlines()
    top = [ln for ln in lines[:2] if not ln.startswith("- ")]
    listed = [ln for ln in lines if ln.startswith("- ")]
    rest = "\n".join(lines[len(top) + len(listed) :])
    kinds: dict[str, list[str]] = {}
    for line in listed:
        message = line.split(": ", 1)[1] if ": " in line else ""
        kinds.setdefault(_DETAIL.sub("#", message), []).append(line)
    out = list(top)
    for same in kinds.values():
        more = f" (and {len(same) - 1} more like this)" if len(same) > 1 else ""
        out.append(same[0] + more)
    text = "\n".join(out)
    if output and rest:
        first = _first_section(rest)
        text += "\n" + ends(compact(first.strip()), max(limit - len(text), 200))
    return head(text, limit)


def _first_section(output: str) -> str:
    """The first failure's section whole: one ends where the next begins, or where the
    test run's output was clipped (``testrun.result.clip``: its head and tail kept), and
    a section the clip cut short gives way to the first whole one after it."""
    starts = {m.start() for m in SECTION.finditer(output)}
    if not starts:
        return output
    clips = {m.start() for m in _CLIPPED.finditer(output)}
    bounds = sorted({*starts, *clips, len(output)})
    pieces = [(a, b) for a, b in itertools.pairwise(bounds) if a in starts]
    whole = [(a, b) for a, b in pieces if b not in clips]
    a, b = (whole or pieces)[0]
    return output[a:b]


def compact(section: str) -> str:
    """One failure's section of pytest's output with every frame after the first (the
    failing test's own, which shows what it asserts) cut to its arguments, the ``ABOVE``
    lines over its failing line (``>``), that statement and the error (``E``) and where
    it ran; each run of lines left out is one ``...``."""
    pieces = _BETWEEN.split(section)  # text, separator, text, separator, ...
    return "".join(p if k < 2 or k % 2 else _frame(p) for k, p in enumerate(pieces))


def _frame(text: str) -> str:
    lines = text.split("\n")
    marks = [i for i, ln in enumerate(lines) if ln.startswith(">")]
    if not marks or len(lines) <= 2 * ABOVE + 6:  # pytest's short frames: nothing to cut
        return text
    code = next((i for i, ln in enumerate(lines) if ln.startswith("    ")), marks[0])
    keep = set(range(code))  # its arguments
    for m in marks:
        keep.update(range(max(code, m - ABOVE), m + 1))
        after = m + 1  # the statement's other lines and its carets
        while after < min(len(lines), m + 1 + ABOVE) and lines[after].startswith(" "):
            keep.add(after)
            after += 1
    keep.update(i for i, ln in enumerate(lines) if ln.startswith("E ") or _WHERE.match(ln))
    out: list[str] = []
    for i, line in enumerate(lines):
        if i in keep:
            out.append(line if i >= code else line[:ARGS_LINE])
        elif line.strip() and (not out or out[-1] != HIDDEN):
            out.append(HIDDEN)
    return "\n".join(out)


def head(text: str, limit: int) -> str:
    """``text``'s first lines within ``limit`` characters, saying how much was left out."""
    if len(text) <= limit:
        return text
    cut = text[:limit]
    cut = cut[: cut.rfind("\n")] if "\n" in cut else cut
    return f"{cut}\n... [{len(text) - len(cut)} characters not shown]"


def ends(text: str, limit: int) -> str:
    """``text``'s head and tail within about ``limit`` characters, the middle said."""
    if len(text) <= limit:
        return text
    half = limit // 2
    return f"{text[:half]}\n... [{len(text) - 2 * half} characters not shown] ...\n{text[-half:]}"
