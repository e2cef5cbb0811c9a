"""Requests the mcp SDK (2.3.0) drops without an answer, a ``params`` that is a string or
a list, get a JSON-RPC error with their id from the door's guard; the session goes on."""

from __future__ import annotations

import json
import queue
import subprocess
import sys
import threading
from pathlib import Path
from typing import Any

import pytest
from helpers import WAIT

pytest.importorskip("mcp")
from conductor_lsp.mcp_server.transport import unanswered_id


def test_which_requests_the_guard_answers() -> None:
    assert unanswered_id('{"jsonrpc":"2.0","id":7,"method":"tools/call","params":"x"}') == 7
    assert unanswered_id('{"jsonrpc":"2.0","id":"a","method":"m","params":[1]}') == "a"
    assert unanswered_id('{"jsonrpc":"2.0","id":1,"method":"m","params":{}}') is None
    assert unanswered_id('{"jsonrpc":"2.0","id":1,"method":"m"}') is None
    assert unanswered_id('{"jsonrpc":"2.0","method":"notify","params":"x"}') is None
    assert unanswered_id("not json") is None


def test_a_request_with_odd_params_is_answered_and_the_session_goes_on(tmp_path: Path) -> None:
    proc = subprocess.Popen(
        [sys.executable, "-m", "conductor_lsp.cli", "mcp", str(tmp_path)],
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True,
    )  # fmt: skip
    lines: queue.Queue[str] = queue.Queue()
    threading.Thread(target=lambda: [lines.put(x) for x in proc.stdout], daemon=True).start()  # type: ignore[union-attr]

    def send(message: dict[str, Any]) -> None:
        proc.stdin.write(json.dumps(message) + "\n")  # type: ignore[union-attr]
        proc.stdin.flush()  # type: ignore[union-attr]

    def answer(key: object) -> dict[str, Any]:
        while True:
            got = json.loads(lines.get(timeout=WAIT))
            if got.get("id") == key:
                return dict(got)

    try:
        send({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
            "protocolVersion": "2025-06-18", "capabilities": {},
            "clientInfo": {"name": "test", "version": "0"}}})  # fmt: skip
        assert "result" in answer(1)
        send({"jsonrpc": "2.0", "method": "notifications/initialized"})
        for key, params in ((7, "a string"), ("eight", [1, 2]), (9, 3)):
            send({"jsonrpc": "2.0", "id": key, "method": "tools/call", "params": params})
            got = answer(key)
            assert got["error"]["code"] == -32602 and "params" in got["error"]["message"]
        send({"jsonrpc": "2.0", "id": 10, "method": "tools/list", "params": {}})
        names = {t["name"] for t in answer(10)["result"]["tools"]}
        assert {"fix", "plan", "undo", "candidates"} <= names
    finally:
        proc.kill()
        proc.wait()
