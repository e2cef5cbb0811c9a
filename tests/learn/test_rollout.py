"""A GRPO rollout is trained on what the conductor is asked in use: its task view is the
one the fix loop's first round builds (``context.round_task``), byte for byte."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from standin import StandIn

from conductor_lsp.configure import load_config
from conductor_lsp.eval import load_suite
from conductor_lsp.eval.run import run_one
from conductor_lsp.learn.reward import Weights
from conductor_lsp.learn.rollout import Rollouts

SUITE = Path(__file__).resolve().parents[2] / "bench" / "tasks"
TASKS = {t.name: t for t in load_suite(SUITE)}


def _first_task(traces: Path) -> str:
    for trace in sorted(traces.rglob("*.jsonl")):
        for line in trace.read_text(encoding="utf-8").splitlines():
            record = json.loads(line)
            if record["type"] == "task":
                return str(record["task"])
    raise AssertionError(f"no task was traced under {traces}")


@pytest.mark.parametrize("name", ["two_file_pricing", "add_sub"])
async def test_a_rollout_shows_what_the_live_round_shows(
    tmp_path: Path, standin: StandIn, name: str
) -> None:
    standin.responder = lambda seen: "I am not sure."
    worker = {
        "provider": "openai-compatible",
        "model": "quick",
        "base_url": f"{standin.url}/v1",
        "max_retries": 0,
    }
    base = load_config(
        tmp_path, overrides={"conductor": {"backend": "static"}, "workers": {"quick": worker}}
    )
    task = TASKS[name]
    traces = tmp_path / "out" / "traces"
    result = await run_one(task, "static", {}, base, traces, 1)
    assert result.error == "" and result.rounds == 1
    live = _first_task(traces)

    view = await Rollouts(base, Weights()).task_view(task)
    assert view.render() == live
    # The standing rule and the outline reach the rollout too (both were missing).
    assert "Do not weaken, skip or delete tests." in live
    assert task.instruction in live
