"""A workspace's own configuration runs no command until the user trusts the workspace:
an ``api_key_cmd`` in a cloned repository's ``conductor.toml`` does not run on ``plan``
or ``doctor``, ``doctor`` says it was skipped, and ``conductor-lsp trust`` lets it run.
The user's own file outside the workspace is not held back."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest
from helpers import cli

from conductor_lsp import load_config


def _workspace(tmp_path: Path, marker: Path) -> Path:
    ws = tmp_path / "cloned"
    ws.mkdir()
    cmd = f"{sys.executable} -c \"open({str(marker)!r}, 'w').write('ran'); print('sk-x')\""
    (ws / "conductor.toml").write_text(
        '[conductor]\nbackend = "static"\n'
        f'[workers.w]\nprovider = "openai"\nmodel = "gpt-4o"\napi_key_cmd = {json.dumps(cmd)}\n'
    )
    return ws


def test_an_untrusted_workspace_runs_no_command_and_trust_lets_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    state = {"XDG_STATE_HOME": str(tmp_path / "state")}
    monkeypatch.setenv("XDG_STATE_HOME", state["XDG_STATE_HOME"])
    marker = tmp_path / "ran.txt"
    ws = _workspace(tmp_path, marker)
    cfg = load_config(ws, env={})
    assert cfg.workers["w"].api_key_cmd == ""
    assert cfg.untrusted == [f"workers.w.api_key_cmd (in {ws / 'conductor.toml'})"]
    for command in (["plan", "fix the bug", str(ws)], ["doctor", str(ws), "--check"]):
        cli(*command, env=state)
        assert not marker.exists(), command
    # Wide enough that no cell wraps: the row's detail holds two paths of pytest's
    # temporary folder, whose length differs from machine to machine.
    doctor = cli("doctor", str(ws), env={**state, "COLUMNS": "1000"})
    row = next(line for line in doctor.stdout.splitlines() if "workspace trust" in line)
    assert "not trusted" in row and f"conductor-lsp trust {ws}" in row, doctor.stdout

    assert cli("trust", str(ws), env=state).returncode == 0
    assert str(ws.resolve()) in cli("trust", "--list", env=state).stdout
    assert load_config(ws, env={}).workers["w"].api_key_cmd != ""
    cli("doctor", str(ws), "--check", env=state)
    assert marker.read_text() == "ran"  # trusted: the command is the user's to run

    assert cli("trust", str(ws), "--remove", env=state).returncode == 0
    assert load_config(ws, env={}).workers["w"].api_key_cmd == ""


def test_the_users_own_file_elsewhere_is_not_held_back(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path / "state"))
    ws = tmp_path / "ws"
    ws.mkdir()
    mine = tmp_path / "my-config.toml"
    mine.write_text(
        '[workers.w]\nprovider = "openai"\nmodel = "gpt-4o"\napi_key_cmd = "pass show openai"\n'
        '[trace]\ndir = "/tmp/my-traces"\n'
    )
    cfg = load_config(ws, mine, env={})
    assert cfg.workers["w"].api_key_cmd == "pass show openai" and not cfg.untrusted
    assert cfg.trace.dir == "/tmp/my-traces"


def test_an_untrusted_workspaces_test_command_does_not_run_and_a_trusted_folder_lets_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``[test] command`` is a command the workspace's file sets: held back like
    ``api_key_cmd``; ``fix`` says why and how. Trusting a folder trusts what is in it."""
    state = {"XDG_STATE_HOME": str(tmp_path / "state")}
    monkeypatch.setenv("XDG_STATE_HOME", state["XDG_STATE_HOME"])
    marker = tmp_path / "tests-ran.txt"
    ws = tmp_path / "clones" / "repo"
    ws.mkdir(parents=True)
    cmd = f"{sys.executable} -c \"open({str(marker)!r}, 'w').write('ran')\""
    (ws / "conductor.toml").write_text(f"[test]\ncommand = {json.dumps(cmd)}\n")
    cfg = load_config(ws, env={})
    assert cfg.test.command == ""
    assert cfg.untrusted == [f"test.command (in {ws / 'conductor.toml'})"]
    out = cli("fix", str(ws), env=state)
    assert out.returncode != 0 and not marker.exists()
    assert "not trusted" in out.stdout + out.stderr and "conductor-lsp trust" in out.stderr
    assert "Traceback" not in out.stderr

    assert cli("trust", str(tmp_path / "clones"), env=state).returncode == 0
    assert load_config(ws, env={}).test.command == cmd
    out = cli("fix", str(ws), env=state)
    assert out.returncode == 0, out.stdout + out.stderr
    assert marker.read_text() == "ran"
