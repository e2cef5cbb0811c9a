"""bench/shape_table.py: the named ``pipeline`` strategy's rows read as the pipeline
chain's own answers, which the replays fit on and bench/README.md tabulates."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
from helpers import policy_pool

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "bench"))
from shape_table import Cell, action_of, unfloored, whole

from conductor_lsp.policy import Action

POOL = policy_pool("small", "big")
FLOOR = Action("big", "direct")
#: pipeline_plan's chain in this pool: its first model worker analyses, the strongest
#: writes and reviews.
CHAIN = Action("big", "direct", "pipeline", "big")


def test_the_chain_is_the_named_rows_less_the_floors_call_where_that_was_red() -> None:
    cells = {
        "red": {FLOOR: Cell(False, 0.01, 1, 100, 5.0)},
        "green": {FLOOR: Cell(True, 0.01, 1, 100, 5.0)},
    }
    behind = {
        "red": (Cell(True, 0.04, 4, 700, 20.0), None),
        "green": (Cell(True, 0.01, 1, 100, 5.0), None),  # the chain never ran
    }
    assert unfloored(cells, behind, POOL) == {CHAIN}
    assert cells["red"][CHAIN] == Cell(True, pytest.approx(0.03), 3, 600, 15.0)  # type: ignore[arg-type]
    assert CHAIN not in cells["green"]


def test_the_same_runs_floor_is_taken_before_another_runs() -> None:
    """Another run's answer to the floor's request may differ; the row held its own."""
    cells = {"t": {FLOOR: Cell(False, 0.02, 1, 200, 9.0)}}
    behind = {"t": (Cell(False, 0.05, 4, 900, 30.0), Cell(False, 0.01, 1, 100, 5.0))}
    unfloored(cells, behind, POOL)
    assert cells["t"][CHAIN] == Cell(False, pytest.approx(0.04), 3, 800, 25.0)  # type: ignore[arg-type]


def test_a_chain_known_on_some_tasks_only_leaves_the_others_whole() -> None:
    small = Action("small", "direct")
    cells = {
        "a": {FLOOR: Cell(False, 0.01, 1, 1, 1.0), small: Cell(False, 0.001, 1, 1, 1.0)},
        "b": {FLOOR: Cell(True, 0.01, 1, 1, 1.0), small: Cell(False, 0.001, 1, 1, 1.0)},
        "c": {FLOOR: Cell(True, 0.01, 1, 1, 1.0)},
    }
    cells["a"][CHAIN] = Cell(True, 0.03, 3, 1, 1.0)
    briefs = {t: t for t in cells}
    assert whole(cells, briefs) == ["a"]
    assert whole(cells, briefs, {CHAIN}) == ["a", "b"]  # c lacks small's answer


def test_strategy_names_read_as_actions() -> None:
    assert action_of("pipeline:small>big", POOL) == Action("big", "direct", "pipeline", "small")
    assert action_of("review:big>small", POOL) == Action("small", "direct", "review", "big")
    assert action_of("static", POOL) == FLOOR
    assert action_of("pipeline", POOL) is None  # the named strategy: the floor beside it
