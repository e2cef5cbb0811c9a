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


@pytest.mark.parametrize("prefer", ["balanced", "cost", "latency"])
def test_the_expected_cost_is_what_those_waves_pay(prefer: str) -> None:
    """Each wave is paid when every option before it failed."""
    options = [SMALL, FLOOR, CAUSE, DEAR]
    picks = [(Action(o.step.worker, "direct"), o.chance or 0.0, o.price) for o in options if o.step]
    floor = Action("big", "direct")
    want, reach = 0.0, 1.0
    for wave in waves(options, prefer):
        want += reach * sum(o.price for o in wave)
        reach *= math.prod(1 - (o.chance or 0.0) for o in wave)
    assert expected_cost(picks, prefer, floor) == pytest.approx(want)
    if prefer == "balanced":  # 1 + 0.5 x (20 + 0.4 x 21), against 1 + 0.5 x 41 at once
        assert want == pytest.approx(1 + 0.5 * (20 + 0.4 * 21))
