"""Records are written as they are read: every kind survives a trip through its JSON, and
a log written by the real writers reads back as the same dataclasses."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import pytest

from conductor_lsp.episodes.log import EpisodeLog, read_episodes
from conductor_lsp.episodes.records import (
    Episode,
    Leaf,
    ReviewRecord,
    StepBill,
    UndoRecord,
    VerdictRecord,
)
from conductor_lsp.errors import EpisodeFormatError
from conductor_lsp.plan import ConductorCall, Lane, Plan, Step
from conductor_lsp.protocols import WorkerInfo
from conductor_lsp.secrets import Secret
from conductor_lsp.storage.records import as_data, read
from conductor_lsp.usage import Usage

POOL = (
    WorkerInfo("small", "cheap", 0.15, 0.6, "openai-compatible", strength=1),
    WorkerInfo("big", "dear", 3.0, 15.0, "openai-compatible", strength=2),
    WorkerInfo("tests", "runs the tests", 0.0, 0.0, "tests", is_tool=True),
)
LEAVES = (
    Leaf(0, "small", ("calc.py",), "", False, 1),
    Leaf(1, "big", ("calc.py",), "", True, 0),
    Leaf(2, "small", (), "calc.py: SEARCH text not found", False, None),
)
OUTCOME = VerdictRecord(("t::a", "t::b"), (), (), ("calc.py",), "x", True, LEAVES, "e1")
PLAN = Plan(
    steps=(
        Step("small", "Fix it", (), "generation"),
        Step("big", "Find the cause", "all", "analysis"),
        Step("big", "Write the fix", (0, 1), "debugging"),
    ),
    source="openai",
    raw="model_id = [0, 1, 1]\n...",
    notes=("structured output: json_schema",),
    call=ConductorCall(Usage(700, 40, 512), 0.0012, 3.25, "planner"),
)
EPISODE = Episode(
    id="e1",
    time=1700000000.5,
    job="refs/conductor/checkpoints/1",
    round=2,
    lane=Lane.CONDUCTOR,
    conductor="openai",
    task="## Task\nFix add()",
    workers=POOL,
    max_steps=3,
    plan=PLAN,
    bills=(
        StepBill("small", 0.0001, 1.5, "", "", "generation", Usage(600, 80, None)),
        StepBill("big", 0.002, 4.0, "", "", "analysis", Usage(650, 90, 0)),
        StepBill("big", 0.0, 0.0, "", "a candidate made the tests pass", "debugging"),
    ),
    result="done",
    reason="",
    cost=0.0033,
    seconds=9.5,
)


@pytest.mark.parametrize(
    "record",
    [
        LEAVES[0],
        LEAVES[2],
        OUTCOME,
        VerdictRecord(None, None),
        UndoRecord("job-1", 12.0),
        ReviewRecord("job-1", ("calc.py:1-2: no",), 13.0),
    ],
    ids=lambda r: type(r).__name__,
)
def test_each_record_round_trips(record: object) -> None:
    data = json.loads(json.dumps(as_data(record)))
    assert read(data, type(record), "a record") == record


def test_an_episode_round_trips_with_its_plan_and_bills() -> None:
    data = json.loads(json.dumps(EPISODE.to_json()))
    back = Episode.from_json(data, json.loads(json.dumps(OUTCOME.to_json())))
    assert back == dataclasses.replace(EPISODE, outcome=OUTCOME)
    assert back.asked_model and back.source == "openai" and back.steps == PLAN.steps
    # Written under the fields' own names: no key drifts from its field.
    fields = {f.name for f in dataclasses.fields(Episode)} - {"outcome", "undone", "rejected"}
    assert set(data) == {"type", *fields}
    assert data["lane"] == "conductor" and data["plan"] == as_data(PLAN)


def test_a_file_written_by_version_2_is_read_as_it_was_written() -> None:
    """tests/episodes/written-by-version-2.jsonl was written by the code before version 3
    (the lane as "by", the task under "inputs", the bills as "steps"), from the records
    above; it reads as them."""
    (back,) = read_episodes(Path(__file__).parent / "written-by-version-2.jsonl")
    expected = dataclasses.replace(
        EPISODE, version=2, outcome=OUTCOME, undone=True, rejected=("calc.py:1-2: too wide",)
    )
    assert back == expected


def test_a_damaged_record_is_named_not_a_traceback() -> None:
    data = dict(EPISODE.to_json(), lane="sideways", round="two")
    with pytest.raises(EpisodeFormatError, match=r"episode 'e1' is damaged: .*lane"):
        Episode.from_json(data)
    with pytest.raises(EpisodeFormatError, match="review of job 'j' is damaged"):
        ReviewRecord.from_json({"type": "review", "job": "j", "rejected": "not a list"})


def test_a_plan_round_trips() -> None:
    back = read(json.loads(json.dumps(as_data(PLAN))), Plan, "a plan")
    assert back == PLAN


def test_the_floor_lane_of_older_records_is_read_as_the_floor() -> None:
    written = Path(__file__).parent / "written-by-version-2.jsonl"
    first = json.loads(written.read_text(encoding="utf-8").splitlines()[0])
    old = dict(first, by="baseline")
    assert Episode.from_json(old).lane is Lane.FLOOR
    assert Episode.from_json(dict(old, by="floor")).lane is Lane.FLOOR


def test_the_log_writes_what_the_reader_reads(tmp_path: Path) -> None:
    key = Secret("sk-RECORD-SECRET-42")
    log = EpisodeLog(tmp_path / "episodes.jsonl", [key])
    secret = dataclasses.replace(EPISODE, task="## Task\nthe key is sk-RECORD-SECRET-42")
    assert log.episode(secret) == "e1"
    log.outcome(OUTCOME)
    log.review("refs/conductor/checkpoints/1", ["calc.py:1-2: too wide"])
    log.undo("refs/conductor/checkpoints/1")
    raw = (tmp_path / "episodes.jsonl").read_text()
    assert "sk-RECORD-SECRET-42" not in raw
    (back,) = read_episodes(tmp_path / "episodes.jsonl")
    expected = dataclasses.replace(
        secret,
        task="## Task\nthe key is ***",
        outcome=OUTCOME,
        undone=True,
        rejected=("calc.py:1-2: too wide",),
    )
    assert back == expected


def test_a_log_for_nothing_records_nothing(tmp_path: Path) -> None:
    log = EpisodeLog(None)
    assert log.episode(EPISODE) == "" and not log.recording
    log.outcome(OUTCOME)
    assert list(tmp_path.iterdir()) == []
