"""Base rates: how often each worker was green in each kind of action (``features.kind``:
its ranks in the pool, the wording, the round), the chance a policy acts on where its
weights are not trusted (``Policy.p_green``). Counted per worker within a kind, read
with what its other kinds and the kind's other workers say.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from ..protocols import WorkerInfo
from .features import Action, kind


@dataclass
class Bill:
    """What a worker's answers were billed, summed: how many, $ and seconds."""

    answers: float = 0.0
    cost: float = 0.0
    seconds: float = 0.0


@dataclass
class Rate:
    """Verdicts counted in one key: how many were green of how many judged (online,
    older ones fade, so both may be fractions)."""

    green: float = 0.0
    judged: float = 0.0


#: How many verdicts a worker's other kinds, and its kind's other workers, weigh in its
#: base rate (``base_rate``).
OWN_WEIGHT = 2.0
#: A run of red verdicts this unlikely under a worker's own base rates says it changed
#: (another model behind its name, an endpoint that degraded): online, its record is then
#: cut to ``RESTART`` verdicts a kind, so what it does now decides (``watch``).
ALARM = 0.01
RESTART = 2.0


def keys(view: Sequence[str], action: Action, pool: Sequence[WorkerInfo]) -> tuple[str, str] | None:
    """Where an action's verdicts are counted: its kind, and its worker within the kind
    (None: the worker is not in the pool)."""
    k = kind(view, action, pool)
    return None if k is None else (k, f"{k}|worker:{action.worker}")


def count(prior: dict[str, Rate], key: str, green: bool, keep: float = 1.0) -> None:
    """One verdict into ``key``'s rate, after keeping ``keep`` of what it had counted
    (1: all, as a fit counts; an online update forgets)."""
    rate = prior.setdefault(key, Rate())
    rate.green = rate.green * keep + green
    rate.judged = rate.judged * keep + 1


def watch(
    prior: dict[str, Rate],
    reds: dict[str, float],
    view: Sequence[str],
    action: Action,
    pool: Sequence[WorkerInfo],
    green: bool,
) -> bool:
    """Online, before a verdict is counted: follow the worker's run of reds (``reds``: its
    log-chance, each red at the chance its base rate gave); when the run is less likely
    than ``ALARM``, cut the worker's record (True). Why: forgetting alone fades each
    wording and round apart, so a worker that turned bad was dropped in one and tried
    again in the next (27 jobs after a long record, bench/README.md "When the pool
    changes")."""
    if green:
        reds.pop(action.worker, None)
        return False
    p = base_rate(prior, view, action, pool)
    if p is None:
        return False
    reds[action.worker] = reds.get(action.worker, 0.0) + math.log(max(1 - p, 1e-9))
    if reds[action.worker] > math.log(ALARM):
        return False
    mine = f"|worker:{action.worker}"
    for k, rate in prior.items():
        if k.endswith(mine) and rate.judged > RESTART:
            rate.green, rate.judged = rate.green * RESTART / rate.judged, RESTART
    del reds[action.worker]
    return True


def base_rate(
    prior: Mapping[str, Rate],
    view: Sequence[str],
    action: Action,
    pool: Sequence[WorkerInfo],
) -> float | None:
    """How often this worker was green in this kind of action, smoothed toward how
    often it was in its other kinds (other wordings, rounds), and those toward how
    often the other workers of the kind were (None: none judged).

    Why its own: a kind is a worker's ranks in its pool, so two cheap workers share
    one; with the trust at 0 (as ``fit`` measured it on the real suites) only this
    rate tells a cheap worker that turned bad from a new one that solves. Why its
    other kinds: a worker that turned bad failed in every wording. Why its kind's: a
    worker new to the pool starts from what workers of its ranks did. A shape's pair of
    workers first shrinks toward every verdict of that shape: a pair never tried starts
    from what the shape did, not from the weights alone."""
    found = keys(view, action, pool)
    if found is None:
        return None
    kind_key, own_key = found
    mine = f"|worker:{action.worker}"
    own = prior.get(own_key, Rate())
    its, theirs, wide = Rate(), Rate(), Rate()  # one pass over the counts for all
    shape = "" if action.solo else f"|s:{action.shape}|"
    for k, rate in prior.items():
        into = (
            its
            if k.endswith(mine) and _family(k) == _family(kind_key)
            else theirs
            if _of_kind(k, kind_key)
            else None
        )
        if into is not None and k != own_key:
            into.green, into.judged = into.green + rate.green, into.judged + rate.judged
        if shape and shape in k:
            wide.green, wide.judged = wide.green + rate.green, wide.judged + rate.judged
    levels = (wide, theirs, its, own) if shape else (theirs, its, own)
    if not any(r.judged for r in levels):
        return None
    mean, weight = 0.5, 1.0
    for r in levels:  # each shrunk toward the one before
        if r.judged:
            mean, weight = (r.green + weight * mean) / (r.judged + weight), OWN_WEIGHT
    return mean


def _of_kind(key: str, kind_key: str) -> bool:
    """Whether a key counts verdicts of the kind: one of its workers', or the kind's own
    (policies written before per-worker rates)."""
    return key == kind_key or key.startswith(f"{kind_key}|worker:")


def shape_of(key: str) -> str:
    """The shape a rate key counts verdicts of ('' for calls alone)."""
    return key.split("|s:", 1)[1].split("|", 1)[0] if "|s:" in key else ""


def _family(key: str) -> str:
    """A key's shape and helper ("" for a solo call): a worker's verdicts in one shape
    say little of its calls alone, so rates are smoothed within a family only."""
    if "|s:" not in key:
        return ""
    return key.split("|s:", 1)[1].split("|worker:", 1)[0]
