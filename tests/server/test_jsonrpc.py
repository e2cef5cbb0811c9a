"""Hostile JSON-RPC: every request gets an answer with the right code, and the server lives.

The real server runs over stdio for the examples; the framing property test feeds the
server's own reader loop in process (a real protocol, a real converter), so hundreds of
generated streams stay fast.
"""

from __future__ import annotations

import asyncio
import json
import subprocess
import threading
from pathlib import Path
from typing import Any

from helpers import WAIT
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from lsp_editor import SERVER

from conductor_lsp.server import create_server
from conductor_lsp.server.transport import MAX_MESSAGE_BYTES, read_messages

INIT = {"processId": None, "rootUri": None, "capabilities": {}}


def frame(obj: object) -> bytes:
    body = obj if isinstance(obj, bytes) else json.dumps(obj).encode()
    return b"Content-Length: %d\r\n\r\n" % len(body) + body


def content_length(head: bytes) -> int:
    for line in head.split(b"\r\n"):
        name, _, value = line.partition(b":")
        if name.strip().lower() == b"content-length":
            return int(value)
    raise AssertionError(f"no Content-Length in {head!r}")


class Wire:
    """The real server in a subprocess, spoken to in raw bytes."""

    def __init__(self, cwd: Path) -> None:
        self.proc = subprocess.Popen(
            SERVER,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            cwd=cwd,
        )
        self.buffer = b""

    def send(self, data: bytes) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.write(data)
        self.proc.stdin.flush()

    def request(self, msg_id: Any, method: str, params: Any) -> None:
        self.send(frame({"jsonrpc": "2.0", "id": msg_id, "method": method, "params": params}))

    def reply(self, msg_id: Any, timeout: float = WAIT) -> dict[str, Any]:
        """The next response with ``msg_id`` (other messages are skipped)."""
        assert self.proc.stdout is not None
        while True:
            while b"\r\n\r\n" not in self.buffer:
                self._read(timeout)
            head, _, rest = self.buffer.partition(b"\r\n\r\n")
            length = content_length(head)
            while len(rest) < length:
                self._read(timeout)
                head, _, rest = self.buffer.partition(b"\r\n\r\n")
            message = json.loads(rest[:length])
            self.buffer = rest[length:]
            if "method" not in message and message.get("id") == msg_id:
                return message

    def _read(self, timeout: float) -> None:
        done: list[bytes] = []
        t = threading.Thread(target=lambda: done.append(self.proc.stdout.read1(65536)))  # type: ignore[union-attr]
        t.start()
        t.join(timeout)
        assert done and done[0], "the server died or went silent"
        self.buffer += done[0]

    def close(self) -> None:
        self.proc.kill()
        self.proc.wait()


def test_every_bad_request_gets_its_error_and_the_server_lives(tmp_path: Path) -> None:
    wire = Wire(tmp_path)
    try:
        wire.request(1, "initialize", "wrong")
        assert wire.reply(1)["error"]["code"] == -32602
        wire.request(2, "initialize", {**INIT, "rootUri": tmp_path.as_uri()})
        assert "capabilities" in wire.reply(2)["result"]
        uri = (tmp_path / "a.py").as_uri()
        ctx = {"diagnostics": []}
        doc = {"uri": uri}
        start = {"line": 0, "character": 0}
        negative = {"start": {"line": -1, "character": 0}, "end": start}
        for msg_id, params in [
            (3, None),
            (4, 5),
            (5, {"textDocument": doc, "range": {"start": start}, "context": ctx}),
            (6, {"textDocument": doc, "range": negative, "context": ctx}),
        ]:
            wire.request(msg_id, "textDocument/codeAction", params)
            error = wire.reply(msg_id)["error"]
            assert error["code"] == -32602 and "codeAction" in error["message"], error
        wire.send(frame(b'{"jsonrpc": "2.0", "id": 7, "method": "shutdown"'))  # cut JSON
        assert wire.reply(None)["error"]["code"] == -32700
        wire.send(frame([{"jsonrpc": "2.0", "id": 8, "method": "shutdown"}]))  # a batch
        assert wire.reply(None)["error"]["code"] == -32600
        wire.send(frame({"jsonrpc": "2.0", "id": {}, "method": "shutdown"}))
        assert wire.reply(None)["error"]["code"] == -32600
        wire.send(frame({"jsonrpc": "2.0", "method": "$/cancelRequest", "params": {"id": {}}}))
        wire.send(b"Content-Length: 999999999999999999999999999\r\n\r\n{}")  # 27 digits
        wire.send(b"Content-Length: 9000000000\r\n\r\n{}")  # merely huge
        wire.send(b"garbage without a header\r\n")
        empty = {"start": start, "end": start}
        wire.request(
            9, "textDocument/codeAction", {"textDocument": doc, "range": empty, "context": ctx}
        )
        result = wire.reply(9)["result"]
        assert any(a["title"] == "Conductor: make the tests pass" for a in result)
    finally:
        wire.close()


def test_a_frame_whose_length_overruns_its_body_does_not_cost_the_next_request(
    tmp_path: Path,
) -> None:
    """Two spaces and a stray CRLF after the body: the announced 12 bytes swallow the start
    of the next header. The reader gives them back and the next request is answered."""
    wire = Wire(tmp_path)
    try:
        wire.request(1, "initialize", {**INIT, "rootUri": tmp_path.as_uri()})
        assert "capabilities" in wire.reply(1)["result"]
        start = {"line": 0, "character": 0}
        params = {
            "textDocument": {"uri": (tmp_path / "a.py").as_uri()},
            "range": {"start": start, "end": start},
            "context": {"diagnostics": []},
        }
        for msg_id, odd in [
            (2, b"Content-Length:  12\r\n\r\n{}\r\n\r\n"),
            (3, b"Content-Length: 40\r\n\r\nnot json\r\n"),
            (4, b'Content-Length: 30\r\n\r\n{"jsonrpc": "2.0"}'),
        ]:
            wire.send(odd)
            wire.request(msg_id, "textDocument/codeAction", params)
            result = wire.reply(msg_id)["result"]
            assert any(a["title"] == "Conductor: make the tests pass" for a in result), odd
    finally:
        wire.close()


# --- the framing, as a property ---------------------------------------------------------

VALID = {"jsonrpc": "2.0", "id": "probe", "method": "shutdown"}
messages = st.one_of(
    st.binary(max_size=64),
    st.builds(frame, st.binary(max_size=64)),
    st.builds(
        frame,
        st.dictionaries(
            st.sampled_from(["jsonrpc", "id", "method", "params"]),
            st.one_of(st.none(), st.integers(), st.text(max_size=8), st.just({}), st.just([])),
            max_size=4,
        ),
    ),
    st.builds(
        lambda n: b"Content-Length: %d\r\n\r\n" % n,
        st.one_of(st.integers(0, 64), st.integers(MAX_MESSAGE_BYTES + 1, 10**30)),
    ),
    st.builds(
        lambda s: frame(
            {"jsonrpc": "2.0", "id": s, "method": "textDocument/codeAction", "params": s}
        ),
        st.one_of(st.integers(), st.text(max_size=5), st.none()),
    ),
)


class Capture:
    def __init__(self) -> None:
        self.data = b""

    def write(self, data: bytes) -> None:
        self.data += data

    def close(self) -> None:
        pass


def replies(data: bytes) -> list[dict[str, Any]]:
    out = []
    while data:
        head, _, rest = data.partition(b"\r\n\r\n")
        length = content_length(head)
        out.append(json.loads(rest[:length]))
        data = rest[length:]
    return out


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(messages, max_size=6))
def test_after_any_stream_a_well_formed_request_is_answered(stream: list[bytes]) -> None:
    server = create_server()
    out = Capture()
    server.protocol.set_writer(out)  # type: ignore[arg-type]
    errors: list[Exception] = []

    async def run() -> None:
        reader = asyncio.StreamReader()
        # Whatever came before (a pending body takes at most 64 bytes of the padding), a
        # well-formed message after it is understood.
        padding = b" " * 70 + b"\r\n\r\n"
        reader.feed_data(b"".join(stream) + padding + frame(VALID) + frame(VALID))
        reader.feed_eof()
        await asyncio.wait_for(
            read_messages(
                threading.Event(), reader, server.protocol, lambda e, s: errors.append(e)
            ),
            10,
        )

    asyncio.run(run())
    assert errors == []
    answered = [r for r in replies(out.data) if r.get("id") == "probe"]
    assert answered, out.data[-300:]
