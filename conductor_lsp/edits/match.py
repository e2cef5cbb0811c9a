"""Find where a SEARCH text sits in a file: exact, then whitespace-tolerant, then fuzzy.

Matching never picks the first of several places: more than one match is an
``Ambiguous`` error, none is a ``NoMatch`` that quotes the closest lines. Work
per edit is bounded by an index of stripped lines, so many edits on a big file
stay near-linear.
"""

from __future__ import annotations

import collections
import difflib
from dataclasses import dataclass

from ..errors import Ambiguous, NoMatch
from .model import FUZZY_THRESHOLD

#: Places considered per distinctive SEARCH line; places compared closely; distinct file
#: lines searched for a near line; longest line compared character by character.
MAX_CANDIDATES = 300
MAX_SCORED = 8
MAX_KEYS = 20_000
MAX_LINE_COMPARE = 2_000


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

    def stripped(self, first: int, count: int) -> list[str]:
        return [line.strip() for line in self.lines[first : first + count]]

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
    (ignoring indentation), above ``threshold`` and nowhere else as good.

    Work is bounded: candidate places come from an index of the SEARCH's most distinctive
    lines (at most ``MAX_CANDIDATES`` each); they are ranked by how many SEARCH lines
    they hold verbatim (linear), and only the best ``MAX_SCORED`` are compared closely,
    line by line. More equally good places than that is an ambiguity, said at once."""
    size = len(search_lines)
    if size > len(index.lines):
        raise NoMatch(
            f"the SEARCH text has {size} lines but the file only {len(index.lines)}; "
            "quote lines that exist"
        )
    wanted = [s.strip() for s in search_lines]
    meaningful = [w for w in wanted if w]
    starts: set[int] = set()
    for k in _anchor_lines(search_lines):
        for n in index.by_content.get(wanted[k], [])[:MAX_CANDIDATES]:
            starts.add(min(max(0, n - k), len(index.lines) - size))
    if not starts:
        starts = _closest_by_lines(index, search_lines, size)
    ranked = sorted(((_verbatim(index, st, size, meaningful), st) for st in starts), reverse=True)
    if len(ranked) > MAX_SCORED and ranked[0][0] == ranked[MAX_SCORED][0] and ranked[0][0]:
        lines = ", ".join(str(st + 1) for _, st in sorted(ranked[: MAX_SCORED + 1])[:6])
        raise Ambiguous(
            f"the SEARCH text is similar to many places (lines {lines}, ...); quote the "
            "lines exactly, with more context"
        )
    scored = sorted(
        ((similarity(wanted, index.stripped(st, size)), st, v) for v, st in ranked[:MAX_SCORED]),
        reverse=True,
    )
    good = [
        (ratio, st)
        for ratio, st, v in scored
        if ratio >= threshold and len(meaningful) >= 3 and 2 * v >= len(meaningful)
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
        ratio, st, _ = scored[0]
        raise NoMatch(
            f"the SEARCH text was not found. Did you mean (lines {st + 1}-{st + size}, "
            f"{ratio:.0%} similar):\n{index.quote(st, size)}"
        )
    raise NoMatch("the SEARCH text was not found, and no line of it appears in the file")


def _verbatim(index: LineIndex, start: int, size: int, meaningful: list[str]) -> int:
    """How many SEARCH lines the window holds as they are (indentation aside)."""
    window = collections.Counter(index.stripped(start, size))
    return sum((collections.Counter(meaningful) & window).values())


def similarity(a: list[str], b: list[str]) -> float:
    """Like difflib's character ratio of the two texts, computed line by line: lines are
    aligned first (cheap, on whole lines), and only the lines that differ are compared
    character by character. Quadratic only in the size of what differs, not of the block."""
    matcher = difflib.SequenceMatcher(None, a, b, autojunk=False)
    same = 0
    for tag, i1, i2, j1, j2 in matcher.get_opcodes():
        if tag == "equal":
            same += sum(len(line) + 1 for line in a[i1:i2])
        elif tag == "replace":
            for x, y in zip(a[i1:i2], b[j1:j2], strict=False):
                if max(len(x), len(y)) <= MAX_LINE_COMPARE:
                    pair = difflib.SequenceMatcher(None, x, y, autojunk=False)
                    same += sum(block.size for block in pair.get_matching_blocks())
                same += 1  # the newline
    total = sum(len(line) + 1 for line in a) + sum(len(line) + 1 for line in b)
    return 2 * same / total if total else 1.0


def _closest_by_lines(index: LineIndex, search_lines: list[str], size: int) -> set[int]:
    """Candidate starts when no line matches exactly: lines close to a search line."""
    keys = list(index.by_content)[:MAX_KEYS]
    starts: set[int] = set()
    for k in _anchor_lines(search_lines)[:2]:
        for key in difflib.get_close_matches(search_lines[k].strip(), keys, n=5, cutoff=0.6):
            for n in index.by_content[key][:50]:
                starts.add(min(max(0, n - k), len(index.lines) - size))
    return starts
