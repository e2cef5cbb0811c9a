"""``init``'s probe of a local server against hostile answers: each ends within its
deadline with no models or a few printable ones, never a traceback or a pile of memory."""

from __future__ import annotations

import gzip
import json
import threading
import time
from collections.abc import Callable, Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest
from helpers import WAIT

from conductor_lsp.configure.discover import MAX_MODELS, served

Answer = Callable[[BaseHTTPRequestHandler], None]


def _send(handler: BaseHTTPRequestHandler, body: bytes, **headers: str) -> None:
    handler.send_response(200)
    handler.send_header("Content-Type", "application/json")
    for k, v in headers.items():
        handler.send_header(k.replace("_", "-"), v)
    handler.send_header("Content-Length", str(len(body)))
    handler.end_headers()
    try:
        handler.wfile.write(body)
    except (BrokenPipeError, ConnectionResetError):
        pass


def deep(h: BaseHTTPRequestHandler) -> None:
    _send(h, b'{"data": ' + b"[" * 100_000 + b"]" * 100_000 + b"}")


def surrogate(h: BaseHTTPRequestHandler) -> None:
    _send(h, b'{"data": [{"id": "qwen\\ud800coder"}, {"id": "ok-model"}]}')


def drip(h: BaseHTTPRequestHandler) -> None:
    h.send_response(200)
    h.send_header("Content-Type", "application/json")
    h.end_headers()
    try:
        for byte in b'{"data": [{"id": "slow"}]}' * 100:
            h.wfile.write(bytes([byte]))
            h.wfile.flush()
            time.sleep(0.5)
    except (BrokenPipeError, ConnectionResetError):
        pass


def huge(h: BaseHTTPRequestHandler) -> None:
    _send(h, b'{"data": [{"id": "' + b"x" * 20_000_000 + b'"}]}')


def bomb(h: BaseHTTPRequestHandler) -> None:
    inner = b'{"data": [{"id": "' + b"0" * 50_000_000 + b'"}]}'
    _send(h, gzip.compress(inner, 9), Content_Encoding="gzip")


def many(h: BaseHTTPRequestHandler) -> None:
    _send(h, json.dumps({"data": [{"id": f"m{i}"} for i in range(100_000)]}).encode())


@pytest.fixture
def server() -> Iterator[Callable[[Answer], str]]:
    servers: list[ThreadingHTTPServer] = []

    def start(answer: Answer) -> str:
        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:
                answer(self)

            def log_message(self, *args: object) -> None:
                pass

        s = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        s.daemon_threads = True
        threading.Thread(target=s.serve_forever, daemon=True).start()
        servers.append(s)
        return f"http://127.0.0.1:{s.server_address[1]}/v1"

    yield start
    for s in servers:
        s.shutdown()
        s.server_close()


@pytest.mark.parametrize(
    ("answer", "expected"),
    [
        (deep, []),
        (surrogate, ["qwen\\ud800coder", "ok-model"]),
        (drip, []),
        (huge, []),
        (bomb, []),
        (many, [f"m{i}" for i in range(MAX_MODELS)]),
    ],
    ids=["deep", "surrogate", "drip", "huge", "gzip-bomb", "many"],
)
async def test_a_hostile_server_gives_a_clear_small_answer_in_time(
    server: Callable[[Answer], str], answer: Answer, expected: list[str]
) -> None:
    url = server(answer)
    t0 = time.monotonic()
    found = await served({"hostile": url}, timeout=2.0)
    assert time.monotonic() - t0 < WAIT / 2  # the drip alone would take 650 s
    assert [f.model for f in found] == expected
    for f in found:
        f.model.encode("utf-8")  # printable and writable
