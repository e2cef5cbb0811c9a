"""OpenAI Chat Completions, and every server that copies it (vLLM, llama.cpp, Ollama)."""

from __future__ import annotations

from typing import Any

from ..config import WorkerConfig
from ..keys import Secret
from ..protocols import WorkerRequest
from ..usage import Usage
from .http import StreamState


def chat_messages(request: WorkerRequest) -> list[dict[str, str]]:
    """System first, then one user message: stable parts lead so prefix caches hit."""
    msgs = [{"role": "system", "content": request.system}] if request.system else []
    msgs.append({"role": "user", "content": request.prompt_text()})
    return msgs


class OpenAIWire:
    default_base_url = "https://api.openai.com/v1"
    key_envs: tuple[str, ...] = ("OPENAI_API_KEY",)
    #: GPT-5 family models take max_completion_tokens; compatible servers know max_tokens.
    token_field = "max_completion_tokens"

    def url(self, base_url: str, model: str, stream: bool) -> str:
        return f"{base_url}/chat/completions"

    def headers(self, key: Secret | None) -> dict[str, str]:
        return {"Authorization": f"Bearer {key.reveal()}"} if key else {}

    def body(self, cfg: WorkerConfig, request: WorkerRequest, stream: bool) -> dict[str, Any]:
        body: dict[str, Any] = {
            "model": cfg.model,
            "messages": chat_messages(request),
            self.token_field: cfg.max_tokens,
        }
        if cfg.temperature >= 0:
            body["temperature"] = cfg.temperature
        if stream:
            body["stream"] = True
            body["stream_options"] = {"include_usage": True}
        return body

    def parse(self, data: Any) -> tuple[str, Usage]:
        choice = data["choices"][0]
        text = choice["message"].get("content") or ""
        return text, _usage(data.get("usage"))

    def on_event(self, event: str, data: Any, state: StreamState) -> None:
        if "error" in data:
            state.error = str(data["error"].get("message", data["error"]))
            return
        for choice in data.get("choices") or []:
            piece = (choice.get("delta") or {}).get("content")
            if piece:
                state.text.append(piece)
        if data.get("usage"):
            state.usage = _usage(data["usage"])


class OpenAICompatibleWire(OpenAIWire):
    default_base_url = "http://127.0.0.1:8000/v1"
    key_envs: tuple[str, ...] = ("OPENAI_COMPATIBLE_API_KEY",)
    token_field = "max_tokens"


def _usage(u: Any) -> Usage:
    if not u:
        return Usage()
    cached = (u.get("prompt_tokens_details") or {}).get("cached_tokens") or 0
    return Usage(int(u.get("prompt_tokens", 0)), int(u.get("completion_tokens", 0)), int(cached))
