"""Episodes from real use, and the reward the conductor learns from."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path
from typing import Any

import pytest
from helpers import PLAN, WHOLE_FIX, by_model, cli, openai_conductor
from helpers import coder_workspace as workspace
from lsp_editor import job_end, run_command, session
from standin import Behaviour, StandIn

from conductor_lsp.episodes.log import read_episodes
from conductor_lsp.episodes.records import Episode, Leaf, VerdictRecord
from conductor_lsp.errors import EpisodeFormatError
from conductor_lsp.learn import Weights, reward, success
from conductor_lsp.plan import ConductorCall, Plan, Step

KEY = "sk-live-EPISODE-SECRET-77"


GREEN = VerdictRecord(("t1", "t2"), (), (), green=True)
#: A plan a model wrote (its call was paid for).
ASKED = Plan(steps=(Step("big", "Fix it"),), source="openai", call=ConductorCall())


def episode(**kw: Any) -> Episode:
    base: dict[str, Any] = {
        "id": "e1",
        "job": "j1",
        "plan": ASKED,
        "cost": 0.05,
        "seconds": 10.0,
        "outcome": GREEN,
        "undone": False,
    }
    base.update(kw)
    return Episode(**base)


def test_reward_on_hand_made_episodes() -> None:
    w = Weights(cost=10.0, seconds=0.0, format_penalty=0.2)
    assert reward(episode(), w) == pytest.approx(1 - 0.5)  # green, minus 10 x $0.05
    half = VerdictRecord(("t1", "t2"), ("t2",), ())
    assert reward(episode(outcome=half), w) == pytest.approx(0.5 - 0.5)
    broke = VerdictRecord(("t1", "t2"), ("t2",), ("t9",))
    assert success(broke) == 0.0  # fixed one, broke another: worth nothing
    assert success(GREEN, undone=True) == 0.0  # the user undid it
    assert success(None) == 0.0  # never applied, never tested
    assert success(VerdictRecord(None, ("x",))) == 0.0
    fallback = episode(plan=dataclasses.replace(ASKED, error="no plan found"))
    assert reward(fallback, w) == pytest.approx(1 - 0.5 - 0.2)  # a model was asked: penalty
    static = episode(plan=Plan(steps=(), source="static"))
    assert reward(static, w) == pytest.approx(0.5)
    timed = Weights(cost=0.0, seconds=0.01, format_penalty=0.0)
    assert reward(episode(), timed) == pytest.approx(1 - 0.1)


def test_records_of_another_schema_version_are_refused_not_guessed(tmp_path: Path) -> None:
    path = tmp_path / "episodes.jsonl"
    lines = [
        {"type": "episode", "id": "old", "version": 1, "plan": {"source": "static"}},
        {"type": "episode", "id": "new", "version": 99, "plan": {"source": "static"}},
        {"type": "episode", "id": "bad", "version": 2, "inputs": {"workers": [{"x": 1}]}},
        {"type": "outcome", "id": "old", "green": True, "failing_before": ["a"],
         "failing_after": [], "leaves": [{"step": 0, "worker": "big", "green": True}]},
    ]  # fmt: skip
    path.write_text("".join(json.dumps(x) + "\n" for x in lines))
    skipped: list[str] = []
    (e,) = read_episodes(path, skipped)
    assert e.id == "old" and e.outcome is not None and e.outcome.green
    assert e.outcome.leaves == (Leaf(0, "big", green=True),)
    assert len(skipped) == 2 and "schema version 99" in skipped[0] and "damaged" in skipped[1]
    with pytest.raises(EpisodeFormatError):
        Episode.from_json({"id": "x", "version": "2"})


def test_a_fix_job_records_episodes_without_keys_and_undo_marks_them(
    tmp_path: Path, standin: StandIn, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PLANNER_KEY", KEY)
    conductor = openai_conductor(standin.url) + '\napi_key_env = "PLANNER_KEY"'
    # The conductor's own episode alone: no floor beside it (see test_search for both).
    root = workspace(tmp_path / "ws", standin.url, conductor, "[fix]\nfloor = false\n")
    standin.responder = by_model({"planner": PLAN}, default=WHOLE_FIX)  # type: ignore[assignment]
    out = cli("fix", str(root))
    assert out.returncode == 0, out.stdout + out.stderr
    path = root / ".conductor" / "episodes.jsonl"
    raw = path.read_text()
    assert KEY not in raw
    records = [json.loads(line) for line in raw.splitlines()]
    assert [r["type"] for r in records] == ["episode", "outcome"]
    e, o = records
    assert e["version"] == 3 and e["round"] == 1 and e["conductor"] == "openai"
    assert [w["name"] for w in e["workers"]] == ["coder", "tests"]
    assert "## Task" in e["task"] and "calc.py" in e["task"]
    assert e["plan"]["raw"] == PLAN and e["plan"]["steps"][0]["worker"] == "coder"
    assert e["bills"][0]["usage"]["input_tokens"] > 0 and e["cost"] > 0
    assert o["failing_before"] == ["test_calc.py::test_add"] and o["failing_after"] == []
    assert o["green"] and o["applied"] == ["calc.py"]
    summary = cli("episodes", str(root), "--summary")
    assert (
        summary.returncode == 0 and "openai: coder" in summary.stdout and "100%" in summary.stdout
    )
    assert cli("undo", str(root)).returncode == 0
    (joined,) = read_episodes(path)
    assert joined.undone and joined.outcome is not None and joined.outcome.green
    assert joined.outcome.leaves == (Leaf(0, "coder", ("calc.py",), "", True, 0),)
    assert success(joined.outcome, joined.undone) == 0.0


def test_record_false_records_nothing(tmp_path: Path, standin: StandIn) -> None:
    root = workspace(tmp_path / "ws", standin.url, extra="[learn]\nrecord = false\n")
    standin.push(Behaviour(text=WHOLE_FIX))
    assert cli("fix", str(root)).returncode == 0
    assert not (root / ".conductor" / "episodes.jsonl").exists()


def test_damaged_lines_are_skipped(tmp_path: Path) -> None:
    path = tmp_path / "episodes.jsonl"
    good = {"type": "episode", "id": "a", "job": "j"}
    path.write_text(
        json.dumps(good) + "\n{cut in the midd\n" + json.dumps({"type": "undo", "job": "j"}) + "\n"
    )
    (e,) = read_episodes(path)
    assert e.id == "a" and e.undone and e.outcome is None


async def test_an_editor_job_records_its_episode(tmp_path: Path, standin: StandIn) -> None:
    root = workspace(tmp_path / "ws", standin.url)
    standin.push(Behaviour(text=WHOLE_FIX))
    async with session(root, "visual-studio-code") as (client, editor):
        uri = editor.open(root / "calc.py")
        res = await run_command(client, "conductor.edit", {"uri": uri})
        end = await job_end(client, res["jobId"])
        assert "edited calc.py" in end.message
    (e,) = read_episodes(root / ".conductor" / "episodes.jsonl")
    assert e.job.startswith("editor-") and e.outcome is not None
    assert e.outcome.applied == ("calc.py",)
    assert e.source == "static"
