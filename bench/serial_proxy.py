"""One address for several local OpenAI-compatible servers, answering one request at a time.

Two llama.cpp servers on the same 2 cores, each with 2 threads, slow each other down
many times over when both decode at once (measured: 0.4 tokens/s instead of 8). A
laptop has one CPU for all its local models, so the benchmarks put them behind this
proxy: requests go to the server named by their ``model`` and wait their turn, and
one whose client gave up while waiting is dropped unsent. Benchmarks only.

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


def gone(sock: socket.socket) -> bool:
    """Whether the client closed its end (readable with nothing to read)."""
    readable, _, _ = select.select([sock], [], [], 0)
    if not readable:
        return False
    try:
        return sock.recv(1, socket.MSG_PEEK) == b""
    except OSError:
        return True


def serve(port: int, routes: dict[str, str]) -> None:
    client = httpx.Client(timeout=httpx.Timeout(3600.0, connect=10.0))

    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def do_GET(self) -> None:  # /v1/models: the first server's answer will do
            self._relay("GET", next(iter(routes.values())), None)

        def do_POST(self) -> None:
            body = self.rfile.read(int(self.headers.get("Content-Length", 0)))
            try:
                model = json.loads(body).get("model", "")
            except ValueError:
                model = ""
            base = routes.get(model)
            if base is None:
                self._send(404, json.dumps({"error": f"no model {model!r}"}).encode())
                return
            with TURN:
                if gone(self.connection):
                    self.close_connection = True
                    return
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
    args = ap.parse_args()
    serve(args.port, dict(r.split("=", 1) for r in args.routes))


if __name__ == "__main__":
    main()
