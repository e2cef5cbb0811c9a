from __future__ import annotations

import asyncio
import json
import pickle
from pathlib import Path

import pytest
from standin import Behaviour, Seen, StandIn

from conductor_lsp import BudgetExceeded, Config, FileContext, Plan, Session, Step, Task
from conductor_lsp.runtime import (
    Engine,
    Event,
    Meter,
    PlanDone,
    PlanReady,
    StepFinished,
    StepStarted,
)

TASK = Task(
    "Fix add() so 2+2 is 4", files=(FileContext("calc.py", "def add(a, b):\n    return a - b\n"),)
)


def plan(*steps: Step) -> Plan:
    return Plan(steps=steps, source="test")


def echo_subtask(seen: Seen) -> str:
    text = seen.prompt()
    marker = "## Your subtask"
    i = text.index(marker)
    return "did:" + text[i + len(marker) : i + len(marker) + 40].split("\\n")[1]


async def run(config: Config, p: Plan, events: list[Event] | None = None) -> object:
    session = Session(config)
    try:
        return await session.run(
            TASK, plan=p, on_event=(events.append if events is not None else lambda e: None)
        )
    finally:
        await session.aclose()


async def test_access_list_controls_what_each_step_sees(
    standin_config: Config, standin: StandIn
) -> None:
    standin.responder = echo_subtask
    p = plan(
        Step("gpt", "Find the cause A", (), "analysis"),
        Step("claude", "Find the cause B", (), "analysis"),
        Step("gem", "Write the fix C", (0,), "generation"),
        Step("gpt", "Review all D", "all", "debugging"),
    )
    result = await run(standin_config, p)
    assert result.outcome == "done"  # type: ignore[attr-defined]
    prompts = {s.prompt().split("## Your subtask")[1][:40]: s.prompt() for s in standin.seen}
    by_sub = {k.split("\\n")[1]: v for k, v in prompts.items()}
    assert "Find the cause A" not in by_sub["Find the cause B"]
    assert "did:Find the cause A" in by_sub["Write the fix C"]
    assert "did:Find the cause B" not in by_sub["Write the fix C"]
    for earlier in ("did:Find the cause A", "did:Find the cause B", "did:Write the fix C"):
        assert earlier in by_sub["Review all D"]
    for text in by_sub.values():  # the task and file are in every prompt, first
        assert text.index("return a - b") < text.index("## Your subtask")
    assert result.output == "did:Review all D"  # type: ignore[attr-defined]


async def test_independent_steps_run_concurrently(standin_config: Config, standin: StandIn) -> None:
    standin.latency = 0.3
    p = plan(
        Step("gpt", "Branch one", (), "analysis"),
        Step("claude", "Branch two", (), "analysis"),
        Step("gem", "Join", "all", "generation"),
    )
    events: list[Event] = []
    result = await run(standin_config, p, events)
    assert standin.peak_in_flight == 2
    assert [r.index for r in result.steps] == [0, 1, 2]  # type: ignore[attr-defined]
    started = [e.index for e in events if isinstance(e, StepStarted)]
    assert started[-1] == 2 and sorted(started[:2]) == [0, 1]


async def test_sequential_chain_never_overlaps(standin_config: Config, standin: StandIn) -> None:
    standin.latency = 0.1
    p = plan(Step("gpt", "one", "all"), Step("gpt", "two", "all"), Step("gpt", "three", [1]))  # type: ignore[arg-type]
    await run(standin_config, p)
    assert standin.peak_in_flight == 1


async def test_events_usage_and_cost_tally(standin_config: Config, standin: StandIn) -> None:
    events: list[Event] = []
    result = await run(
        standin_config, plan(Step("gpt", "a", ()), Step("claude", "b", "all")), events
    )
    kinds = [type(e).__name__ for e in events]
    assert kinds[0] == "PlanReady" and kinds[-1] == "PlanDone"
    finished = [e for e in events if isinstance(e, StepFinished)]
    assert len(finished) == 2 and all(f.usage.output_tokens > 0 for f in finished)
    tallies = result.tallies  # type: ignore[attr-defined]
    assert set(tallies) == {"gpt", "claude"}
    gpt = tallies["gpt"]
    assert gpt.calls == 1
    assert gpt.cost == pytest.approx(
        (gpt.usage.input_tokens * 1.0 + gpt.usage.output_tokens * 2.0) / 1e6
    )
    assert finished[-1].total_cost == pytest.approx(result.cost)  # type: ignore[attr-defined]


async def test_call_budget_stops_cleanly(standin_config: Config, standin: StandIn) -> None:
    standin_config.budget.max_calls = 2
    result = await run(
        standin_config,
        plan(Step("gpt", "a", "all"), Step("gpt", "b", "all"), Step("gpt", "c", "all")),
    )
    assert result.outcome == "budget"  # type: ignore[attr-defined]
    # The outcome says "budget"; the reason says which, once ("budget: budget: calls" read twice).
    assert result.reason == "calls (2 of 2 made)"  # type: ignore[attr-defined]
    assert len(standin.seen) == 2
    assert result.steps[2].skipped  # type: ignore[attr-defined]


def test_a_budget_error_names_its_budget_once_and_survives_pickling() -> None:
    # Ray carries errors between processes: the head must not be added twice on the way.
    e = pickle.loads(pickle.dumps(BudgetExceeded("calls (1 of 1 made)")))
    assert (str(e), e.why) == ("budget: calls (1 of 1 made)", "calls (1 of 1 made)")


async def test_cost_budget_stops_cleanly(standin_config: Config, standin: StandIn) -> None:
    standin_config.budget.max_cost = 1e-9
    result = await run(standin_config, plan(Step("claude", "a", "all"), Step("claude", "b", "all")))
    assert result.outcome == "budget" and result.reason.startswith("cost ($")  # type: ignore[attr-defined]
    assert len(standin.seen) == 1


async def test_time_budget(standin_config: Config, standin: StandIn) -> None:
    standin.latency = 1.0
    standin_config.budget.max_seconds = 0.3
    result = await run(standin_config, plan(Step("gpt", "a", "all")))
    assert result.outcome == "budget" and result.reason.startswith("time (")  # type: ignore[attr-defined]


async def test_failed_step_skips_its_dependants_only(
    standin_config: Config, standin: StandIn
) -> None:
    standin_config.workers["gpt"].max_retries = 0
    standin.chooser = lambda s: (
        Behaviour("status", status=400) if s.body.get("model") == "gpt-5-mini" else None
    )
    result = await run(
        standin_config, plan(Step("gpt", "a", ()), Step("claude", "b", ()), Step("gem", "c", [0]))
    )
    steps = result.steps  # type: ignore[attr-defined]
    assert steps[0].error and "HTTP 400" in steps[0].error
    assert steps[1].ok
    assert steps[2].skipped == "step 0 did not finish"
    # Step 1 is a leaf (no later step sees it): its answer is a candidate, so the job is
    # done with it as its output, though the chain through step 0 failed.
    assert result.outcome == "done" and result.output == steps[1].text  # type: ignore[attr-defined]
    assert result.answers() == [steps[1]]  # type: ignore[attr-defined]
    chain = await run(standin_config, plan(Step("gpt", "a", ()), Step("gem", "c", [0])))
    assert chain.outcome == "failed" and chain.output == ""  # type: ignore[attr-defined]


async def test_cancel_mid_step(standin_config: Config, standin: StandIn) -> None:
    standin.latency = 300.0
    session = Session(standin_config)
    engines: list[Engine] = []
    job = asyncio.create_task(
        session.run(
            TASK, plan=plan(Step("gpt", "a", "all"), Step("gpt", "b", "all")), engine_ref=engines
        )
    )
    while not standin.seen:
        await asyncio.sleep(0.01)
    engines[0].cancel()
    result = await asyncio.wait_for(job, 60)  # ends on the cancel, not the call
    await session.aclose()
    assert result.outcome == "cancelled"
    assert all(not r.ok for r in result.steps)
    assert len(standin.seen) == 1


async def test_outer_task_cancel_propagates(standin_config: Config, standin: StandIn) -> None:
    standin.latency = 2.0
    events: list[Event] = []
    session = Session(standin_config)
    job = asyncio.create_task(
        session.run(TASK, plan=plan(Step("gpt", "a", "all")), on_event=events.append)
    )
    while not standin.seen:
        await asyncio.sleep(0.01)
    job.cancel()
    with pytest.raises(asyncio.CancelledError):
        await job
    await session.aclose()
    done = [e for e in events if isinstance(e, PlanDone)]
    assert done and done[0].result.outcome == "cancelled"


async def test_trace_is_jsonl_and_redacted(
    standin_config: Config, standin: StandIn, keys: dict[str, str], tmp_path: Path
) -> None:
    standin.responder = lambda s: f"echoing {keys['TEST_OPENAI_KEY']} back"
    result = await run(standin_config, plan(Step("gpt", "a", "all"), Step("claude", "b", "all")))
    path = Path(result.trace_path)  # type: ignore[attr-defined]
    assert path.is_relative_to(tmp_path / ".conductor" / "traces")
    text = path.read_text()
    records = [json.loads(line) for line in text.splitlines()]
    assert [r["type"] for r in records] == [
        "task",
        "plan",
        "request",
        "response",
        "request",
        "response",
        "done",
    ]
    for secret in keys.values():
        assert secret not in text
    assert "echoing *** back" in text
    assert records[3]["usage"]["output_tokens"] > 0


async def test_plan_ready_event_carries_the_plan(standin_config: Config) -> None:
    events: list[Event] = []
    p = plan(Step("gpt", "a", "all"))
    await run(standin_config, p, events)
    assert isinstance(events[0], PlanReady) and events[0].plan is p


async def test_meter_is_shared_across_jobs(standin_config: Config) -> None:
    standin_config.budget.max_calls = 3
    session = Session(standin_config)
    meter = Meter(standin_config.budget)
    r1 = await session.run(
        TASK, plan=plan(Step("gpt", "a", "all"), Step("gpt", "b", "all")), meter=meter
    )
    r2 = await session.run(
        TASK, plan=plan(Step("gpt", "a", "all"), Step("gpt", "b", "all")), meter=meter
    )
    await session.aclose()
    assert r1.outcome == "done" and r2.outcome == "budget" and meter.calls == 3
