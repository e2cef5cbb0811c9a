"""bench/shape_table.py: the named ``pipeline`` strategy's rows read as the pipeline
chain's own answers, which the replays fit on and bench/README.md tabulates."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
from helpers import policy_pool

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "bench"))
from same_choices import differences, offered
from shape_table import Cell, action_of, behind_floor, unfloored, whole

from conductor_lsp.policy import Action, Example, Policy, fit

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
    unfloored(cells, behind, POOL)
    assert cells["red"][CHAIN] == Cell(True, pytest.approx(0.03), 3, 600, 15.0)  # type: ignore[arg-type]
    assert CHAIN not in cells["green"]


def test_the_same_runs_floor_is_taken_before_another_runs() -> None:
    """Another run's answer to the floor's request may differ; the row held its own."""
    cells = {"t": {FLOOR: Cell(False, 0.02, 1, 200, 9.0)}}
    behind = {"t": (Cell(False, 0.05, 4, 900, 30.0), Cell(False, 0.01, 1, 100, 5.0))}
    unfloored(cells, behind, POOL)
    assert cells["t"][CHAIN] == Cell(False, pytest.approx(0.04), 3, 800, 25.0)  # type: ignore[arg-type]


def test_an_action_recorded_only_behind_a_red_floor_leaves_the_other_tasks_whole() -> None:
    small = Action("small", "direct")
    cells = {
        "a": {FLOOR: Cell(False, 0.01, 1, 1, 1.0), small: Cell(False, 0.001, 1, 1, 1.0)},
        "b": {FLOOR: Cell(True, 0.01, 1, 1, 1.0), small: Cell(False, 0.001, 1, 1, 1.0)},
        "c": {FLOOR: Cell(True, 0.01, 1, 1, 1.0)},
    }
    cells["a"][CHAIN] = Cell(True, 0.03, 3, 1, 1.0)
    briefs = {t: t for t in cells}
    assert whole(cells, briefs) == ["a"]
    partial = behind_floor(cells, POOL)
    assert partial == {CHAIN, small}  # each is missing only where the floor was green
    assert whole(cells, briefs, partial) == ["a", "b", "c"]
    assert whole(cells, briefs, {CHAIN}) == ["a", "b"]  # c lacks small's answer
    cells["b"][FLOOR] = Cell(False, 0.01, 1, 1, 1.0)
    assert behind_floor(cells, POOL) == {small}  # the chain is missing where b's floor was red


def test_strategy_names_read_as_actions() -> None:
    assert action_of("pipeline:small>big", POOL) == Action("big", "direct", "pipeline", "small")
    assert action_of("review:big>small", POOL) == Action("small", "direct", "review", "big")
    assert action_of("static", POOL) == FLOOR
    assert action_of("pipeline", POOL) is None  # the named strategy: the floor beside it


def _fitted(chain_green: bool | None) -> Policy:
    """A policy fitted on small and big alone on ten briefs (small green on half), and,
    unless ``chain_green`` is None, the pipeline chain's verdicts on the same briefs."""
    small = Action("small", "direct")
    ex = []
    for i in range(10):
        brief = f"## Task\nFix bug {i}."
        ex += [Example(brief, POOL, FLOOR, i < 6, 0.01), Example(brief, POOL, small, i < 5, 0.001)]
        if chain_green is not None:
            ex.append(Example(brief, POOL, CHAIN, chain_green, 0.03))
    policy = Policy()
    fit(policy, ex * 2)
    return policy


def test_two_fits_are_told_apart_only_where_their_sets_differ() -> None:
    briefs = {f"## Task\nFix bug {i}.": POOL for i in range(3)}
    before = _fitted(None)
    assert differences(before, _fitted(False), briefs) == []  # a chain never green: unchosen
    said = offered(before, _fitted(False), briefs)
    assert len(said) == 4  # every pair of the two workers
    assert any(x.startswith("pipeline big>big: chance") and "billed 20 answers" in x for x in said)
    changed = differences(before, _fitted(True), briefs)
    assert len(changed) == 2 * len(briefs)  # both modes, every brief
    # A chain always green is chosen (for a pair never tried too: its shape's rate speaks).
    for _, _, mine, theirs in changed:
        assert {a.shape for a in theirs} - {a.shape for a in mine} == {"pipeline"}
