"""Progress that never goes silent: a step's tokens while it answers, a word when nothing
else was said for a while, and a round's end told apart from the job's."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest
from helpers import WAIT, standin_workers
from standin import StandIn

from conductor_lsp import Plan, Session, Step, Task, load_config
from conductor_lsp.runtime import pulse
from conductor_lsp.runtime.events import (
    Event,
    LoopNote,
    PlanDone,
    Quiet,
    StepFinished,
    StepWorking,
    describe_event,
)

TASK = Task("Fix add()")


async def run_one(tmp_path: Path, standin: StandIn, stream: bool) -> list[Event]:
    workers = standin_workers(standin.url)
    workers["gpt"]["stream"] = stream
    config = load_config(
        tmp_path, overrides={"conductor": {"backend": "static"}, "workers": workers}
    )
    events: list[Event] = []
    session = Session(config)
    try:
        plan = Plan(steps=(Step("gpt", "Fix it", "all", "generation"),), source="test")
        await session.run(TASK, plan=plan, on_event=events.append)
    finally:
        await session.aclose()
    return events


async def test_a_streamed_answer_reports_its_tokens_as_they_come(
    tmp_path: Path, standin: StandIn, keys: dict[str, str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(pulse, "TICK", 0.2)
    standin.drip = 0.6  # a slow model: a piece every 0.6 s
    standin.responder = lambda seen: "one two three four five six seven eight nine ten"
    events = await run_one(tmp_path, standin, stream=True)
    working = [e for e in events if isinstance(e, StepWorking)]
    assert working, [describe_event(e) for e in events]
    counts = [e.tokens for e in working]
    assert counts == sorted(counts) and counts[-1] > 0  # counted as they came, never back
    told = describe_event(next(e for e in working if e.tokens))
    assert told.startswith("step 0: gpt (generation) answering: ") and "tokens/s" in told
    # Every report comes before the step's end, and the plan's end is not called the job's.
    end = next(i for i, e in enumerate(events) if isinstance(e, StepFinished))
    assert all(events.index(e) < end for e in working)
    done = next(e for e in events if isinstance(e, PlanDone))
    assert describe_event(done).startswith("plan finished: done in ")


async def test_an_answer_that_comes_whole_is_waited_for_out_loud(
    tmp_path: Path, standin: StandIn, keys: dict[str, str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(pulse, "TICK", 0.2)
    standin.latency = 1.5
    events = await run_one(tmp_path, standin, stream=False)
    working = [e for e in events if isinstance(e, StepWorking)]
    assert working and all(e.tokens == 0 for e in working)
    assert "gpt (generation) waiting for its answer" in describe_event(working[0])


async def test_the_heartbeat_says_what_was_last_seen_when_all_is_quiet() -> None:
    seen: list[Event] = []
    async with pulse.Heartbeat(seen.append, every=0.05) as beat:
        beat(LoopNote(1, "testing 2 candidates in sandboxes"))
        async with asyncio.timeout(WAIT):
            while not any(isinstance(e, Quiet) for e in seen):
                await asyncio.sleep(0.01)
    quiet = next(e for e in seen if isinstance(e, Quiet))
    assert quiet.last == "[1] testing 2 candidates in sandboxes" and quiet.seconds >= 0.05
    assert describe_event(quiet).startswith("still working, ")
    assert describe_event(quiet).endswith("since: [1] testing 2 candidates in sandboxes")
    n = len(seen)
    await asyncio.sleep(0.2)
    assert len(seen) == n  # nothing after the block


async def test_a_heartbeat_is_not_doubled_under_another() -> None:
    outer = pulse.Heartbeat(lambda e: None)
    async with pulse.heartbeat(outer) as sink:
        assert sink is outer
