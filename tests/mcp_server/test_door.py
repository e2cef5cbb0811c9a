"""The MCP door through the SDK's own client over stdio: a repository with a failing test,
loopback workers, and the agent's calls: ``fix`` (green, one write, a checkpoint, progress
as it goes), ``candidates``, ``undo`` (the start back), and the workspace rules."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import pytest
from helpers import BUGGY, FIXED, GOOD, TEST_COMMAND, coder_workspace
from standin import StandIn

from conductor_lsp.version import __version__

pytest.importorskip("mcp")
from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client


def payload(result: Any) -> dict[str, Any]:
    assert not result.is_error, result.content
    if result.structured_content:
        return dict(result.structured_content.get("result", result.structured_content))
    return dict(json.loads(result.content[0].text))


async def test_an_agent_fixes_a_repository_and_undoes_it(tmp_path: Path) -> None:
    standin = StandIn().start()
    standin.responder = lambda seen: GOOD
    ws = coder_workspace(tmp_path / "ws", standin.url)
    (ws / "notes.txt").write_text("the user's own work, not committed\n")
    params = StdioServerParameters(
        command=sys.executable, args=["-m", "conductor_lsp.cli", "mcp", str(ws)], cwd=str(ws)
    )
    progress: list[str] = []

    async def on_progress(done: float, total: float | None, message: str | None) -> None:
        progress.append(message or "")

    try:
        async with stdio_client(params) as (read, write), ClientSession(read, write) as mcp:
            hello = await mcp.initialize()
            assert hello.server_info.name == "conductor-lsp"
            assert hello.server_info.version == __version__
            names = {t.name for t in (await mcp.list_tools()).tools}
            assert names == {"fix", "plan", "undo", "candidates"}
            result = await mcp.call_tool(
                "fix", {"test": TEST_COMMAND, "budget_usd": 1.0}, progress_callback=on_progress
            )
            fixed = payload(result)
            assert fixed["passed"] is True and fixed["written"] == ["calc.py"]
            # What the tests said, as the command line says it: counts and names.
            assert fixed["tests"] == "1 failing -> green"
            before, after = fixed["tests_before"], fixed["tests_after"]
            assert before["failing"] == 1 and before["failing_tests"] == ["test_calc.py::test_add"]
            assert after["passed"] is True and after["failing_tests"] == []
            assert "+    return a + b" in fixed["diff"] and fixed["checkpoint"]
            assert fixed["cost"] > 0
            assert (ws / "calc.py").read_text() == FIXED
            assert any("candidate" in line for line in progress)  # reported as it went
            seen = payload(await mcp.call_tool("candidates", {}))
            assert seen["candidates"][0]["green"] is True
            outside = await mcp.call_tool("fix", {"path": "..", "test": TEST_COMMAND})
            assert outside.is_error and "outside the workspace" in outside.content[0].text
            undone = payload(await mcp.call_tool("undo", {}))
            assert undone["restored"] == fixed["checkpoint"]
            assert (ws / "calc.py").read_text() == BUGGY
            assert (ws / "notes.txt").read_text() == "the user's own work, not committed\n"
    finally:
        standin.stop()
