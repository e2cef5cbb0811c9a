"""OpenAI Chat Completions, and every server that copies it (vLLM, llama.cpp, Ollama)."""

from __future__ import annotations

from typing import Any

from ..protocols import WorkerRequest
from ..usage import Usage
from .http import HttpWorker, StreamState


def chat_messages(request: WorkerRequest) -> list[dict[str, str]]:
    """System first, then one user message: stable parts lead so prefix caches hit."""
    msgs = [{"role": "system", "content": request.system}] if request.system else []
    msgs.append({"role": "user", "content": request.prompt_text()})
    return msgs


class OpenAIWorker(HttpWorker):
    auto = True
    key_envs = ("OPENAI_API_KEY",)
    default_model = "gpt-5-mini"
    default_base_url = "https://api.openai.com/v1"
    default_description = "OpenAI GPT-5 mini: fast, strong coder"
    default_price_in = 0.25
    default_price_out = 2.0
    #: GPT-5 family models take max_completion_tokens; compatible servers know max_tokens.
    token_field = "max_completion_tokens"

    def url(self, stream: bool) -> str:
        return f"{self.base_url}/chat/completions"

    def models_url(self) -> str:
        return f"{self.base_url}/models"

    def headers(self) -> dict[str, str]:
        return {"Authorization": f"Bearer {self._key.reveal()}"} if self._key else {}

    def body(self, request: WorkerRequest, stream: bool) -> dict[str, Any]:
        cfg = self.config
        body: dict[str, Any] = {
            "model": cfg.model,
            "messages": chat_messages(request),
            self.token_field: cfg.max_tokens,
        }
        temperature = request.temperature_for(cfg.temperature)
        if temperature >= 0:
            body["temperature"] = temperature
        if stream:
            body["stream"] = True
            body["stream_options"] = {"include_usage": True}
        body.update(request.options)
        return body

    def parse(self, data: Any) -> tuple[str, Usage]:
        choices = data.get("choices")
        if not choices:
            raise ValueError("the answer has no choices")
        text = choices[0]["message"].get("content") or ""
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


class OpenAICompatibleWorker(OpenAIWorker):
    """vLLM, llama.cpp's server, Ollama, LM Studio: the same wire, usually no key."""

    auto = False
    needs_key = False
    key_envs = ("OPENAI_COMPATIBLE_API_KEY",)
    default_model = ""
    default_base_url = "http://127.0.0.1:8000/v1"
    default_description = ""
    default_price_in = 0.0
    default_price_out = 0.0
    token_field = "max_tokens"


def _usage(u: Any) -> Usage:
    if not u:
        return Usage()
    cached = (u.get("prompt_tokens_details") or {}).get("cached_tokens")
    return Usage(
        int(u.get("prompt_tokens", 0)),
        int(u.get("completion_tokens", 0)),
        None if cached is None else int(cached),
    )
