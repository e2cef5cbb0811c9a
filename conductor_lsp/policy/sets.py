"""Which set of actions a round runs: sets are enumerated, each priced as ``[fix]
prefer`` runs it (in waves, a wave paid only when the ones before it failed), and the
cheapest that reaches the target wins."""

from __future__ import annotations

import itertools
import math
from collections.abc import Callable, Sequence

from ..conductor.static import DIRECT, strongest
from ..protocols import WorkerInfo
from .features import Action
from .waving import in_waves

#: Below this chance an action is not worth a call: a policy that has seen nothing like
#: the task turn green picks nothing rather than its least hopeless action.
HOPELESS = 0.05
#: Under the target, a set whose chance of a miss is this close to the likeliest set's is
#: as good: the cheapest of them is run.
CLOSE = 0.02
#: The likeliest actions a set is drawn from (sets of up to ``max_steps`` of them).
DRAWN = 12

Pick = tuple[Action, float, float]


def choose_set(
    ranked: Sequence[Pick],
    pool: Sequence[WorkerInfo],
    wordings: dict[str, str],
    target: float,
    seconds: Callable[[Action], float],
    max_steps: int,
    budget: float = math.inf,
    prefer: str = "latency",
) -> list[Pick]:
    """The set of ``ranked`` (action, chance, $) whose chance of at least one green answer
    reaches ``target`` at the least expected $, else the likeliest set the budget allows,
    most likely first; none when no action reaches ``HOPELESS``.

    Expected as the round runs them (``prefer``, see ``order``): all at once
    (``latency``) pays every call; in waves, likeliest per dollar first, a call is paid
    only when those before it failed, so a cheap worker that is right half the time
    goes first and the dear one is paid for the other half. Ties by the seconds the
    answers took (free local models). Sets are enumerated, not grown greedily.
    """
    affordable = [r for r in ranked if r[2] <= budget]
    drawn = [r for r in affordable if r[1] >= HOPELESS][:DRAWN]  # most likely first
    if not drawn:
        return []
    floor = _floor_action(wordings, pool)
    bar = next((r[2] for r in ranked if r[0] == floor), math.inf)
    sets: list[tuple[float, float, float, tuple[int, ...]]] = []  # $, miss, seconds, picks
    for size in range(1, min(max_steps, len(drawn)) + 1):
        for combo in itertools.combinations(range(len(drawn)), size):
            picks = [drawn[i] for i in combo]
            if sum(r[2] for r in picks) > budget:
                continue
            dollars = expected_cost(picks, prefer, floor, bar)
            miss = math.prod(1 - r[1] for r in picks)
            sets.append((dollars, miss, sum(seconds(r[0]) for r in picks), combo))
    best = _best(sets, target)
    return sorted((drawn[i] for i in best), key=lambda t: -t[1])


def _best(
    sets: list[tuple[float, float, float, tuple[int, ...]]], target: float
) -> tuple[int, ...]:
    """The cheapest set that reaches the target; when none does, the cheapest of those
    within ``CLOSE`` of the likeliest (the likeliest alone stacked every dear action for a
    point of chance: bench/README.md, "Under the target"). Ties by seconds, then chance.

    In every mode: cost mode differs in its order (cheaper calls first, one at a time),
    priced so by ``expected_cost``. Its own rule until 2026-12-07, the least $ per chance
    of green, chose the trivial cascade's calls on the HumanEval-fix sample and, left
    one out, paid 1.23x the cascade's $ on bench/tasks (bench/README.md, "Cost mode
    takes the default's set")."""
    assert sets  # each affordable action alone is a set within the budget
    reach = [s for s in sets if 1 - s[1] >= target]
    if not reach:
        least = min(s[1] for s in sets)
        reach = [s for s in sets if s[1] <= least + CLOSE]
    return min(reach, key=lambda s: (s[0], s[2], s[1]))[3]


def expected_cost(
    picks: Sequence[Pick], prefer: str, floor: Action | None = None, bar: float = math.inf
) -> float:
    """What (action, chance, $) picks are expected to cost in the waves a round runs them
    in (``waving.in_waves``, as ``order.waves``), a wave paid only when the ones before it
    failed; ``floor``: the floor's call as an action, ``bar``: its $ (cost mode runs the
    picks cheaper than it one at a time, likeliest per dollar first, then the floor's
    call, then the dearer ones at once)."""
    total, reach = 0.0, 1.0
    for wave in in_waves(
        picks, prefer, lambda r: r[0] == floor, lambda r: r[2], lambda r: r[1], bar
    ):
        total += reach * sum(r[2] for r in wave)
        reach *= math.prod(1 - r[1] for r in wave)
    return total


def _floor_action(wordings: dict[str, str], pool: Sequence[WorkerInfo]) -> Action | None:
    """The floor's call as an action: static's direct wording to the strongest worker."""
    key = next((k for k, v in wordings.items() if v == DIRECT), None)
    if key is None or all(w.is_tool for w in pool):
        return None
    return Action(strongest(pool).name, key)
