"""A loopback stand-in for OpenAI, Anthropic and Gemini that speaks their real wire formats.

Tests script it with behaviours (reply, status with Retry-After, slow, cut off,
streamed) and read back the requests it saw. The real httpx workers talk to it.
Run as ``python tests/standin.py --port N`` to use it by hand or from bench/.
"""

from __future__ import annotations

import argparse
import json
import re
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


@dataclass
class Behaviour:
    """One scripted answer. ``kind``: reply | status | slow | cut | stream-cut | raw (``body``
    sent as it is, with ``status``) | loop (OpenAI's stream: ``text``, then its last line
    again and again until the client hangs up, as a small model at temperature 0 does)."""

    kind: str = "reply"
    text: str | None = None
    status: int = 200
    retry_after: str | None = None
    delay: float = 0.0
    body: str | None = None


@dataclass
class Seen:
    provider: str
    path: str
    headers: dict[str, str]
    body: dict[str, Any]
    stream: bool
    #: The prompt's tokens as the stand-in's ``counter`` counted them (None: words).
    prompt_tokens: int | None = None

    def messages_text(self) -> str:
        """The chat messages' text, as a server's chat template would tokenize it."""
        texts = [m.get("content") for m in self.body.get("messages", [])]
        return "\n".join(t for t in texts if isinstance(t, str))

    def prompt(self) -> str:
        """All the text the worker sent, flattened, for assertions."""
        return json.dumps(self.body)


def default_text(seen: Seen) -> str:
    return f"stand-in answer from {seen.body.get('model', seen.path)}"


class _Server(ThreadingHTTPServer):
    def handle_error(self, request: Any, client_address: Any) -> None:
        """Clients that hang up early (timeouts under test) are expected; stay quiet."""
        import sys

        if not isinstance(sys.exc_info()[1], ConnectionError):
            super().handle_error(request, client_address)


@dataclass
class StandIn:
    host: str = "127.0.0.1"
    port: int = 0
    latency: float = 0.0
    #: Seconds before each event of a streamed answer (a model decoding slowly).
    drip: float = 0.0
    responder: Callable[[Seen], str] = default_text
    #: Counts a prompt's tokens as a real server reports them (a tokenizer); None: words.
    counter: Callable[[str], int] | None = None
    script: list[Behaviour] = field(default_factory=list)
    #: Picks a behaviour per request (before the script); None falls through.
    chooser: Callable[[Seen], Behaviour | None] | None = None
    seen: list[Seen] = field(default_factory=list)
    #: Most requests answered at the same time, to check concurrency without timing.
    peak_in_flight: int = 0
    #: Pieces the last ``loop`` stream sent.
    loop_sent: int = 0
    #: What ``GET /v1/models`` lists (as Ollama, llama.cpp, vLLM and LM Studio answer).
    models: list[str] = field(default_factory=list)
    #: Keys a models list is given for (None: any, as a local server does).
    accepted_keys: set[str] | None = None

    def __post_init__(self) -> None:
        self._lock = threading.Lock()
        self._in_flight = 0
        standin = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"
            disable_nagle_algorithm = True  # headers and body go out in two writes

            def log_message(self, *args: Any) -> None:
                pass

            def do_GET(self) -> None:
                path = self.path.split("?")[0].rstrip("/")
                if not path.endswith(("/v1/models", "/v1beta/models")):
                    standin._send(self, 404, json.dumps({"error": {"message": "no route"}}))
                    return
                if standin.accepted_keys is not None and key_of(self) not in standin.accepted_keys:
                    standin._send(self, 401, json.dumps({"error": {"message": "bad key"}}))
                    return
                if path.endswith("/v1beta/models"):  # Gemini's shape
                    named = [{"name": f"models/{m}"} for m in standin.models]
                    standin._send(self, 200, json.dumps({"models": named}))
                    return
                rows = [{"id": m, "object": "model", "owned_by": "standin"} for m in standin.models]
                standin._send(self, 200, json.dumps({"object": "list", "data": rows}))

            def do_POST(self) -> None:
                with standin._lock:
                    standin._in_flight += 1
                    standin.peak_in_flight = max(standin.peak_in_flight, standin._in_flight)
                try:
                    standin._handle(self)
                finally:
                    with standin._lock:
                        standin._in_flight -= 1

        self.server = _Server((self.host, self.port), Handler)
        self.server.daemon_threads = True
        self.port = self.server.server_address[1]
        self._thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    @property
    def url(self) -> str:
        return f"http://{self.host}:{self.port}"

    def start(self) -> StandIn:
        self._thread.start()
        return self

    def stop(self) -> None:
        self.server.shutdown()
        self.server.server_close()

    def push(self, *behaviours: Behaviour) -> None:
        with self._lock:
            self.script.extend(behaviours)

    def _next(self) -> Behaviour:
        with self._lock:
            return self.script.pop(0) if self.script else Behaviour()

    def _handle(self, h: BaseHTTPRequestHandler) -> None:
        length = int(h.headers.get("content-length", 0))
        raw = h.rfile.read(length)
        try:
            body = json.loads(raw or b"{}")
        except json.JSONDecodeError:
            body = {}
        path = h.path
        if path.endswith("/chat/completions"):
            provider, stream = "openai", bool(body.get("stream"))
        elif path.endswith("/v1/messages"):
            provider, stream = "anthropic", bool(body.get("stream"))
        elif re.search(r"/v1beta/models/[^/]+:(stream)?[gG]enerateContent", path):
            provider, stream = "gemini", ":streamGenerateContent" in path
        else:
            self._send(h, 404, json.dumps({"error": {"message": f"no route {path}"}}))
            return
        seen = Seen(provider, path, {k.lower(): v for k, v in h.headers.items()}, body, stream)
        if self.counter is not None:
            seen.prompt_tokens = self.counter(seen.messages_text())
        with self._lock:
            self.seen.append(seen)
        b = (self.chooser and self.chooser(seen)) or self._next()
        if self.latency:
            time.sleep(self.latency)
        if b.delay:
            time.sleep(b.delay)
        if b.kind == "raw":
            self._send(h, b.status, b.body or "")
            return
        if b.kind == "status":
            headers = {"retry-after": b.retry_after} if b.retry_after is not None else {}
            err = b.body or json.dumps({"error": {"message": f"stand-in status {b.status}"}})
            self._send(h, b.status, err, headers)
            return
        text = b.text if b.text is not None else self.responder(seen)
        if stream and b.kind == "loop":
            self._send_loop(h, text)
            return
        if stream:
            events = _stream_events(provider, seen, text)
            if b.kind == "stream-cut":
                events = events[: max(1, len(events) // 2)]
            self._send_stream(h, events, cut=b.kind == "stream-cut", drip=self.drip)
            return
        payload = json.dumps(_json_reply(provider, seen, text))
        if b.kind == "cut":
            data = payload.encode()
            h.send_response(200)
            h.send_header("content-type", "application/json")
            h.send_header("content-length", str(len(data)))
            h.end_headers()
            h.wfile.write(data[: len(data) // 2])
            h.wfile.flush()
            h.close_connection = True
            return
        self._send(h, 200, payload)

    @staticmethod
    def _send(
        h: BaseHTTPRequestHandler, status: int, text: str, headers: dict[str, str] | None = None
    ) -> None:
        data = text.encode()
        h.send_response(status)
        h.send_header("content-type", "application/json")
        h.send_header("content-length", str(len(data)))
        for k, v in (headers or {}).items():
            h.send_header(k, v)
        h.end_headers()
        h.wfile.write(data)

    #: Lines a ``loop`` stream sends at most (a client that never hangs up still ends).
    LOOP_LINES = 20_000

    def _send_loop(self, h: BaseHTTPRequestHandler, text: str) -> None:
        """``text`` token by token, then its last line forever; ``loop_sent`` counts the
        pieces written before the client hung up."""
        line = text.rstrip("\n").rsplit("\n", 1)[-1] + "\n"
        h.send_response(200)
        h.send_header("content-type", "text/event-stream")
        h.send_header("connection", "close")
        h.end_headers()
        h.close_connection = True
        pieces = [*re.split(r"(?<= )", text)] + [line] * self.LOOP_LINES
        self.loop_sent = 0
        for piece in pieces:
            chunk = {"choices": [{"index": 0, "delta": {"content": piece}, "finish_reason": None}]}
            h.wfile.write(_sse({"id": "c", "object": "chat.completion.chunk", **chunk}).encode())
            h.wfile.flush()
            self.loop_sent += 1

    @staticmethod
    def _send_stream(
        h: BaseHTTPRequestHandler, events: list[str], cut: bool, drip: float = 0.0
    ) -> None:
        h.send_response(200)
        h.send_header("content-type", "text/event-stream")
        h.send_header("cache-control", "no-cache")
        h.send_header("connection", "close")
        h.end_headers()
        for ev in events:
            time.sleep(drip)
            h.wfile.write(ev.encode())
            h.wfile.flush()
        h.close_connection = True


def key_of(h: BaseHTTPRequestHandler) -> str:
    """The key a request carries, however its provider sends it."""
    bearer = h.headers.get("authorization", "").removeprefix("Bearer ")
    return bearer or h.headers.get("x-api-key", "") or h.headers.get("x-goog-api-key", "")


def _tokens(text: str) -> int:
    return max(1, len(text.split()))


def _prompt_tokens(seen: Seen) -> int:
    return seen.prompt_tokens if seen.prompt_tokens is not None else _tokens(seen.prompt())


def _json_reply(provider: str, seen: Seen, text: str) -> dict[str, Any]:
    pin, pout = _prompt_tokens(seen), _tokens(text)
    if provider == "openai":
        return {
            "id": "chatcmpl-standin",
            "object": "chat.completion",
            "created": int(time.time()),
            "model": seen.body.get("model", ""),
            "choices": [
                {
                    "index": 0,
                    "message": {"role": "assistant", "content": text},
                    "finish_reason": "stop",
                }
            ],
            "usage": {
                "prompt_tokens": pin,
                "completion_tokens": pout,
                "total_tokens": pin + pout,
                "prompt_tokens_details": {"cached_tokens": 0},
            },
        }
    if provider == "anthropic":
        return {
            "id": "msg_standin",
            "type": "message",
            "role": "assistant",
            "model": seen.body.get("model", ""),
            "content": [{"type": "text", "text": text}],
            "stop_reason": "end_turn",
            "stop_sequence": None,
            "usage": {
                "input_tokens": pin,
                "output_tokens": pout,
                "cache_creation_input_tokens": 0,
                "cache_read_input_tokens": 0,
            },
        }
    return {
        "candidates": [
            {
                "content": {"parts": [{"text": text}], "role": "model"},
                "finishReason": "STOP",
                "index": 0,
            }
        ],
        "usageMetadata": {
            "promptTokenCount": pin,
            "candidatesTokenCount": pout,
            "totalTokenCount": pin + pout,
        },
        "modelVersion": "standin",
    }


def _chunks(text: str, n: int = 3) -> list[str]:
    size = max(1, len(text) // n + 1)
    return [text[i : i + size] for i in range(0, len(text), size)] or [""]


def _sse(data: Any, event: str | None = None) -> str:
    head = f"event: {event}\n" if event else ""
    return f"{head}data: {json.dumps(data)}\n\n"


def _stream_events(provider: str, seen: Seen, text: str) -> list[str]:
    pin, pout = _prompt_tokens(seen), _tokens(text)
    parts = _chunks(text)
    if provider == "openai":
        evs = [
            _sse(
                {
                    "id": "c",
                    "object": "chat.completion.chunk",
                    "choices": [{"index": 0, "delta": {"role": "assistant", "content": ""}}],
                }
            )
        ]
        evs += [
            _sse(
                {
                    "id": "c",
                    "object": "chat.completion.chunk",
                    "choices": [{"index": 0, "delta": {"content": p}, "finish_reason": None}],
                }
            )
            for p in parts
        ]
        evs.append(
            _sse(
                {
                    "id": "c",
                    "object": "chat.completion.chunk",
                    "choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}],
                }
            )
        )
        evs.append(
            _sse(
                {
                    "id": "c",
                    "object": "chat.completion.chunk",
                    "choices": [],
                    "usage": {
                        "prompt_tokens": pin,
                        "completion_tokens": pout,
                        "total_tokens": pin + pout,
                    },
                }
            )
        )
        evs.append("data: [DONE]\n\n")
        return evs
    if provider == "anthropic":
        evs = [
            _sse(
                {
                    "type": "message_start",
                    "message": {
                        "id": "msg",
                        "type": "message",
                        "role": "assistant",
                        "content": [],
                        "model": seen.body.get("model", ""),
                        "stop_reason": None,
                        "usage": {"input_tokens": pin, "output_tokens": 1},
                    },
                },
                "message_start",
            ),
            _sse(
                {
                    "type": "content_block_start",
                    "index": 0,
                    "content_block": {"type": "text", "text": ""},
                },
                "content_block_start",
            ),
            'event: ping\ndata: {"type": "ping"}\n\n',
        ]
        evs += [
            _sse(
                {
                    "type": "content_block_delta",
                    "index": 0,
                    "delta": {"type": "text_delta", "text": p},
                },
                "content_block_delta",
            )
            for p in parts
        ]
        evs += [
            _sse({"type": "content_block_stop", "index": 0}, "content_block_stop"),
            _sse(
                {
                    "type": "message_delta",
                    "delta": {"stop_reason": "end_turn"},
                    "usage": {"output_tokens": pout},
                },
                "message_delta",
            ),
            _sse({"type": "message_stop"}, "message_stop"),
        ]
        return evs
    evs = []
    for i, p in enumerate(parts):
        cand: dict[str, Any] = {"content": {"parts": [{"text": p}], "role": "model"}, "index": 0}
        chunk: dict[str, Any] = {"candidates": [cand]}
        if i == len(parts) - 1:
            cand["finishReason"] = "STOP"
            chunk["usageMetadata"] = {
                "promptTokenCount": pin,
                "candidatesTokenCount": pout,
                "totalTokenCount": pin + pout,
            }
        evs.append(f"data: {json.dumps(chunk)}\r\n\r\n")
    return evs


if __name__ == "__main__":
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--port", type=int, default=0)
    ap.add_argument("--latency", type=float, default=0.0)
    args = ap.parse_args()
    s = StandIn(port=args.port, latency=args.latency).start()
    print(s.url, flush=True)
    try:
        threading.Event().wait()
    except KeyboardInterrupt:
        s.stop()
