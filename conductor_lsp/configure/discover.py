"""What models this machine can reach, for ``init``: provider keys set in the environment
(their names only) and OpenAI-compatible servers on loopback at their usual ports, each
asked for ``/v1/models`` with a short timeout. Nothing is sent anywhere else."""

from __future__ import annotations

import asyncio
import json
import re
from collections.abc import Mapping
from dataclasses import dataclass

import httpx

from ..workers.registry import PROVIDERS

#: Local servers and their default addresses.
SERVERS: Mapping[str, str] = {
    "ollama": "http://127.0.0.1:11434/v1",
    "llama.cpp": "http://127.0.0.1:8080/v1",
    "vllm": "http://127.0.0.1:8000/v1",
    "lm-studio": "http://127.0.0.1:1234/v1",
}
PROBE_SECONDS = 1.0
#: The most bytes of a ``/v1/models`` answer read (decompressed): a real list is a few KB.
MAX_BODY = 8_000_000
#: The most models one server offers ``init`` (a list of thousands is no pool).
MAX_MODELS = 32
#: The most characters of a model id kept.
MAX_ID = 200
_SIZE = re.compile(r"(\d+(?:\.\d+)?)\s*b\b", re.IGNORECASE)


@dataclass(frozen=True)
class Found:
    """One model that could become a worker."""

    name: str
    provider: str
    model: str
    #: Where it was found: "OPENAI_API_KEY is set", "ollama at http://...".
    why: str
    base_url: str = ""
    api_key_env: str = ""

    @property
    def local(self) -> bool:
        return bool(self.base_url)

    def size(self) -> float:
        """Billions of parameters, read from the name (0 when it does not say)."""
        m = _SIZE.search(self.model.replace("-", " ").replace(":", " ").replace("_", " "))
        return float(m.group(1)) if m else 0.0


def keyed(env: Mapping[str, str]) -> list[Found]:
    """A worker for each provider whose key variable is set (the variable's name is kept,
    never its value), on the provider's default model."""
    out = []
    for provider in PROVIDERS.names():
        cls = PROVIDERS.get(provider)
        if not cls.needs_key or not cls.default_model:
            continue
        var = next((v for v in cls.key_envs if env.get(v)), None)
        if var:
            out.append(Found(provider, provider, cls.default_model, f"{var} is set", "", var))
    return out


async def _models(client: httpx.AsyncClient, url: str, timeout: float) -> list[str]:
    """The ids a server lists, read within ``timeout`` in all (not per read: a server
    sending a byte at a time is cut at the deadline) and at most ``MAX_BODY`` bytes after
    decompression; any other answer is no models."""
    try:
        async with asyncio.timeout(timeout):
            body = await _body(client, f"{url.rstrip('/')}/models")
        data = json.loads(body)
    except (httpx.HTTPError, TimeoutError, ValueError, RecursionError, _TooBig):
        return []
    rows = data.get("data") if isinstance(data, dict) else None
    ids = [r["id"] for r in rows if isinstance(r, dict)] if isinstance(rows, list) else []
    return [_printable(i) for i in ids if isinstance(i, str) and i][:MAX_MODELS]


class _TooBig(Exception):
    pass


async def _body(client: httpx.AsyncClient, url: str) -> bytes:
    async with client.stream("GET", url) as resp:
        resp.raise_for_status()
        out = bytearray()
        async for chunk in resp.aiter_bytes():  # decompressed: a gzip bomb is cut too
            out += chunk
            if len(out) > MAX_BODY:
                raise _TooBig
        return bytes(out)


def _printable(model: str) -> str:
    """An id as it can be written and shown: lone surrogates and control characters
    escaped, cut to ``MAX_ID`` characters."""
    text = model.encode("utf-8", "backslashreplace").decode("utf-8")
    text = "".join(c if c.isprintable() else f"\\x{ord(c):02x}" for c in text)
    return text[:MAX_ID]


async def served(
    servers: Mapping[str, str] = SERVERS, timeout: float = PROBE_SECONDS
) -> list[Found]:
    """The models each local server lists; a server that is not there is skipped."""
    async with httpx.AsyncClient(timeout=timeout, trust_env=False) as client:
        lists = await asyncio.gather(*(_models(client, url, timeout) for url in servers.values()))
    out = []
    for (server, url), models in zip(servers.items(), lists, strict=True):
        for model in models:
            name = re.sub(r"[^a-z0-9_-]+", "-", f"{server}-{model}".lower()).strip("-")
            out.append(Found(name, "openai-compatible", model, f"{server} at {url}", url))
    return out


def discover(
    env: Mapping[str, str], servers: Mapping[str, str] = SERVERS, timeout: float = PROBE_SECONDS
) -> list[Found]:
    """Every model found: keyed providers first, then local servers' models."""
    return keyed(env) + asyncio.run(served(servers, timeout))


def provider_url(provider: str) -> str:
    """The endpoint a provider calls when no ``base_url`` is set."""
    return PROVIDERS.get(provider).default_base_url
