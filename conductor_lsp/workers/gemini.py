"""Google Gemini generateContent / streamGenerateContent (SSE)."""

from __future__ import annotations

from typing import Any

from ..protocols import WorkerRequest
from ..usage import Usage
from .http import HttpWorker, StreamState


class GeminiWorker(HttpWorker):
    auto = True
    key_envs = ("GEMINI_API_KEY", "GOOGLE_API_KEY")
    default_model = "gemini-2.5-flash"
    default_base_url = "https://generativelanguage.googleapis.com"
    default_description = "Google Gemini Flash: cheap, long context"
    default_price_in = 0.3
    default_price_out = 2.5

    def url(self, stream: bool) -> str:
        model, base_url = self.config.model, self.base_url
        model = model if model.startswith(("models/", "tunedModels/")) else f"models/{model}"
        if stream:
            return f"{base_url}/v1beta/{model}:streamGenerateContent?alt=sse"
        return f"{base_url}/v1beta/{model}:generateContent"

    def models_url(self) -> str:
        return f"{self.base_url}/v1beta/models"

    def headers(self) -> dict[str, str]:
        return {"x-goog-api-key": self._key.reveal()} if self._key else {}

    def body(self, request: WorkerRequest, stream: bool) -> dict[str, Any]:
        cfg = self.config
        gen: dict[str, Any] = {"maxOutputTokens": cfg.max_tokens}
        temperature = request.temperature_for(cfg.temperature)
        if temperature >= 0:
            gen["temperature"] = temperature
        body: dict[str, Any] = {
            "contents": [{"role": "user", "parts": [{"text": p.text} for p in request.parts]}],
            "generationConfig": gen,
        }
        if request.system:
            body["systemInstruction"] = {"parts": [{"text": request.system}]}
        return body

    def parse(self, data: Any) -> tuple[str, Usage]:
        cands = data.get("candidates") or []
        if not cands:
            reason = (data.get("promptFeedback") or {}).get("blockReason", "no candidates")
            raise ValueError(f"no answer ({reason})")
        return _text(cands[0]), _usage(data.get("usageMetadata"))

    def on_event(self, event: str, data: Any, state: StreamState) -> None:
        if "error" in data:
            state.error = str(data["error"].get("message", data["error"]))
            return
        for cand in data.get("candidates") or []:
            piece = _text(cand)
            if piece:
                state.text.append(piece)
            if cand.get("finishReason"):
                state.done = True
        if data.get("usageMetadata"):
            state.usage = _usage(data["usageMetadata"])


def _text(candidate: Any) -> str:
    parts = (candidate.get("content") or {}).get("parts") or []
    return "".join(p.get("text", "") for p in parts if not p.get("thought"))


def _usage(u: Any) -> Usage:
    if not u:
        return Usage()
    out = int(u.get("candidatesTokenCount", 0)) + int(u.get("thoughtsTokenCount", 0))
    cached = u.get("cachedContentTokenCount")
    return Usage(int(u.get("promptTokenCount", 0)), out, None if cached is None else int(cached))
