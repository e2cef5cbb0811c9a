"""One address for several local OpenAI-compatible servers, answering one request at a time.

Two llama.cpp servers on the same 2 cores, each with 2 threads, slow each other down
many times over when both decode at once (measured: 0.4 tokens/s instead of 8). A
laptop has one CPU for all its local models, so the benchmarks put them behind this
proxy: requests go to the server named by their ``model`` and wait their turn, and
one whose client gave up while waiting is dropped unsent. Benchmarks only.

The same greedy request does not always get the same answer from llama-cpp-python's
server: it reuses the longest prompt prefix it holds from the last request and
evaluates only the rest, and the logits of a token evaluated alone or in a short batch
differ from those of the same token in a long one. Seen on the eval's recordings: a
shape's first step sends the worker-alone request, yet was red where the worker alone
was green (5 of the 55 tasks recorded under every shape by 2026-12-07); a whole prompt
already in the cache (the same request twice in a row) got a different answer the
second time. A replay takes one request's verdict as one fact, so the proxy answers a
greedy request (``temperature`` 0) it has answered before with the first answer, after
waiting as long as the first took (the eval's seconds stay what a live call costs).
``--keep-repeats`` sends every request on, as recordings made before 2026-12-07 ran.

That makes one recording agree with itself, not two recordings with each other: a
request's first answer still depends on how much of the previous request's prompt it
shares (re-recorded on 2026-12-07, big alone on ``fibonacci`` was green where it had been
red). ``--fresh`` sends each server a one-token request of other text before each request
it relays, so every prompt is evaluated whole, as if nothing came before: slower (no
prompt prefix is reused: 1.4-1.6x the seconds here), and each request's answer a
function of its body alone (two ``--fresh`` recordings of 40 requests: 0 answers
differed; either against one that reused prefixes: 12, with 2 verdicts).

    python bench/serial_proxy.py --port 8100 big=http://127.0.0.1:8101 small=http://127.0.0.1:8102
"""

from __future__ import annotations

import argparse
import json
import select
import socket
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import httpx

TURN = threading.Lock()
#: What ``--fresh`` sends before a request: its prompt shares only the chat template's start.
FLUSH = {"messages": [{"role": "user", "content": "."}], "max_tokens": 1, "temperature": 0.0}


def greedy_key(path: str, payload: object) -> str | None:
    """The key of a request whose answer is a function of its path and body, else None."""
    if not isinstance(payload, dict) or payload.get("temperature") not in (0, 0.0):
        return None
    if payload.get("stream"):
        return None
    return path + " " + json.dumps(payload, sort_keys=True)


def gone(sock: socket.socket) -> bool:
    """Whether the client closed its end (readable with nothing to read)."""
    readable, _, _ = select.select([sock], [], [], 0)
    if not readable:
        return False
    try:
        return sock.recv(1, socket.MSG_PEEK) == b""
    except OSError:
        return True


def serve(port: int, routes: dict[str, str], once: bool = True, fresh: bool = False) -> None:
    client = httpx.Client(timeout=httpx.Timeout(3600.0, connect=10.0))
    answered: dict[str, tuple[float, int, bytes]] = {}  # key -> seconds, status, body

    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def do_GET(self) -> None:  # /v1/models: the first server's answer will do
            self._relay("GET", next(iter(routes.values())), None)

        def do_POST(self) -> None:
            body = self.rfile.read(int(self.headers.get("Content-Length", 0)))
            try:
                payload = json.loads(body)
            except ValueError:
                payload = None
            model = payload.get("model", "") if isinstance(payload, dict) else ""
            base = routes.get(model)
            if base is None:
                self._send(404, json.dumps({"error": f"no model {model!r}"}).encode())
                return
            with TURN:
                if gone(self.connection):
                    self.close_connection = True
                    return
                key = greedy_key(self.path, payload) if once else None
                if key is not None and key in answered:
                    seconds, status, data = answered[key]
                    time.sleep(seconds)
                    self._send(status, data)
                    return
                if fresh:
                    client.post(base + "/v1/chat/completions", json=dict(FLUSH, model=model))
                t0 = time.monotonic()
                status, data = self._relay("POST", base, body)
                if key is not None and status == 200:
                    answered[key] = (time.monotonic() - t0, status, data)

        def _relay(self, method: str, base: str, body: bytes | None) -> tuple[int, bytes]:
            headers = {"Content-Type": "application/json"}
            resp = client.request(method, base + self.path, content=body, headers=headers)
            self._send(resp.status_code, resp.content)
            return resp.status_code, resp.content

        def _send(self, status: int, data: bytes) -> None:
            try:
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)
            except OSError:
                self.close_connection = True

        def log_message(self, *args: object) -> None:
            return None

    ThreadingHTTPServer(("127.0.0.1", port), Handler).serve_forever()


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--port", type=int, default=8100)
    ap.add_argument("routes", nargs="+", help="MODEL=BASE_URL (the server's root)")
    ap.add_argument(
        "--keep-repeats",
        action="store_true",
        help="send a repeated greedy request on to its server (may answer differently)",
    )
    ap.add_argument(
        "--fresh",
        action="store_true",
        help="evaluate every prompt whole (no prefix reused from the request before)",
    )
    args = ap.parse_args()
    routes = dict(r.split("=", 1) for r in args.routes)
    serve(args.port, routes, not args.keep_repeats, args.fresh)


if __name__ == "__main__":
    main()
