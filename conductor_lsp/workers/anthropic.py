"""Anthropic Messages API, with prompt caching on the stable prefix."""

from __future__ import annotations

from typing import Any

from ..protocols import WorkerRequest
from ..usage import Usage
from .http import HttpWorker, StreamState

API_VERSION = "2023-06-01"


class AnthropicWorker(HttpWorker):
    auto = True
    key_envs = ("ANTHROPIC_API_KEY",)
    default_model = "claude-sonnet-4-5"
    default_base_url = "https://api.anthropic.com"
    default_description = "Anthropic Claude Sonnet: careful reasoning and code"
    default_price_in = 3.0
    default_price_out = 15.0

    def url(self, stream: bool) -> str:
        return f"{self.base_url}/v1/messages"

    def models_url(self) -> str:
        return f"{self.base_url}/v1/models"

    def headers(self) -> dict[str, str]:
        h = {"anthropic-version": API_VERSION}
        if self._key:
            h["x-api-key"] = self._key.reveal()
        return h

    def body(self, request: WorkerRequest, stream: bool) -> dict[str, Any]:
        cfg = self.config
        blocks: list[dict[str, Any]] = [{"type": "text", "text": p.text} for p in request.parts]
        stable = [i for i, p in enumerate(request.parts) if p.stable]
        if stable:
            blocks[stable[-1]]["cache_control"] = {"type": "ephemeral"}
        body: dict[str, Any] = {
            "model": cfg.model,
            "max_tokens": cfg.max_tokens,
            "messages": [{"role": "user", "content": blocks}],
        }
        if request.system:
            body["system"] = [{"type": "text", "text": request.system}]
        temperature = request.temperature_for(cfg.temperature)
        if temperature >= 0:
            body["temperature"] = temperature
        if stream:
            body["stream"] = True
        return body

    def parse(self, data: Any) -> tuple[str, Usage]:
        if data.get("type") == "error":
            raise ValueError(data["error"].get("message", "error"))
        text = "".join(b["text"] for b in data["content"] if b.get("type") == "text")
        return text, _usage(data.get("usage"))

    def on_event(self, event: str, data: Any, state: StreamState) -> None:
        kind = data.get("type", event)
        if kind == "message_start":
            state.usage = _usage(data["message"].get("usage"))
        elif kind == "content_block_delta":
            delta = data["delta"]
            if delta.get("type") == "text_delta":
                state.text.append(delta["text"])
        elif kind == "message_delta":
            out = (data.get("usage") or {}).get("output_tokens")
            if out is not None:
                u = state.usage
                state.usage = Usage(u.input_tokens, int(out), u.cached_input_tokens)
        elif kind == "message_stop":
            state.done = True
        elif kind == "error":
            state.error = str(data["error"].get("message", data["error"]))


def _usage(u: Any) -> Usage:
    if not u:
        return Usage()
    read = u.get("cache_read_input_tokens")
    created = int(u.get("cache_creation_input_tokens") or 0)
    cached = None if read is None else int(read)
    return Usage(
        int(u.get("input_tokens", 0)) + (cached or 0) + created,
        int(u.get("output_tokens", 0)),
        cached,
    )
