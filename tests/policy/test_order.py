"""The waves a round runs in, and what a set of picks is expected to cost run that way."""

from __future__ import annotations

import math

import pytest

from conductor_lsp.plan import Lane, Step
from conductor_lsp.policy import Action
from conductor_lsp.policy.order import Option, waves
from conductor_lsp.policy.sets import expected_cost


def option(lane: Lane, worker: str, chance: float, price: float) -> Option:
    return Option(lane, Step(worker, f"ask {worker}"), price, chance)


SMALL = option(Lane.PLAN, "small", 0.5, 1.0)  # 0.5 per $: the likeliest per dollar
FLOOR = option(Lane.FLOOR, "big", 0.6, 20.0)
CAUSE = option(Lane.PLAN, "small-cause", 0.2, 1.0)  # cheap, but less likely
DEAR = option(Lane.PLAN, "big-cause", 0.3, 20.0)


def test_balanced_pays_an_extra_beside_the_floor_only_when_the_floor_failed_too() -> None:
    assert waves([FLOOR, DEAR, CAUSE, SMALL], "balanced") == [[SMALL], [FLOOR], [CAUSE, DEAR]]
    floor_first = option(Lane.FLOOR, "big", 0.99, 1.0)
    assert waves([SMALL, floor_first, DEAR], "balanced") == [[floor_first], [SMALL, DEAR]]
    assert waves([SMALL, FLOOR], "balanced") == [[SMALL], [FLOOR]]
    assert waves([SMALL, CAUSE, DEAR], "balanced") == [[SMALL], [CAUSE, DEAR]]  # no floor
    assert waves([FLOOR, DEAR, CAUSE, SMALL], "cost") == [[SMALL], [CAUSE], [FLOOR], [DEAR]]
    assert waves([FLOOR, DEAR, CAUSE, SMALL], "latency") == [[FLOOR, DEAR, CAUSE, SMALL]]


#: Dearer than the floor's call but likelier per dollar than ``CAUSE``: cost mode still
#: runs it after the floor, at once with ``DEAR``, not one at a time by chance per dollar.
SURE = option(Lane.PLAN, "big-review", 0.9, 21.0)
WITH_FLOOR = [SMALL, FLOOR, CAUSE, DEAR]


def paid(options: list[Option], prefer: str) -> float:
    """What the round's waves (the floor's call always among them: the floor lane runs
    it) pay for ``options``: each wave when every option before it failed. The floor's
    call, when not among them, is the floor lane's: neither its $ nor its chance counts."""
    want, reach = 0.0, 1.0
    for wave in waves(options if FLOOR in options else [*options, FLOOR], prefer):
        picked = [o for o in wave if o in options]
        want += reach * sum(o.price for o in picked)
        reach *= math.prod(1 - (o.chance or 0.0) for o in picked)
    return want


def as_picks(options: list[Option]) -> list[tuple[Action, float, float]]:
    return [(Action(o.step.worker, "direct"), o.chance or 0.0, o.price) for o in options if o.step]


@pytest.mark.parametrize("prefer", ["balanced", "cost", "latency"])
@pytest.mark.parametrize("options", [WITH_FLOOR, [*WITH_FLOOR, SURE], [CAUSE, SURE, DEAR]])
def test_the_expected_cost_is_what_those_waves_pay(prefer: str, options: list[Option]) -> None:
    """A set is priced by the waves the round will run it in, the floor's call among the
    picks or not (its price still splits cost mode's picks)."""
    got = expected_cost(as_picks(options), prefer, Action("big", "direct"), FLOOR.price)
    assert got == pytest.approx(paid(options, prefer))


def test_balanced_pays_the_extras_only_when_the_floor_failed_too() -> None:
    """1 + 0.5 x (20 + 0.4 x 21), against 1 + 0.5 x 41 with the extras beside the floor."""
    got = expected_cost(as_picks(WITH_FLOOR), "balanced", Action("big", "direct"))
    assert got == pytest.approx(1 + 0.5 * (20 + 0.4 * 21))


def test_cost_mode_prices_the_dearer_picks_at_once_after_the_floor() -> None:
    """Not one at a time by chance per dollar (the rule before 2026-12-07, which put
    ``SURE`` before ``CAUSE`` and ``DEAR`` after it, a price the round never pays)."""
    picks = as_picks([*WITH_FLOOR, SURE])
    assert waves([*WITH_FLOOR, SURE], "cost") == [[SMALL], [CAUSE], [FLOOR], [DEAR, SURE]]
    at_once = 1 + 0.5 * (1 + 0.8 * (20 + 0.4 * 41))
    assert expected_cost(picks, "cost", Action("big", "direct"), FLOOR.price) == pytest.approx(
        at_once
    )
