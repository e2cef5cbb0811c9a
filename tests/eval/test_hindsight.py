"""bench/hindsight.py: the bound of routing recorded answers with hindsight, the floor
kept, which bench/README.md compares the policy and the cascade with."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "bench"))
from hindsight import cascade, hindsight

from conductor_lsp.policy import Action

BIG, SMALL = Action("big", "direct"), Action("small", "direct")
CAUSE_SMALL, CAUSE_BIG = Action("small", "cause"), Action("big", "cause")
REVIEW = Action("small", "direct", "review", "big")  # small reviews big's direct answer


def test_the_cheapest_green_call_below_the_floor_is_all_that_is_paid() -> None:
    row = {BIG: (True, 0.01), SMALL: (True, 0.0005), CAUSE_SMALL: (True, 0.0003)}
    assert hindsight(row, BIG) == (True, 0.0003, (CAUSE_SMALL,))
    assert cascade(row, BIG, SMALL) == (True, 0.0005)


def test_the_floor_is_paid_whenever_no_cheaper_call_is_green() -> None:
    red = {BIG: (False, 0.01), SMALL: (False, 0.0005)}
    assert hindsight(red, BIG) == (False, 0.01, (BIG,))
    assert cascade(red, BIG, SMALL) == (False, 0.0105)
    dear = {BIG: (False, 0.01), SMALL: (False, 0.0005), CAUSE_BIG: (True, 0.012)}
    assert hindsight(dear, BIG, after=False) == (False, 0.01, (BIG,))
    assert hindsight(dear, BIG) == (True, pytest.approx(0.022), (BIG, CAUSE_BIG))


def test_a_review_of_the_floors_answer_rides_on_it() -> None:
    """Its $ holds the floor's call: counted once, and the review alone is paid."""
    row = {BIG: (False, 0.01), REVIEW: (True, 0.0104), CAUSE_BIG: (True, 0.012)}
    assert hindsight(row, BIG) == (True, pytest.approx(0.0104), (REVIEW,))


def test_no_bound_without_the_floors_answer() -> None:
    assert hindsight({SMALL: (True, 0.0005)}, BIG) is None
    assert cascade({BIG: (True, 0.01)}, BIG, SMALL) is None
