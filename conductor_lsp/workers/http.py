"""The one boundary where httpx meets conductor-lsp: retries, limits, error mapping.

A provider is a subclass that says how its API looks on the wire (URL, headers,
body, how to read an answer or a stream event) and declares its defaults as
class attributes; ``HttpWorker`` does the rest the same way for all of them.
"""

from __future__ import annotations

import asyncio
import contextlib
import email.utils
import ipaddress
import json
import os
import random
import time
import urllib.parse
from collections.abc import AsyncIterator, Iterator
from dataclasses import dataclass, field
from typing import Any, ClassVar

import httpx

from ..answers import AnswerWatch
from ..config.schema import Config, WorkerConfig
from ..errors import (
    ConductorError,
    WorkerEmptyAnswer,
    WorkerError,
    WorkerFormatError,
    WorkerStatusError,
    WorkerTimeout,
    WorkerTransportError,
)
from ..protocols import Check, Limits, WorkerContext, WorkerRequest, WorkerResponse
from ..secrets import Secret, resolve_key, scrub
from ..usage import Usage
from .registry import ProviderDefaults
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


def cut_usage(state: StreamState, request: WorkerRequest) -> Usage:
    """What a stream stopped early cost: the usage it reported so far (Anthropic sends the
    prompt's at the start), else about four characters a prompt token and one token a piece
    of text received (so it is on the servers we know)."""
    prompt = state.usage.input_tokens or len(request.system + request.prompt_text()) // 4
    return Usage(
        prompt, max(state.usage.output_tokens, len(state.text)), state.usage.cached_input_tokens
    )


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


#: Seconds ``doctor --check`` waits for a provider's models list.
CHECK_SECONDS = 10.0


def _listed(resp: httpx.Response) -> set[str] | None:
    """The model names a models list holds (OpenAI's and Anthropic's ``data[].id``,
    Gemini's ``models[].name``); None when the body is not such a list."""
    try:
        body = resp.json()
    except ValueError:
        return None
    if not isinstance(body, dict):
        return None
    rows = body.get("data") or body.get("models")
    if not isinstance(rows, list):
        return None
    names = {str(r.get("id") or r.get("name") or "") for r in rows if isinstance(r, dict)}
    return {n.removeprefix("models/") for n in names if n}


def is_local_address(url: str) -> bool:
    """Whether a URL's host is this machine or a private network (no key expected)."""
    host = urllib.parse.urlsplit(url).hostname or ""
    if host == "localhost" or host.endswith(".localhost"):
        return True
    try:
        ip = ipaddress.ip_address(host)
    except ValueError:
        return host.endswith((".local", ".lan", ".internal"))
    return ip.is_loopback or ip.is_private or ip.is_link_local


def backoff_delay(attempt: int, retry_after: float | None) -> float:
    """Full-jitter exponential backoff; a server's Retry-After wins."""
    if retry_after is not None:
        return retry_after
    return random.uniform(0, min(BACKOFF_CAP, BACKOFF_BASE * 2**attempt))


class HttpWorker(ProviderDefaults):
    """A worker behind an HTTP API; subclasses supply the wire format and defaults."""

    needs_key: ClassVar[bool] = True

    def __init__(
        self,
        name: str,
        config: WorkerConfig,
        context: WorkerContext | None = None,
        *,
        client: httpx.AsyncClient | None = None,
        owner: str = "",
    ) -> None:
        self.name = name
        self.config = config
        self.base_url = (config.base_url or self.default_base_url).rstrip("/")
        self._key = resolve_key(
            api_key_cmd=config.api_key_cmd,
            api_key_env=config.api_key_env,
            default_envs=self.key_envs,
            owner=owner or f"workers.{name}",
        )
        self._own_client = client is None
        timeout = httpx.Timeout(config.timeout, connect=min(10.0, config.timeout))
        self._client = client or httpx.AsyncClient(timeout=timeout)
        limits = context.limits if context is not None else Limits()
        self._sem = limits.for_endpoint(config.provider, self.base_url, config.concurrency)

    def __repr__(self) -> str:
        return f"<{type(self).__name__} {self.name} {self.config.provider}:{self.config.model}>"

    @property
    def secret(self) -> Secret | None:
        """The key, for scrubbing traces; prints as ***."""
        return self._key

    # --- what a provider says about its wire format ------------------------------------

    def url(self, stream: bool) -> str:
        raise NotImplementedError

    def models_url(self) -> str:
        """Where the provider lists its models: what ``doctor --check`` asks with the key."""
        raise NotImplementedError

    def headers(self) -> dict[str, str]:
        raise NotImplementedError

    def body(self, request: WorkerRequest, stream: bool) -> dict[str, Any]:
        raise NotImplementedError

    def parse(self, data: Any) -> tuple[str, Usage]:
        raise NotImplementedError

    def on_event(self, event: str, data: Any, state: StreamState) -> None:
        raise NotImplementedError

    @classmethod
    def doctor(cls, name: str, config: WorkerConfig, full: Config) -> Check:
        """Whether this worker can run: its key (never its value) and endpoint."""
        try:
            key = resolve_key(
                api_key_cmd=config.api_key_cmd,
                api_key_env=config.api_key_env,
                default_envs=cls.key_envs,
                env=os.environ,
                owner=f"workers.{name}",
            )
        except ConductorError as e:
            return "no", str(e)
        where = config.base_url or cls.default_base_url
        variable = config.api_key_env or (cls.key_envs[0] if cls.key_envs else "a key variable")
        if config.api_key_cmd:
            how = "key from command (set, not checked: doctor --check asks the provider)"
        elif key:
            how = (
                f"key in {config.api_key_env or '/'.join(cls.key_envs)} "
                "(set, not checked: doctor --check asks the provider)"
            )
        elif not cls.needs_key and is_local_address(where):
            how = "no key (none needed for a local server)"
        elif not cls.needs_key:
            how = f"no key (set {variable} if the server wants one)"
        else:
            how = f"no key: set {variable}"
        status = "ok" if key or not cls.needs_key else "no"
        return status, f"{config.provider}:{config.model} at {where}, {how}"

    async def check(self) -> Check:
        """Whether the key works: the provider's models list, asked with it (``doctor
        --check``). A refusal names its status; the key never appears."""
        url = self.models_url()
        try:
            resp = await self._client.get(url, headers=self.headers(), timeout=CHECK_SECONDS)
        except httpx.HTTPError as e:
            return "no", f"could not reach {url}: {type(e).__name__}"
        if resp.status_code in (401, 403):
            return "no", f"{url} refused the key ({resp.status_code})"
        if resp.status_code != 200:
            return "no", f"{url} answered {resp.status_code}"
        listed = _listed(resp)
        where = "a local server, no key needed" if not self._key else "the key works"
        if listed is None:
            return "ok", f"{where}: {url} answered"
        named = "among them" if self.config.model in listed else "not among them"
        return "ok", f"{where}: {len(listed)} models listed, {self.config.model} {named}"

    # --- the boundary ------------------------------------------------------------------

    async def aclose(self) -> None:
        if self._own_client:
            await self._client.aclose()

    async def complete(
        self, request: WorkerRequest, *, retries: int | None = None
    ) -> WorkerResponse:
        """One answer, retried on transient errors (``retries`` overrides the config)."""
        start = time.monotonic()
        attempt = empty = 0
        spent = Usage()  # what empty answers cost: tokens are billed all the same
        limit = self.config.max_retries if retries is None else retries
        while True:
            try:
                async with self._sem:
                    text, usage, cut = await self._call_once(request)
                if not text.strip():
                    spent = spent + usage
                    raise WorkerEmptyAnswer("the answer was empty", worker=self.name)
                usage = usage + spent
                break
            except WorkerEmptyAnswer:
                empty += 1  # retried once, whatever the limit: then it is the answer
                if empty > 1:
                    raise
                continue
            except WorkerError as e:
                if not e.retryable or attempt >= limit:
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
            cut=cut,
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

    async def _call_once(self, request: WorkerRequest) -> tuple[str, Usage, str]:
        """(answer, usage, why it was cut). A stream is read only until the watch stops
        it; a whole answer is trimmed after the fact (its tokens were paid all the same)."""
        watch = request.watch()
        stream = self.config.stream
        url = self.url(stream)
        body = self.body(request, stream)
        with self._mapped_errors():
            async with self._client.stream("POST", url, headers=self.headers(), json=body) as resp:
                if resp.status_code >= 400:
                    detail = (await resp.aread()).decode("utf-8", "replace")[:400]
                    raise WorkerStatusError(
                        scrub(f"HTTP {resp.status_code}: {detail}", [self._key]),
                        worker=self.name,
                        status=resp.status_code,
                        retry_after=parse_retry_after(resp.headers.get("retry-after")),
                    )
                if stream and resp.headers.get("content-type", "").startswith("text/event-stream"):
                    state = await self._read_stream(resp.aiter_lines(), watch)
                    if watch.reason:
                        return watch.cut(), cut_usage(state, request), watch.reason
                    return "".join(state.text), state.usage, ""
                data = await self._read_json(resp)
        try:
            text, usage = self.parse(data)
        except (KeyError, IndexError, TypeError, ValueError, AttributeError) as e:
            raise WorkerFormatError(
                f"unexpected answer shape ({type(e).__name__}: {e})", worker=self.name
            ) from e
        if watch.feed(text):
            return watch.cut(), usage, watch.reason
        return text, usage, ""

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
        self, lines: AsyncIterator[str], watch: AnswerWatch | None = None
    ) -> StreamState:
        """The answer's events until it ends, or until ``watch`` stops it (the connection
        is then closed, which ends generation on the servers we know)."""
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
            seen = len(state.text)
            try:
                self.on_event(ev.event, data, state)
            except (KeyError, IndexError, TypeError, ValueError, AttributeError) as e:
                raise WorkerFormatError(f"unexpected stream event: {e}", worker=self.name) from e
            fed = len(state.text) - seen  # a streamed piece is about a token
            if watch is not None and watch.feed("".join(state.text[seen:]), fed):
                return state
            if state.error:
                raise WorkerStatusError(
                    scrub(state.error, [self._key]), worker=self.name, status=529
                )
            if state.done:
                break
        if not state.done:
            raise WorkerTransportError(
                "stream ended before the answer was complete", worker=self.name
            )
        return state
