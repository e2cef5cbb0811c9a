"""The one boundary where httpx meets conductor-lsp: retries, limits, error mapping.

Each provider supplies a small ``Wire`` (URL, headers, body, how to read the
answer); ``HttpWorker`` does the rest the same way for all of them.
"""

from __future__ import annotations

import asyncio
import contextlib
import email.utils
import json
import random
import time
from collections.abc import AsyncIterator, Callable, Iterator
from dataclasses import dataclass, field
from typing import Any, Protocol

import httpx

from ..config import WorkerConfig
from ..errors import (
    WorkerError,
    WorkerFormatError,
    WorkerStatusError,
    WorkerTimeout,
    WorkerTransportError,
)
from ..keys import Secret, resolve_key, scrub
from ..protocols import WorkerRequest, WorkerResponse
from ..usage import Usage
from .sse import iter_sse

BACKOFF_BASE = 0.5
BACKOFF_CAP = 30.0
RETRY_AFTER_CAP = 120.0


@dataclass
class StreamState:
    text: list[str] = field(default_factory=list)
    usage: Usage = Usage()
    done: bool = False
    error: str = ""


class Wire(Protocol):
    """How one provider's HTTP API looks on the wire."""

    default_base_url: str
    key_envs: tuple[str, ...]

    def url(self, base_url: str, model: str, stream: bool) -> str: ...

    def headers(self, key: Secret | None) -> dict[str, str]: ...

    def body(self, cfg: WorkerConfig, request: WorkerRequest, stream: bool) -> dict[str, Any]: ...

    def parse(self, data: Any) -> tuple[str, Usage]: ...

    def on_event(self, event: str, data: Any, state: StreamState) -> None: ...


def parse_retry_after(value: str | None) -> float | None:
    """Seconds from a Retry-After header (delta-seconds or an HTTP date)."""
    if not value:
        return None
    value = value.strip()
    try:
        return max(0.0, min(float(value), RETRY_AFTER_CAP))
    except ValueError:
        pass
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    return max(0.0, min(when.timestamp() - time.time(), RETRY_AFTER_CAP))


def backoff_delay(attempt: int, retry_after: float | None) -> float:
    """Full-jitter exponential backoff; a server's Retry-After wins."""
    if retry_after is not None:
        return retry_after
    return random.uniform(0, min(BACKOFF_CAP, BACKOFF_BASE * 2**attempt))


class Limits:
    """Per-endpoint concurrency limits shared by the workers of one pool."""

    def __init__(self) -> None:
        self._sems: dict[tuple[str, str], asyncio.Semaphore] = {}

    def for_endpoint(self, provider: str, base_url: str, size: int) -> asyncio.Semaphore:
        key = (provider, base_url)
        if key not in self._sems:
            self._sems[key] = asyncio.Semaphore(size)
        return self._sems[key]


class HttpWorker:
    """A worker behind an HTTP API; ``wire`` says which one."""

    def __init__(
        self,
        name: str,
        config: WorkerConfig,
        wire: Wire,
        *,
        client: httpx.AsyncClient | None = None,
        limits: Limits | None = None,
    ) -> None:
        self.name = name
        self.config = config
        self.wire = wire
        self.base_url = (config.base_url or wire.default_base_url).rstrip("/")
        self._key = resolve_key(
            api_key_cmd=config.api_key_cmd,
            api_key_env=config.api_key_env,
            default_envs=wire.key_envs,
            owner=f"workers.{name}",
        )
        self._own_client = client is None
        timeout = httpx.Timeout(config.timeout, connect=min(10.0, config.timeout))
        self._client = client or httpx.AsyncClient(timeout=timeout)
        self._timeout = timeout
        self._sem = (limits or Limits()).for_endpoint(
            config.provider, self.base_url, config.concurrency
        )

    def __repr__(self) -> str:
        return f"<{type(self).__name__} {self.name} {self.config.provider}:{self.config.model}>"

    @property
    def has_key(self) -> bool:
        return self._key is not None

    async def aclose(self) -> None:
        if self._own_client:
            await self._client.aclose()

    async def complete(
        self, request: WorkerRequest, on_text: Callable[[str], None] | None = None
    ) -> WorkerResponse:
        start = time.monotonic()
        attempt = 0
        while True:
            try:
                async with self._sem:
                    text, usage, raw = await self._call_once(request, on_text)
                break
            except WorkerError as e:
                if not e.retryable or attempt >= self.config.max_retries:
                    raise
                await asyncio.sleep(backoff_delay(attempt, getattr(e, "retry_after", None)))
                attempt += 1
        cost = usage.cost(self.config.price_in, self.config.price_out)
        return WorkerResponse(
            text=text,
            usage=usage,
            cost=cost,
            model=self.config.model,
            elapsed=time.monotonic() - start,
            attempts=attempt + 1,
            raw=raw,
        )

    @contextlib.contextmanager
    def _mapped_errors(self) -> Iterator[None]:
        """Translate httpx's errors into worker errors, keys scrubbed."""
        try:
            yield
        except httpx.TimeoutException as e:
            raise WorkerTimeout(
                f"no answer within {self.config.timeout:g}s", worker=self.name
            ) from e
        except (httpx.TransportError, httpx.StreamError) as e:
            msg = scrub(f"{type(e).__name__}: {e}", [self._key])
            raise WorkerTransportError(msg, worker=self.name) from e

    async def _call_once(
        self, request: WorkerRequest, on_text: Callable[[str], None] | None
    ) -> tuple[str, Usage, dict[str, Any] | None]:
        stream = self.config.stream
        url = self.wire.url(self.base_url, self.config.model, stream)
        headers = self.wire.headers(self._key)
        body = self.wire.body(self.config, request, stream)
        with self._mapped_errors():
            async with self._client.stream("POST", url, headers=headers, json=body) as resp:
                if resp.status_code >= 400:
                    detail = (await resp.aread()).decode("utf-8", "replace")[:400]
                    raise WorkerStatusError(
                        scrub(f"HTTP {resp.status_code}: {detail}", [self._key]),
                        worker=self.name,
                        status=resp.status_code,
                        retry_after=parse_retry_after(resp.headers.get("retry-after")),
                    )
                if stream and resp.headers.get("content-type", "").startswith("text/event-stream"):
                    state = await self._read_stream(resp.aiter_lines(), on_text)
                    return "".join(state.text), state.usage, None
                data = await self._read_json(resp)
        try:
            text, usage = self.wire.parse(data)
        except (KeyError, IndexError, TypeError, ValueError) as e:
            raise WorkerFormatError(
                f"unexpected answer shape ({type(e).__name__}: {e})", worker=self.name
            ) from e
        if on_text and text:
            on_text(text)
        return text, usage, data

    async def _read_json(self, resp: httpx.Response) -> Any:
        raw = await resp.aread()
        try:
            return json.loads(raw)
        except (json.JSONDecodeError, UnicodeDecodeError) as e:
            # A body that stops mid-JSON is a cut connection, worth a retry.
            raise WorkerTransportError(
                f"answer is not complete JSON ({len(raw)} bytes): {e}", worker=self.name
            ) from e

    async def _read_stream(
        self, lines: AsyncIterator[str], on_text: Callable[[str], None] | None
    ) -> StreamState:
        state = StreamState()
        async for ev in iter_sse(lines):
            if ev.data.strip() == "[DONE]":
                state.done = True
                break
            try:
                data = json.loads(ev.data)
            except json.JSONDecodeError as e:
                raise WorkerTransportError(
                    f"bad SSE data: {ev.data[:80]!r}", worker=self.name
                ) from e
            before = len(state.text)
            try:
                self.wire.on_event(ev.event, data, state)
            except (KeyError, IndexError, TypeError, ValueError) as e:
                raise WorkerFormatError(f"unexpected stream event: {e}", worker=self.name) from e
            if state.error:
                raise WorkerStatusError(
                    scrub(state.error, [self._key]), worker=self.name, status=529
                )
            if on_text:
                for chunk in state.text[before:]:
                    on_text(chunk)
            if state.done:
                break
        if not state.done:
            raise WorkerTransportError(
                "stream ended before the answer was complete", worker=self.name
            )
        return state
