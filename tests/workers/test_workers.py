"""Real httpx workers against the loopback stand-in of each provider's wire format."""

from __future__ import annotations

import asyncio
import json
import sys
from pathlib import Path

import pytest
from helpers import worker_config
from standin import Behaviour, StandIn

from conductor_lsp import (
    ConfigError,
    Task,
    WorkerFormatError,
    WorkerStatusError,
    WorkerTimeout,
    WorkerTransportError,
)
from conductor_lsp.errors import WorkerEmptyAnswer
from conductor_lsp.protocols import Limits, Part, WorkerContext, WorkerRequest
from conductor_lsp.workers import provider_class
from conductor_lsp.workers.http import HttpWorker, backoff_delay, parse_retry_after

REQUEST = WorkerRequest(
    system="You are a worker.",
    parts=(Part("## Task\nFix add()", stable=True), Part("## Your subtask\nWrite the fix")),
)
KEY = "sk-live-THIS-IS-SECRET-42"


def make(
    standin: StandIn, provider: str, monkeypatch: pytest.MonkeyPatch, **kw: object
) -> HttpWorker:
    monkeypatch.setenv("STANDIN_KEY", KEY)
    base = f"{standin.url}/v1" if provider.startswith("openai") else standin.url
    cfg = worker_config(
        provider=provider,
        model=f"{provider}-model",
        base_url=base,
        api_key_env="STANDIN_KEY",
        price_in=2.0,
        price_out=10.0,
        **kw,
    )
    worker = provider_class(provider)(f"w-{provider}", cfg, WorkerContext(Path.cwd()))
    assert isinstance(worker, HttpWorker)
    return worker


def http(name: str, provider: str, cfg: object, limits: Limits | None = None) -> HttpWorker:
    context = WorkerContext(Path.cwd(), limits=limits or Limits())
    worker = provider_class(provider)(name, cfg, context)  # type: ignore[arg-type]
    assert isinstance(worker, HttpWorker)
    return worker


PROVIDERS = ["openai", "anthropic", "gemini", "openai-compatible"]


@pytest.mark.parametrize("provider", PROVIDERS)
@pytest.mark.parametrize("stream", [False, True])
async def test_reply_usage_and_cost(
    standin: StandIn, provider: str, stream: bool, monkeypatch: pytest.MonkeyPatch
) -> None:
    standin.push(Behaviour(text="the fix is here"))
    w = make(standin, provider, monkeypatch, stream=stream)
    resp = await w.complete(REQUEST)
    await w.aclose()
    assert resp.text == "the fix is here"
    assert resp.usage.input_tokens > 0 and resp.usage.output_tokens == 4
    assert resp.cost == pytest.approx(
        (resp.usage.input_tokens * 2.0 + resp.usage.output_tokens * 10.0) / 1e6
    )
    seen = standin.seen[-1]
    assert seen.stream is stream
    assert "Fix add()" in seen.prompt() and "Write the fix" in seen.prompt()


async def test_provider_specific_wire_details(
    standin: StandIn, monkeypatch: pytest.MonkeyPatch
) -> None:
    for provider in ("openai", "anthropic", "gemini"):
        w = make(standin, provider, monkeypatch)
        await w.complete(REQUEST)
        await w.aclose()
    oa, an, ge = standin.seen
    assert oa.path == "/v1/chat/completions"
    assert oa.headers["authorization"] == f"Bearer {KEY}"
    assert oa.body["messages"][0] == {"role": "system", "content": "You are a worker."}
    assert "max_completion_tokens" in oa.body
    assert an.path == "/v1/messages"
    assert an.headers["x-api-key"] == KEY and an.headers["anthropic-version"] == "2023-06-01"
    blocks = an.body["messages"][0]["content"]
    assert blocks[0]["cache_control"] == {"type": "ephemeral"}  # the stable task block
    assert "cache_control" not in blocks[1]
    assert an.body["system"][0]["text"] == "You are a worker."
    assert ge.path == "/v1beta/models/gemini-model:generateContent"
    assert ge.headers["x-goog-api-key"] == KEY
    assert ge.body["systemInstruction"]["parts"][0]["text"] == "You are a worker."
    # Stable content leads in every provider's prompt, so prefix caches can hit.
    for seen in (oa, an, ge):
        text = seen.prompt()
        assert text.index("Fix add()") < text.index("Write the fix")


async def test_gemini_stream_path(standin: StandIn, monkeypatch: pytest.MonkeyPatch) -> None:
    w = make(standin, "gemini", monkeypatch, stream=True)
    await w.complete(REQUEST)
    await w.aclose()
    assert standin.seen[0].path == "/v1beta/models/gemini-model:streamGenerateContent?alt=sse"


@pytest.mark.parametrize("provider", PROVIDERS)
async def test_retries_429_with_retry_after_then_500(
    standin: StandIn, provider: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    sleeps: list[float] = []
    real_sleep = asyncio.sleep

    async def fake_sleep(d: float) -> None:
        sleeps.append(d)
        await real_sleep(0)

    monkeypatch.setattr("conductor_lsp.workers.http.asyncio.sleep", fake_sleep)
    standin.push(
        Behaviour("status", status=429, retry_after="3"),
        Behaviour("status", status=503),
        Behaviour(text="finally"),
    )
    w = make(standin, provider, monkeypatch)
    resp = await w.complete(REQUEST)
    await w.aclose()
    assert resp.text == "finally" and resp.attempts == 3
    assert sleeps[0] == 3.0  # Retry-After honoured
    assert len(sleeps) == 2 and 0 <= sleeps[1] <= 0.02  # jittered backoff (base patched to 0.01)
    assert len(standin.seen) == 3


async def test_gives_up_after_max_retries_and_keeps_status(
    standin: StandIn, monkeypatch: pytest.MonkeyPatch
) -> None:
    standin.push(*[Behaviour("status", status=500)] * 3)
    w = make(standin, "openai", monkeypatch, max_retries=2)
    with pytest.raises(WorkerStatusError) as info:
        await w.complete(REQUEST)
    await w.aclose()
    assert info.value.status == 500 and len(standin.seen) == 3


async def test_client_errors_are_not_retried(
    standin: StandIn, monkeypatch: pytest.MonkeyPatch
) -> None:
    body = json.dumps({"error": {"message": f"invalid key {KEY}"}})
    standin.push(Behaviour("status", status=401, body=body))
    w = make(standin, "anthropic", monkeypatch)
    with pytest.raises(WorkerStatusError) as info:
        await w.complete(REQUEST)
    await w.aclose()
    assert info.value.status == 401 and len(standin.seen) == 1
    assert KEY not in str(info.value) and "***" in str(info.value)


@pytest.mark.parametrize("provider", ["openai", "anthropic", "gemini"])
async def test_cut_json_body_is_retried(
    standin: StandIn, provider: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    standin.push(Behaviour("cut"), Behaviour(text="whole"))
    w = make(standin, provider, monkeypatch)
    resp = await w.complete(REQUEST)
    await w.aclose()
    assert resp.text == "whole" and resp.attempts == 2


@pytest.mark.parametrize("provider", ["openai", "anthropic", "gemini"])
async def test_cut_stream_is_an_error_not_a_short_answer(
    standin: StandIn, provider: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    standin.push(*[Behaviour("stream-cut", text="one two three four five six")] * 2)
    w = make(standin, provider, monkeypatch, stream=True, max_retries=1)
    with pytest.raises(WorkerTransportError, match="stream ended"):
        await w.complete(REQUEST)
    await w.aclose()
    assert len(standin.seen) == 2


async def test_slow_answer_times_out(standin: StandIn, monkeypatch: pytest.MonkeyPatch) -> None:
    standin.push(Behaviour("slow", delay=2.0), Behaviour("slow", delay=2.0))
    w = make(standin, "openai", monkeypatch, timeout=0.3, max_retries=1)
    with pytest.raises(WorkerTimeout, match=r"no answer within 0\.3s"):
        await w.complete(REQUEST)
    await w.aclose()


async def test_connection_refused_is_transport_error(monkeypatch: pytest.MonkeyPatch) -> None:
    cfg = worker_config(
        provider="openai", model="m", base_url="http://127.0.0.1:9/v1", max_retries=1
    )
    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    w = http("dead", "openai", cfg)
    with pytest.raises(WorkerTransportError):
        await w.complete(REQUEST)
    await w.aclose()


async def test_concurrency_limit_per_endpoint(
    standin: StandIn, monkeypatch: pytest.MonkeyPatch
) -> None:
    standin.latency = 0.2
    limits = Limits()
    monkeypatch.setenv("STANDIN_KEY", KEY)
    cfg = worker_config(
        provider="openai",
        model="m",
        base_url=f"{standin.url}/v1",
        api_key_env="STANDIN_KEY",
        concurrency=2,
    )
    workers = [http(f"w{i}", "openai", cfg, limits) for i in range(2)]
    in_flight = 0
    peak = 0
    orig = HttpWorker._call_once

    async def counting(self: HttpWorker, *a: object) -> object:
        nonlocal in_flight, peak
        in_flight += 1
        peak = max(peak, in_flight)
        try:
            return await orig(self, *a)  # type: ignore[arg-type]
        finally:
            in_flight -= 1

    monkeypatch.setattr(HttpWorker, "_call_once", counting)
    await asyncio.gather(*(workers[i % 2].complete(REQUEST) for i in range(6)))
    for w in workers:
        await w.aclose()
    assert peak == 2 and len(standin.seen) == 6


def test_keys_never_in_repr(monkeypatch: pytest.MonkeyPatch, standin: StandIn) -> None:
    w = make(standin, "openai", monkeypatch)
    assert KEY not in repr(w) and KEY not in repr(w._key) and KEY not in str(w.__dict__)


def test_api_key_cmd_wins_and_errors_do_not_leak(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "from-env")
    cmd = f"{sys.executable} -c \"print('from-cmd-key')\""
    w = http("k", "openai", worker_config(provider="openai", model="m", api_key_cmd=cmd))
    assert w._key is not None and w._key.reveal() == "from-cmd-key"
    bad = f"{sys.executable} -c \"import sys; print('leaked'); sys.exit(3)\""
    with pytest.raises(ConfigError, match="exited with status 3") as info:
        http("k", "openai", worker_config(provider="openai", model="m", api_key_cmd=bad))
    assert "leaked" not in str(info.value)


def test_retry_after_forms() -> None:
    assert parse_retry_after("7") == 7.0
    assert parse_retry_after(None) is None
    assert parse_retry_after("soon") is None
    assert parse_retry_after("100000") == 120.0  # capped
    assert 0 <= backoff_delay(10, None) <= 30.0
    assert backoff_delay(0, 2.5) == 2.5


def _null_content() -> str:
    return json.dumps(
        {
            "choices": [{"index": 0, "message": {"role": "assistant", "content": None}}],
            "usage": {"prompt_tokens": 7, "completion_tokens": 0},
        }
    )


async def test_an_empty_answer_is_retried_once_then_reported(
    standin: StandIn, monkeypatch: pytest.MonkeyPatch
) -> None:
    standin.push(Behaviour("raw", body=_null_content()), Behaviour(text="second time lucky"))
    w = make(standin, "openai-compatible", monkeypatch, max_retries=0)
    resp = await w.complete(REQUEST)
    assert resp.text == "second time lucky" and len(standin.seen) == 2
    assert resp.usage.input_tokens > 7  # the empty call's tokens are counted too
    standin.push(Behaviour("raw", body=_null_content()), Behaviour("raw", body=_null_content()))
    with pytest.raises(WorkerEmptyAnswer, match="empty"):
        await w.complete(REQUEST)
    assert len(standin.seen) == 4  # once more, never again
    await w.aclose()


async def test_no_choices_is_reported_and_never_retried(
    standin: StandIn, monkeypatch: pytest.MonkeyPatch
) -> None:
    standin.push(Behaviour("raw", body=json.dumps({"choices": [], "usage": {}})))
    w = make(standin, "openai", monkeypatch, max_retries=4)
    with pytest.raises(WorkerFormatError, match="no choices"):
        await w.complete(REQUEST)
    await w.aclose()
    assert len(standin.seen) == 1


async def test_the_conductors_retries_are_configured_like_workers(standin: StandIn) -> None:
    from conductor_lsp import ConductorConfig
    from conductor_lsp.conductor.openai import OpenAIConductor
    from conductor_lsp.protocols import WorkerInfo

    for _ in range(5):
        standin.push(Behaviour("status", status=503))
    c = OpenAIConductor(
        ConductorConfig(backend="openai", model="m", base_url=f"{standin.url}/v1", max_retries=1)
    )
    c.mode = "text"  # the structured-output probing is not what this test is about
    infos = [WorkerInfo("w", "", 0, 0, "openai-compatible")]
    with pytest.raises(WorkerStatusError):
        await c.plan(Task("x"), infos, 3)
    await c.aclose()
    assert len(standin.seen) == 2  # one call and one retry: conductor.max_retries = 1
