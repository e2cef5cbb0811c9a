"""Helpers shared by the benchmarks: tables and the loopback stand-in."""

from __future__ import annotations

import statistics
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any, TypeVar

T = TypeVar("T")

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "tests"))  # the provider stand-in lives with the tests


def table(headers: Sequence[str], rows: Sequence[Sequence[object]]) -> str:
    """A Markdown table, so figures paste straight into the README."""
    cells = [[str(h) for h in headers], *[[_fmt(c) for c in r] for r in rows]]
    widths = [max(len(row[i]) for row in cells) for i in range(len(headers))]
    lines = [
        "| " + " | ".join(c.ljust(w) for c, w in zip(row, widths, strict=True)) + " |"
        for row in cells
    ]
    lines.insert(1, "|" + "|".join("-" * (w + 2) for w in widths) + "|")
    return "\n".join(lines)


def episodes_of(runs: Sequence[str | Path]) -> list[Any]:
    """Every episode the recorded ``eval`` runs hold: what a policy is fitted on."""
    from conductor_lsp.episodes.log import read_episodes
    from conductor_lsp.policy import eval_episodes

    return [e for run in runs for e in read_episodes(eval_episodes(Path(run)))]


def _fmt(value: object) -> str:
    if isinstance(value, float):
        return f"{value:.3f}" if abs(value) < 100 else f"{value:.1f}"
    return str(value)


def percentile(values: Sequence[float], p: float) -> float:
    ordered = sorted(values)
    k = max(0, min(len(ordered) - 1, round(p / 100 * (len(ordered) - 1))))
    return ordered[k]


def median(values: Sequence[float]) -> float:
    return statistics.median(values)


def folds(items: Sequence[T], k: int) -> list[tuple[list[T], list[T]]]:
    """(held out, fitted on) pairs: ``k`` folds (``items[i::k]`` held), or one per item
    (leave one out) when ``k`` is 0. Every two-fold table splits this way."""
    held = [[t] for t in items] if k == 0 else [list(items[i::k]) for i in range(k)]
    return [(h, [t for t in items if t not in h]) for h in held]
