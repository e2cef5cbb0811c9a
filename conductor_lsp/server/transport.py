"""Reading JSON-RPC off the wire without trusting it.

pygls's own reader lets a few bad messages end the server or go unanswered: a
``Content-Length`` too big to allocate (or to convert), a body that is not JSON, a
request whose params do not fit its method. Here every request with an id gets a
response (``ParseError``, ``InvalidRequest``, ``InvalidParams`` with their codes),
oversized messages are refused without reading them into memory, and the reader
finds the next header after garbage, also when a wrong ``Content-Length`` swallowed part
of it: a body whose JSON value ends before its announced length gives the rest back to
the stream, where the next header is read again.

This loop is the server's only reader (``ConductorServer.serve_stdio`` and
``start_tcp`` run it), so it is also where ``$/cancelRequest`` reaches the job the
request started: pygls cancels only a request still waiting to run. It uses pygls's
public surface alone (``structure_message``, ``handle_message``, the protocol's
``writer``), checked against pygls 2.1.1 by ``tests/server/test_jsonrpc.py``.
"""

from __future__ import annotations

import asyncio
import json
import logging
import re
import threading
from collections.abc import Awaitable, Callable
from typing import Any, Protocol

import cattrs
from lsprotocol.types import CANCEL_REQUEST
from pygls.exceptions import (
    JsonRpcException,
    JsonRpcInvalidParams,
    JsonRpcInvalidRequest,
    JsonRpcParseError,
)
from pygls.protocol import JsonRPCProtocol

log = logging.getLogger("conductor_lsp.server")

#: The largest message accepted; a bigger one is refused unread (editors send far less).
MAX_MESSAGE_BYTES = 64 * 1024 * 1024
#: A header line longer than this is garbage, not a header.
MAX_HEADER_BYTES = 8 * 1024
_HEADER = re.compile(rb"Content-Length:[ \t]*(\d+)[ \t]*\r?\n?$", re.I)


class Reader(Protocol):
    def readline(self) -> Awaitable[bytes]: ...

    def readexactly(self, n: int) -> Awaitable[bytes]: ...


def _header(line: bytes) -> int | None:
    """The length a ``Content-Length`` header announces, anywhere in the line (after garbage,
    the next message's header may share a line with it); -1 when it is too big."""
    at = line.find(b"Content-Length:")
    if at < 0:
        at = line.lower().find(b"content-length:")
    if at < 0:
        return None
    m = _HEADER.match(line[at:])
    if not m:
        return None
    digits = m.group(1)
    if len(digits) > 12 or int(digits) > MAX_MESSAGE_BYTES:
        return -1
    return int(digits)


class Rewindable:
    """A reader that takes back what was read too far (the start of the next message)."""

    def __init__(self, reader: Reader) -> None:
        self.reader = reader
        self.buffer = b""

    def unread(self, data: bytes) -> None:
        self.buffer = data + self.buffer

    async def readline(self) -> bytes:
        if not self.buffer:
            return await self.reader.readline()
        end = self.buffer.find(b"\n")
        if end >= 0:
            line, self.buffer = self.buffer[: end + 1], self.buffer[end + 1 :]
            return line
        line, self.buffer = self.buffer, b""
        return line + await self.reader.readline()

    async def readexactly(self, n: int) -> bytes:
        take, self.buffer = self.buffer[:n], self.buffer[n:]
        return take + (await self.reader.readexactly(n - len(take)) if len(take) < n else b"")


def split_body(body: bytes) -> tuple[bytes, bytes]:
    """(the message, what belongs to the stream after it): a ``Content-Length`` larger than
    its message swallows the start of the next header, which must be read again."""
    try:
        text = body.decode("utf-8")
        value_end = json.JSONDecoder().raw_decode(text.lstrip())[1] + len(text) - len(text.lstrip())
    except (ValueError, RecursionError):
        at = body.find(b"Content-Length:")
        return (body[:at], body[at:]) if at > 0 else (body, b"")
    rest = text[value_end:]
    if not rest.strip():
        return body, b""
    used = len(text[:value_end].encode("utf-8"))
    return body[:used], body[used:].lstrip()


async def read_messages(
    stop: threading.Event,
    reader: Reader,
    protocol: JsonRPCProtocol,
    on_error: Callable[[Exception, Any], Any],
    on_cancel: Callable[[str | int], None] = lambda msg_id: None,
) -> None:
    """The server's main loop: read framed messages and hand them on, whatever comes;
    ``on_cancel`` hears each ``$/cancelRequest`` with a valid id, before pygls does."""
    reader = Rewindable(reader)
    length: int | None = None
    while not stop.is_set():
        line = await reader.readline()
        if not line:
            break
        announced = _header(line[-MAX_HEADER_BYTES:])
        if announced == -1:
            log.error("refused a message: its Content-Length is over %d bytes", MAX_MESSAGE_BYTES)
            length = None
            continue
        if announced is not None:
            length = announced
            continue
        if length is None or line.strip():
            continue  # another header (Content-Type), or garbage before the next header
        try:
            body = await reader.readexactly(length) if length else b""
        except asyncio.IncompleteReadError:
            break  # the stream ended inside a message
        length = None
        body, rest = split_body(body)
        reader.unread(rest)
        if not body.strip():
            continue
        try:
            handle_body(protocol, body, on_cancel)
        except Exception as e:  # the loop must outlive any one message
            log.exception("could not handle a message")
            on_error(e, JsonRpcException)


def handle_body(
    protocol: JsonRPCProtocol,
    body: bytes,
    on_cancel: Callable[[str | int], None] = lambda msg_id: None,
) -> None:
    """Check one message's envelope, structure it, and hand it to the protocol; a request
    that cannot be handled is answered with the proper JSON-RPC error."""
    try:
        raw = json.loads(body)
    except (ValueError, RecursionError) as e:
        reply(protocol, None, JsonRpcParseError(f"Parse error: the message is not JSON: {e}"))
        return
    if not isinstance(raw, dict):
        reply(protocol, None, JsonRpcInvalidRequest("Invalid Request: a message is a JSON object"))
        return
    msg_id = raw.get("id")
    if "id" in raw and not (msg_id is None or isinstance(msg_id, str) or type(msg_id) is int):
        reply(
            protocol, None, JsonRpcInvalidRequest("Invalid Request: id must be a string or number")
        )
        return
    method = raw.get("method")
    is_request = "id" in raw and "method" in raw
    if ("method" in raw and not isinstance(method, str)) or raw.get("jsonrpc") != "2.0":
        if is_request or ("result" not in raw and "error" not in raw):
            reply(
                protocol,
                msg_id if is_request else None,
                JsonRpcInvalidRequest("Invalid Request: a JSON-RPC 2.0 request has a method"),
            )
        return
    try:
        message = json.loads(body, object_hook=protocol.structure_message)
    except (JsonRpcException, cattrs.BaseValidationError, TypeError, ValueError) as e:
        detail = _detail(e)
        log.warning("bad params for %s: %s", method, detail)
        if is_request:
            reply(protocol, msg_id, JsonRpcInvalidParams(f"Invalid Params for {method}: {detail}"))
        return
    if method == CANCEL_REQUEST:
        msg_id = getattr(getattr(message, "params", None), "id", None)
        if not (isinstance(msg_id, str) or type(msg_id) is int):  # {} is no id (unhashable)
            log.warning("$/cancelRequest with an invalid id: %r", msg_id)
            return
        on_cancel(msg_id)
    protocol.handle_message(message)


def _detail(error: BaseException) -> str:
    cause = error.__cause__ or error
    if isinstance(cause, cattrs.BaseValidationError):
        return "; ".join(cattrs.transform_error(cause))[:500]
    return str(cause)[:500] or type(cause).__name__


def reply(protocol: JsonRPCProtocol, msg_id: Any, error: JsonRpcException) -> None:
    """Answer with ``error``, framed as pygls frames its own, through the protocol's writer."""
    payload: dict[str, Any] = {"code": error.code, "message": error.message}
    if error.data is not None:
        payload["data"] = error.data
    body = json.dumps({"jsonrpc": "2.0", "id": msg_id, "error": payload}).encode()
    kind = f"{protocol.CONTENT_TYPE}; charset={protocol.CHARSET}"
    head = f"Content-Length: {len(body)}\r\nContent-Type: {kind}\r\n\r\n".encode()
    if protocol.writer is None:
        log.error("no writer to answer %r with: %s", msg_id, error.message)
        return
    protocol.writer.write(head + body)  # stdio and TCP writers write at once
