"""What models this machine can reach, for ``init``: provider keys set in the environment
(their names only) and OpenAI-compatible servers on loopback at their usual ports, each
asked for ``/v1/models`` with a short timeout. Nothing is sent anywhere else."""

from __future__ import annotations

import asyncio
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


async def _models(client: httpx.AsyncClient, url: str) -> list[str]:
    try:
        resp = await client.get(f"{url.rstrip('/')}/models")
        resp.raise_for_status()
        data = resp.json()
    except (httpx.HTTPError, ValueError):
        return []
    rows = data.get("data") if isinstance(data, dict) else None
    return [str(r["id"]) for r in rows or [] if isinstance(r, dict) and r.get("id")]


async def served(
    servers: Mapping[str, str] = SERVERS, timeout: float = PROBE_SECONDS
) -> list[Found]:
    """The models each local server lists; a server that is not there is skipped."""
    async with httpx.AsyncClient(timeout=timeout, trust_env=False) as client:
        lists = await asyncio.gather(*(_models(client, url) for url in servers.values()))
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
