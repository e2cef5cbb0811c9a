"""A real headless Neovim loads the plugin, runs a `Conductor:` code action, and the
buffer changes through a plan run on stand-in workers."""

from __future__ import annotations

import os
import sys
from pathlib import Path

from helpers import EDITOR_CALC, GOOD, REPO
from helpers import editor_workspace as workspace
from lsp_editor import run_nvim
from standin import Behaviour, StandIn


def test_code_action_fixes_the_buffer_with_progress(tmp_path: Path, standin: StandIn) -> None:
    ws = workspace(tmp_path / "ws", standin.url)
    standin.push(Behaviour(text=GOOD))
    result = run_nvim(ws, "fix", tmp_path)
    assert result["attached"] and result["fixed"], result
    assert "\n".join(result["lines"]) + "\n" == EDITOR_CALC.replace("a - b", "a + b")  # type: ignore[arg-type]
    kinds = [m["kind"] for m in result["messages"]]  # type: ignore[union-attr, index]
    assert kinds[0] == "begin" and "report" in kinds and kinds[-1] == "end"
    texts = " ".join(m["message"] for m in result["messages"])  # type: ignore[union-attr, index]
    assert "Conductor: edit calc.py" in texts and "coder (generation)" in texts
    assert "add() subtracts" in standin.seen[0].prompt()  # the diagnostic reached the worker
    assert (ws / "calc.py").read_text() == EDITOR_CALC  # the buffer changed, not the file behind it


def test_cancel_leaves_the_buffer_untouched(tmp_path: Path, standin: StandIn) -> None:
    ws = workspace(tmp_path / "ws", standin.url)
    standin.push(Behaviour("slow", delay=30, text=GOOD))
    result = run_nvim(ws, "cancel", tmp_path)
    assert result["began"] and result["ended"], result
    assert "\n".join(result["lines"]) + "\n" == EDITOR_CALC  # type: ignore[arg-type]
    assert result["modified"] is False
    assert "cancelled" in result["messages"][-1]["message"]  # type: ignore[index]


def test_a_command_says_why_no_server_serves_the_buffer(tmp_path: Path, standin: StandIn) -> None:
    """A server that exits at once: ``:ConductorFix`` names the exit, not just "not
    running"; and the plugin's default command is the clone's own server when installed."""
    ws = workspace(tmp_path / "ws", standin.url)
    dies = [sys.executable, "-c", "import sys; sys.exit(3)"]
    result = run_nvim(ws, "exited", tmp_path, cmd=dies)
    assert result["gone"], result
    (said,) = result["notified"]  # type: ignore[misc]
    assert said.startswith("conductor: the server exited (code 3, signal 0)"), said
    installed = REPO / ".venv" / "bin" / "conductor-lsp"
    expected = str(installed) if os.access(installed, os.X_OK) else "conductor-lsp"
    assert result["default_cmd"] == [expected, "serve"]
