"""The one rule for which of a round's calls run together and which wait (``[fix]
prefer``), over anything with a price, a chance and a floor flag: ``order.waves`` runs
a round's options by it and ``sets.expected_cost`` prices a set of picks by it, so a set
is chosen at what the round will pay for it."""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import TypeVar

T = TypeVar("T")

PREFER = ("balanced", "cost", "latency")


def in_waves(
    items: Sequence[T],
    prefer: str,
    is_floor: Callable[[T], bool],
    price: Callable[[T], float],
    chance: Callable[[T], float | None],
    bar: float = math.inf,
) -> list[list[T]]:
    """``items`` in waves (see ``order``); ``bar``: the floor call's price when no item
    is the floor's (cost mode runs the calls cheaper than it one at a time first)."""
    if prefer not in PREFER:
        raise ValueError(f"prefer is one of {', '.join(PREFER)}, not {prefer!r}")
    opts = list(items)
    if prefer == "latency" or len(opts) <= 1:
        return [opts] if opts else []
    floor = [o for o in opts if is_floor(o)]
    rest = [o for o in opts if not is_floor(o)]

    def value(o: T) -> float:
        """Chance per dollar (a free answer is worth the most; no chance, the least)."""
        p, dollars = chance(o), price(o)
        if p is None:
            return -math.inf
        return math.inf if dollars <= 0 else p / dollars

    if prefer == "cost":
        bar = min((price(o) for o in floor), default=bar)
        cheaper = sorted((o for o in rest if price(o) < bar), key=lambda o: (-value(o), price(o)))
        dearer = [o for o in rest if price(o) >= bar]
        return [[o] for o in cheaper] + [w for w in (floor, dearer) if w]
    ranked = sorted(opts, key=lambda o: (-value(o), not is_floor(o)))  # none known: floor first
    first, others = ranked[:1], [o for o in ranked[1:] if not is_floor(o)]
    if is_floor(first[0]) or not floor or not others:
        return [first, ranked[1:]]
    return [first, floor, others]
