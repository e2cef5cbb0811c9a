"""Find where a SEARCH text sits in a file: exact, then whitespace-tolerant, then fuzzy.

Matching never picks the first of several places: more than one match is an
``Ambiguous`` error, none is a ``NoMatch`` that quotes the closest lines. Work
per edit is bounded by an index of stripped lines, so many edits on a big file
stay near-linear.
"""

from __future__ import annotations

import difflib
from dataclasses import dataclass

from ..errors import Ambiguous, NoMatch
from .model import FUZZY_THRESHOLD

MAX_CANDIDATES = 300


@dataclass(frozen=True)
class Match:
    start: int  # character offsets into the file text
    end: int
    replacement: str
    how: str


class LineIndex:
    """Lines of a text with offsets and an index from stripped content to line numbers."""

    def __init__(self, text: str) -> None:
        self.text = text
        #: The text behind a newline, so exact matches can be held to line starts.
        self.hay = "\n" + text
        self.lines = text.splitlines(keepends=True)
        self.offsets = [0]
        for line in self.lines:
            self.offsets.append(self.offsets[-1] + len(line))
        self._by_content: dict[str, list[int]] | None = None

    @property
    def by_content(self) -> dict[str, list[int]]:
        if self._by_content is None:
            index: dict[str, list[int]] = {}
            for n, line in enumerate(self.lines):
                index.setdefault(line.strip(), []).append(n)
            self._by_content = index
        return self._by_content

    def span(self, first: int, count: int) -> tuple[int, int]:
        return self.offsets[first], self.offsets[first + count]

    def quote(self, first: int, count: int) -> str:
        shown = self.lines[first : first + min(count, 12)]
        return "".join(f"{first + k + 1:>5} | {line.rstrip()}\n" for k, line in enumerate(shown))


def _indent(line: str) -> str:
    return line[: len(line) - len(line.lstrip())]


def _reindent(text: str, old: str, new: str) -> str:
    """Move every line of ``text`` from indentation ``old`` to ``new``."""
    out = []
    for line in text.splitlines(keepends=True):
        if line.strip() and line.startswith(old):
            out.append(new + line[len(old) :])
        else:
            out.append(line)
    return "".join(out)


def _tolerant_at(index: LineIndex, first: int, search: list[str]) -> tuple[str, str] | None:
    """If ``search`` matches at line ``first`` up to a uniform indentation shift and
    trailing whitespace, return (indent in search, indent in file) of the least
    indented line; else None."""
    if first < 0 or first + len(search) > len(index.lines):
        return None
    pairs = []
    for k, s in enumerate(search):
        t = index.lines[first + k]
        if not s.strip():
            if t.strip():
                return None
            continue
        if s.strip() != t.strip():
            return None
        pairs.append((_indent(s), _indent(t)))
    if not pairs:
        return None
    old, new = min(pairs, key=lambda p: len(p[0]))
    for si, ti in pairs:
        if not (si.startswith(old) and ti.startswith(new) and si[len(old) :] == ti[len(new) :]):
            return None
    return old, new


def _anchor_lines(search: list[str]) -> list[int]:
    """Indices of the search lines most likely to be distinctive, longest first."""
    idx = [k for k, s in enumerate(search) if len(s.strip()) >= 4]
    return (
        sorted(idx, key=lambda k: -len(search[k].strip()))[:4]
        or [k for k, s in enumerate(search) if s.strip()][:1]
    )


def find_match(
    index: LineIndex,
    search: str,
    replace: str,
    *,
    hint_line: int = 0,
    threshold: float = FUZZY_THRESHOLD,
) -> Match:
    """Locate ``search`` in the indexed text; raise NoMatch or Ambiguous."""
    text = index.text
    # 1. exact, on whole lines (a match may not start mid-line)
    positions: list[int] = []
    needle = "\n" + search
    p = index.hay.find(needle)
    while p >= 0 and len(positions) < 50:
        positions.append(p)  # offset p in hay is offset p - 1 + 1 in text
        p = index.hay.find(needle, p + 1)
    if positions:
        if len(positions) > 1 and hint_line:
            hinted = [q for q in positions if text.count("\n", 0, q) + 1 == hint_line]
            positions = hinted if len(hinted) == 1 else positions
        if len(positions) == 1:
            return Match(positions[0], positions[0] + len(search), replace, "exact")
        starts = ", ".join(str(text.count("\n", 0, q) + 1) for q in positions[:6])
        raise Ambiguous(
            f"the SEARCH text occurs {len(positions)} times (at lines {starts}); "
            "include more surrounding lines to make it unique"
        )
    search_lines = search.splitlines(keepends=True)
    if not search_lines or not any(s.strip() for s in search_lines):
        raise NoMatch("the SEARCH text is empty or blank; it must quote existing lines")
    # 2. tolerant: trailing whitespace and a uniform indentation shift
    anchor = next(k for k, s in enumerate(search_lines) if s.strip())
    found: list[tuple[int, tuple[str, str]]] = []
    for n in index.by_content.get(search_lines[anchor].strip(), [])[:MAX_CANDIDATES]:
        shift = _tolerant_at(index, n - anchor, search_lines)
        if shift is not None:
            found.append((n - anchor, shift))
    if len(found) > 1 and hint_line:
        hinted_found = [f for f in found if f[0] + 1 == hint_line]
        found = hinted_found if len(hinted_found) == 1 else found
    if len(found) == 1:
        first_line, (old, new) = found[0]
        start, end = index.span(first_line, len(search_lines))
        how = "whitespace" if old == new else "indent"
        return Match(start, end, _reindent(replace, old, new), how)
    if len(found) > 1:
        lines = ", ".join(str(f + 1) for f, _ in found[:6])
        raise Ambiguous(
            f"the SEARCH text matches at lines {lines} (ignoring indentation); "
            "include more surrounding lines to make it unique"
        )
    # 3. fuzzy, anchored on distinctive lines, accepted only if unique
    return _fuzzy(index, search_lines, replace, threshold)


def _fuzzy(index: LineIndex, search_lines: list[str], replace: str, threshold: float) -> Match:
    """Accept a near match only for blocks of 3+ lines, at least half of them verbatim
    (ignoring indentation), above ``threshold`` and nowhere else as good."""
    size = len(search_lines)
    meaningful = [s.strip() for s in search_lines if s.strip()]
    wanted = "".join(s.strip() + "\n" for s in search_lines)
    starts: set[int] = set()
    for k in _anchor_lines(search_lines):
        for n in index.by_content.get(search_lines[k].strip(), [])[:MAX_CANDIDATES]:
            starts.add(n - k)
    if not starts:
        starts = _closest_by_lines(index, search_lines)
    scored: list[tuple[float, int]] = []
    for st in starts:
        st = max(0, min(st, len(index.lines) - size))
        window = "".join(line.strip() + "\n" for line in index.lines[st : st + size])
        sm = difflib.SequenceMatcher(None, wanted, window, autojunk=False)
        if sm.real_quick_ratio() < threshold * 0.8 and scored:
            continue
        scored.append((sm.ratio(), st))
    scored.sort(reverse=True)

    def verbatim(st: int) -> int:
        window = {line.strip() for line in index.lines[st : st + size]}
        return sum(1 for s in meaningful if s in window)

    good = [
        s
        for s in scored
        if s[0] >= threshold and len(meaningful) >= 3 and 2 * verbatim(s[1]) >= len(meaningful)
    ]
    if len(good) == 1:
        ratio, st = good[0]
        start, end = index.span(st, size)
        first_search = next((s for s in search_lines if s.strip()), "")
        first_file = next((ln for ln in index.lines[st : st + size] if ln.strip()), "")
        new = _reindent(replace, _indent(first_search), _indent(first_file))
        return Match(start, end, new, f"fuzzy({ratio:.2f})")
    if len(good) > 1:
        lines = ", ".join(str(st + 1) for _, st in good[:6])
        raise Ambiguous(
            f"the SEARCH text is similar to several places (lines {lines}); quote the lines exactly"
        )
    if scored:
        ratio, st = scored[0]
        raise NoMatch(
            f"the SEARCH text was not found. Did you mean (lines {st + 1}-{st + size}, "
            f"{ratio:.0%} similar):\n{index.quote(st, size)}"
        )
    raise NoMatch("the SEARCH text was not found, and no line of it appears in the file")


def _closest_by_lines(index: LineIndex, search_lines: list[str]) -> set[int]:
    """Candidate starts when no line matches exactly: lines close to a search line."""
    keys = list(index.by_content)
    starts: set[int] = set()
    for k in _anchor_lines(search_lines)[:2]:
        for key in difflib.get_close_matches(search_lines[k].strip(), keys, n=5, cutoff=0.6):
            for n in index.by_content[key][:50]:
                starts.add(n - k)
    return starts
