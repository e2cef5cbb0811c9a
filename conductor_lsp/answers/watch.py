"""Cutting generation short: a small model at temperature 0 can repeat one line, or one run
of words, until ``max_tokens``; everything after the first few copies is paid for and
thrown away. The watch reads the answer as it streams and says when to stop, and why."""

from __future__ import annotations

import re
from dataclasses import dataclass, field

#: The same non-blank line this many times in a row is a loop.
SAME_LINE = 4
#: A line of some length seen this many times anywhere in the answer is a loop (two or
#: three lines going round); short lines (``}``, ``return x``) repeat in honest code.
SAME_LONG_LINE = 8
LONG_LINE = 24
#: A run of text repeated this many times back to back, with no newline needed.
SAME_RUN = 5
RUN_CHARS = (6, 160)
#: How much new text between two looks for repeated runs (each look scans the tail).
LOOK_EVERY = 48

_FENCE = re.compile(r"^\s*(`{3,}|~{3,})(.*)$")


@dataclass
class TokenFlow:
    """Tokens of an answer as they come, counted by whoever feeds its watch (a decoding
    thread, a stream) and read by whoever reports progress (the engine), so a long answer
    is never silence. Plain int updates: one writer, readers that only look."""

    tokens: int = 0

    def add(self, n: int) -> None:
        self.tokens += n


@dataclass
class AnswerWatch:
    """Fed the answer piece by piece; ``feed`` returns why to stop ('' to go on).

    ``code``: the subtask asks for code, so the answer is done when its first fenced
    code block closes (prose after it is a model talking to itself)."""

    code: bool = False
    #: Where the tokens fed are counted (a fresh count of its own when none is shared).
    flow: TokenFlow = field(default_factory=TokenFlow)
    text: str = ""
    reason: str = ""
    _done_lines: int = 0
    _run_checked: int = 0
    _last: str = ""
    _streak: int = 0
    _seen: dict[str, int] = field(default_factory=dict)
    _fence: str = ""

    def feed(self, piece: str, tokens: int = 1) -> str:
        """Why to stop, now that ``piece`` came (``tokens`` of them, counted in ``flow``)."""
        self.flow.add(tokens)
        if self.reason or not piece:
            return self.reason
        self.text += piece
        lines = self.text.split("\n")
        for k in range(self._done_lines, len(lines) - 1):
            self.reason = self._line(lines[k])
            if self.reason.startswith("done"):  # the answer ends with this line
                self.text = "\n".join(lines[: k + 1]) + "\n"
            if self.reason:
                break
        self._done_lines = len(lines) - 1
        if not self.reason and len(self.text) - self._run_checked >= LOOK_EVERY:
            self._run_checked = len(self.text)
            self.reason = repeated_run(self.text[-RUN_CHARS[1] * SAME_RUN :])
        return self.reason

    def cut(self) -> str:
        """The answer up to where the watch stopped it: a loop keeps its first copy."""
        if not self.reason.startswith("loop"):
            return self.text
        if self.reason.startswith("loop: the same line") and "\n" in self.text:
            return trim_loop(self.text[: self.text.rindex("\n") + 1])  # not the half line
        return trim_loop(self.text)

    def _line(self, line: str) -> str:
        fence = _FENCE.match(line)
        if fence:
            if not self._fence:
                self._fence = fence.group(1)[0] * 3
            elif fence.group(1).startswith(self._fence) and not fence.group(2).strip():
                self._fence = ""
                if self.code:
                    return "done: the answer's code block ended"
        key = line.strip()
        if not key:
            return ""
        self._streak = self._streak + 1 if key == self._last else 1
        self._last = key
        if self._streak >= SAME_LINE:
            return f"loop: the same line {self._streak} times in a row ({key[:60]!r})"
        if len(key) >= LONG_LINE:
            self._seen[key] = self._seen.get(key, 0) + 1
            if self._seen[key] >= SAME_LONG_LINE:
                return f"loop: the same line {self._seen[key]} times ({key[:60]!r})"
        return ""


def _repeated_unit(text: str) -> str:
    """The shortest run of text that ``text`` ends with ``SAME_RUN`` times back to back
    ('' when there is none)."""
    low, high = RUN_CHARS
    for size in range(low, min(high, len(text) // SAME_RUN) + 1):
        unit = text[-size:]
        if unit.strip() and text.endswith(unit * SAME_RUN):
            return unit
    return ""


def repeated_run(tail: str) -> str:
    """Why ``tail`` ends in a loop: some run of text repeated ``SAME_RUN`` times back to
    back ('' when it does not)."""
    unit = _repeated_unit(tail)
    if not unit:
        return ""
    return f"loop: the same {len(unit)} characters {SAME_RUN} times ({unit.strip()[:40]!r})"


def trim_loop(text: str) -> str:
    """``text`` with the repeated tail cut to one copy (lines first, then runs)."""
    lines = text.rstrip("\n").split("\n")
    end = len(lines)
    while end >= 2 and lines[end - 1].strip() and lines[end - 1] == lines[end - 2]:
        end -= 1
    if end < len(lines):
        return "\n".join(lines[:end]) + "\n"
    unit = _repeated_unit(text)
    while unit and text.endswith(unit * 2):
        text = text[: -len(unit)]
    return text
