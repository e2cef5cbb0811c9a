"""Stdio for the MCP door, with one guard the SDK lacks: mcp 2.3.0 reads each line as a
JSON-RPC message and, when a request's ``params`` is not an object (a string, a list,
a number), drops it without an answer, so the client waits forever. The guard answers
such a request itself (JSON-RPC "invalid params", with its id) through the SDK's own
writer, and passes every other line on untouched."""

from __future__ import annotations

import io
import json
import sys
from collections.abc import AsyncIterator
from typing import Any

import anyio
from mcp.server.stdio import stdio_server
from mcp.shared.message import SessionMessage
from mcp.types import INVALID_PARAMS, ErrorData, JSONRPCError

#: What a request's params may be (JSON-RPC 2.0 also allows an array; MCP never sends one).
WHY = "params must be an object (MCP sends named parameters)"


def unanswered_id(line: str) -> str | int | None:
    """The id of a request the SDK would drop unanswered (None: pass the line on)."""
    try:
        message = json.loads(line)
    except ValueError:
        return None
    if not isinstance(message, dict) or "method" not in message:
        return None
    key = message.get("id")
    if not isinstance(key, str | int) or isinstance(key, bool):
        return None
    params = message.get("params", {})
    return None if isinstance(params, dict) else key


class GuardedStdin:
    """The lines of standard input, less the requests answered here."""

    def __init__(self, raw: Any) -> None:
        self.raw = raw
        self.write: Any = None  # the SDK's write stream, set once it exists

    def __aiter__(self) -> AsyncIterator[str]:
        return self._lines()

    async def _lines(self) -> AsyncIterator[str]:
        async for line in self.raw:
            key = unanswered_id(line)
            if key is None or self.write is None:
                yield line
                continue
            error = ErrorData(code=INVALID_PARAMS, message=WHY)
            await self.write.send(SessionMessage(JSONRPCError(jsonrpc="2.0", id=key, error=error)))


async def serve_stdio(server: Any) -> None:
    """``server`` (the SDK's MCPServer) over stdio with the guard. Uses the SDK's
    low-level server as its own ``run_stdio_async`` does (mcp 2.3.0)."""
    text = io.TextIOWrapper(sys.stdin.buffer, encoding="utf-8", errors="replace")
    stdin = GuardedStdin(anyio.wrap_file(text))
    async with stdio_server(stdin=stdin) as (read_stream, write_stream):  # type: ignore[arg-type]
        stdin.write = write_stream
        low = server._lowlevel_server
        await low.run(read_stream, write_stream, low.create_initialization_options())
