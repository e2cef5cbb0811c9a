"""A fix as hunks a user accepts or rejects one by one, and the text with only the
accepted ones applied. Pure: text in, text out."""

from __future__ import annotations

import difflib
from collections.abc import Collection, Mapping
from dataclasses import dataclass


@dataclass(frozen=True)
class Hunk:
    """One change in one file: old lines [a1, a2) became new lines [b1, b2)."""

    index: int
    path: str
    a1: int
    a2: int
    b1: int
    b2: int
    old: tuple[str, ...]
    new: tuple[str, ...]

    @property
    def label(self) -> str:
        """Where it is, as a person says it: ``calc.py:3-4``."""
        first = self.a1 + 1
        last = max(self.a2, first)
        return f"{self.path}:{first}" if last == first else f"{self.path}:{first}-{last}"

    def diff(self) -> str:
        """The hunk in unified-diff form, with its file."""
        head = f"--- a/{self.path}\n+++ b/{self.path}\n"
        rng = f"@@ -{self.a1 + 1},{self.a2 - self.a1} +{self.b1 + 1},{self.b2 - self.b1} @@\n"
        body = [f"-{line}" for line in self.old] + [f"+{line}" for line in self.new]
        return head + rng + "".join(x if x.endswith("\n") else x + "\n" for x in body)


def _lines(text: str | None) -> list[str]:
    return [] if text is None else text.splitlines(keepends=True)


def file_hunks(path: str, before: str | None, after: str, start: int = 0) -> list[Hunk]:
    """The changes from ``before`` (None: a new file) to ``after``, numbered from
    ``start``; changes closer than three unchanged lines are one hunk."""
    a, b = _lines(before), _lines(after)
    merged: list[list[int]] = []
    for tag, a1, a2, b1, b2 in difflib.SequenceMatcher(None, a, b, autojunk=False).get_opcodes():
        if tag == "equal":
            continue
        if merged and a1 - merged[-1][1] < 3 and b1 - merged[-1][3] < 3:
            merged[-1][1], merged[-1][3] = a2, b2
        else:
            merged.append([a1, a2, b1, b2])
    return [
        Hunk(start + i, path, a1, a2, b1, b2, tuple(a[a1:a2]), tuple(b[b1:b2]))
        for i, (a1, a2, b1, b2) in enumerate(merged)
    ]


def hunks_of(before: Mapping[str, str | None], after: Mapping[str, str]) -> list[Hunk]:
    """Every file's hunks, numbered across files in path order."""
    out: list[Hunk] = []
    for path in sorted(after):
        out += file_hunks(path, before.get(path), after[path], len(out))
    return out


def apply_hunks(before: str | None, hunks: Collection[Hunk], accepted: Collection[int]) -> str:
    """``before`` with only the accepted ones of this file's ``hunks`` applied."""
    a = _lines(before)
    out: list[str] = []
    pos = 0
    for h in sorted(hunks, key=lambda h: h.a1):
        out += a[pos : h.a1]
        out += h.new if h.index in accepted else a[h.a1 : h.a2]
        pos = h.a2
    out += a[pos:]
    return "".join(out)


def applied_hunks(before: str | None, hunks: Collection[Hunk], text: str) -> set[int] | None:
    """Which of this file's hunks ``text`` holds, when an editor applied some of them and
    says only that it applied (VS Code's preview, some boxes left unticked); None when ``text``
    is no mix of them (the user changed something else too)."""
    mine = sorted(hunks, key=lambda h: h.a1)
    if len(mine) > 12:  # 4,096 mixes at most; past that, only all or none
        options = [set(), {h.index for h in mine}]
    else:
        options = [
            {h.index for i, h in enumerate(mine) if mask >> i & 1} for mask in range(1 << len(mine))
        ]
    for accepted in options:
        if apply_hunks(before, mine, accepted) == text:
            return accepted
    return None
