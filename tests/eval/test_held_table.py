"""bench/held_table.py: search's row composed from other runs' answers to its requests,
which bench/README.md's held-out HumanEval-fix table prints beside the live rows."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "bench"))
from held_table import results, searched
from shape_table import namer

from conductor_lsp.policy import Action

BIG, SMALL, CAUSE = Action("big", "direct"), Action("small", "direct"), Action("big", "cause")


def test_a_green_floor_is_all_search_pays_in_round_one() -> None:
    row = {BIG: (True, 0.01), SMALL: (True, 0.0005), CAUSE: (False, 0.02)}
    assert searched(row, BIG, SMALL) == (True, 0.01, 1)


def test_after_a_red_floor_search_pays_both_leaves_and_wins_if_either_does() -> None:
    row = {BIG: (False, 0.01), SMALL: (False, 0.0005), CAUSE: (True, 0.02)}
    assert searched(row, BIG, SMALL) == (True, pytest.approx(0.0305), 3)
    row[CAUSE] = (False, 0.02)
    assert searched(row, BIG, SMALL) == (False, pytest.approx(0.0305), 3)


def test_a_missing_answer_composes_nothing() -> None:
    """Search's row is never guessed: a leaf nobody asked leaves the task out."""
    assert searched({BIG: (False, 0.01), SMALL: (True, 0.0005)}, BIG, SMALL) is None
    assert searched({SMALL: (True, 0.0005), CAUSE: (True, 0.02)}, BIG, SMALL) is None


def test_two_problems_of_one_name_are_told_apart_by_their_code(tmp_path: Path) -> None:
    """HumanEval-fix holds two `sum_squares`: the same instruction, different code; a
    brief lists its file at its size, and that names the task its answers were to."""
    for name, lines in (("he_133_sum_squares", 12), ("he_142_sum_squares", 20)):
        (tmp_path / name).mkdir()
        (tmp_path / name / "task.toml").write_text(
            'instruction = "Fix bugs in sum_squares."\ntest = "python -m pytest -q"\n'
        )
        (tmp_path / name / "solution.py").write_text("x = 1\n" * lines)
    task_of = namer("", tmp_path)
    brief = "## Task\nFix bugs in sum_squares.\n\n## Files\n- `solution.py` ({} lines, may change)"
    assert task_of(brief.format(12)) == "he_133_sum_squares"
    assert task_of(brief.format(20)) == "he_142_sum_squares"


def test_a_row_is_one_strategys_first_result_per_task(tmp_path: Path) -> None:
    runs = [tmp_path / "a.jsonl", tmp_path / "b.jsonl"]
    runs[0].write_text(
        json.dumps({"strategy": "static", "task": "t1", "cost": 1.0})
        + "\n"
        + json.dumps({"strategy": "policy", "task": "t1", "cost": 2.0})
        + "\n"
    )
    runs[1].write_text(json.dumps({"strategy": "static", "task": "t1", "cost": 3.0}) + "\n")
    spec = "big alone:static=" + ",".join(map(str, runs))
    first = {"t1": {"strategy": "static", "task": "t1", "cost": 1.0}}
    assert results(spec) == ("big alone", "static", first)
    assert results("policy=" + str(runs[0]))[:2] == ("policy", "policy")
