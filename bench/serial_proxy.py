"""One address for several local OpenAI-compatible servers, answering one request at a time.

Two llama.cpp servers on the same 2 cores, each with 2 threads, slow each other down
many times over when both decode at once (measured: 0.4 tokens/s instead of 8). A
laptop has one CPU for all its local models, so the benchmarks put them behind this
proxy: requests go to the server named by their ``model`` and wait their turn, and
one whose client gave up while waiting is dropped unsent. Benchmarks only.

A request whose messages are exactly the last ones its server answered gets a
different answer from llama-cpp-python's server, greedy or not: the whole prompt is
then in its cache, so it evaluates the last prompt token again on its own, and the
logits differ from those of the first time, when that token was evaluated in a batch
with the others (seen on bench/tasks: the same request green alone, red as the first
step of a shape right after). A recording then holds two verdicts for one request. So
before such a repeat the proxy sends its server a one-token request with other text,
and the repeat is evaluated as the first one was (``--keep-repeats`` turns this off,
as recordings made before 2026-12-07 ran).

    python bench/serial_proxy.py --port 8100 big=http://127.0.0.1:8101 small=http://127.0.0.1:8102
"""

from __future__ import annotations

import argparse
import json
import select
import socket
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import httpx

TURN = threading.Lock()
FLUSH = {"messages": [{"role": "user", "content": "."}], "max_tokens": 1, "temperature": 0.0}


def prompt_key(payload: object) -> str | None:
    """What decides a request's prompt tokens, or None for a body that is not a request."""
    if not isinstance(payload, dict):
        return None
    return json.dumps([payload.get("messages"), payload.get("prompt")], sort_keys=True)


def gone(sock: socket.socket) -> bool:
    """Whether the client closed its end (readable with nothing to read)."""
    readable, _, _ = select.select([sock], [], [], 0)
    if not readable:
        return False
    try:
        return sock.recv(1, socket.MSG_PEEK) == b""
    except OSError:
        return True


def serve(port: int, routes: dict[str, str], flush_repeats: bool = True) -> None:
    client = httpx.Client(timeout=httpx.Timeout(3600.0, connect=10.0))
    last: dict[str, str | None] = {}  # server -> key of the last prompt it answered

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
                key = prompt_key(payload)
                if flush_repeats and key is not None and last.get(base) == key:
                    flush = dict(FLUSH, model=model)
                    client.post(base + "/v1/chat/completions", json=flush)
                last[base] = key
                self._relay("POST", base, body)

        def _relay(self, method: str, base: str, body: bytes | None) -> None:
            headers = {"Content-Type": "application/json"}
            resp = client.request(method, base + self.path, content=body, headers=headers)
            self._send(resp.status_code, resp.content)

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
        help="send a repeated prompt straight on (cached whole: may answer differently)",
    )
    args = ap.parse_args()
    serve(args.port, dict(r.split("=", 1) for r in args.routes), not args.keep_repeats)


if __name__ == "__main__":
    main()
