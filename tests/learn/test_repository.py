"""``learn`` on a history built here with three bug fixes: it mines them, runs the pool on
them within its budget, fits the policy where the configuration points, holds out the
newest, and, stopped by a signal and started again, goes on where it stopped."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from pathlib import Path

import git
import pytest
from helpers import WAIT, cli, cli_env, config, sr, worker
from standin import Seen, StandIn

from conductor_lsp.policy import Policy

BUGS = {  # function: (buggy body, fixed body, test)
    "mul": ("    return x + y\n", "    return x * y\n", "    assert mul(2, 3) == 6\n"),
    "sub": ("    return x + y\n", "    return x - y\n", "    assert sub(5, 3) == 2\n"),
    "neg": ("    return x\n", "    return -x\n", "    assert neg(4) == -4\n"),
}


def source(fixed: set[str]) -> str:
    parts = []
    for name, (bug, fix, _) in BUGS.items():
        args = "x" if name == "neg" else "x, y"
        parts.append(f"def {name}({args}):\n{fix if name in fixed else bug}")
    return "\n\n".join(parts)


def history(root: Path) -> None:
    repo = git.Repo.init(root, initial_branch="main")
    (root / "ops.py").write_text(source(set()))
    (root / "conftest.py").write_text("")
    repo.index.add(["ops.py", "conftest.py"])
    repo.index.commit("Start")
    fixed: set[str] = set()
    for name, (_, _, test) in BUGS.items():
        fixed.add(name)
        (root / "ops.py").write_text(source(fixed))
        (root / f"test_{name}.py").write_text(
            f"from ops import {name}\n\n\ndef test_{name}():\n{test}"
        )
        repo.index.add(["ops.py", f"test_{name}.py"])
        repo.index.commit(f"Fix {name}()")


def answer(seen: Seen) -> str:
    """The fix for the function whose test the prompt shows (the cheap worker knows mul)."""
    prompt = seen.prompt()
    for name, (bug, fix, _) in BUGS.items():
        if f"def test_{name}" in prompt and (name == "mul" or seen.body.get("model") == "dear"):
            args = "x" if name == "neg" else "x, y"
            return sr("ops.py", f"def {name}({args}):\n{bug}", f"def {name}({args}):\n{fix}")
    return "no idea"


@pytest.fixture
def repo(tmp_path: Path):  # type: ignore[no-untyped-def]
    standin = StandIn(responder=answer).start()
    root = tmp_path / "repo"
    history(root)
    pool = worker("cheap", standin.url, price_in=0.15, price_out=0.6) + worker(
        "dear", standin.url, price_in=3.0, price_out=15.0
    )
    (root / "conductor.toml").write_text(
        config('backend = "static"\npolicy = ".conductor/policy.json"', pool, tests=False)
    )
    env = {"XDG_CACHE_HOME": str(tmp_path / "cache")}
    yield root, env
    standin.stop()


def test_learn_fits_the_policy_on_the_older_tasks(repo) -> None:  # type: ignore[no-untyped-def]
    root, env = repo
    done = cli("learn", str(root), "--budget-usd", "5", env=env)
    assert done.returncode == 0, done.stderr
    assert "3 task(s) from 4 commit(s)" in done.stdout
    policy = json.loads((root / ".conductor" / "policy.json").read_text())
    assert policy["about"]["held_out_is"] == "the newest tenth of the mined commits"
    assert "3 task(s) run this time" in done.stdout
    assert "use it:" not in done.stdout  # the configuration already names the policy
    doctor = cli("doctor", str(root), env=env)
    assert "policy.json: " in doctor.stdout and "judged candidates" in doctor.stdout


def test_learn_killed_by_a_signal_goes_on_where_it_stopped(repo) -> None:  # type: ignore[no-untyped-def]
    root, env = repo
    proc = subprocess.Popen(
        [sys.executable, "-m", "conductor_lsp.cli", "learn", str(root), "--budget-usd", "5"],
        env={**cli_env(env), "PYTHONUNBUFFERED": "1"},
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
    )
    assert proc.stdout is not None
    for line in proc.stdout:
        if line.startswith("ran "):
            proc.send_signal(signal.SIGKILL)  # no clean-up at all: the hardest stop
            break
    proc.wait(timeout=WAIT)
    again = cli("learn", str(root), "--budget-usd", "5", env=env)
    assert again.returncode == 0, again.stderr
    assert "(4 already mined, skipped)" in again.stdout
    ran = [line for line in again.stdout.splitlines() if line.startswith("ran ")]
    assert 1 <= len(ran) <= 2  # the first task is not run again
    cache = Path(env["XDG_CACHE_HOME"]) / "conductor-lsp" / "learn"
    rows = [json.loads(x) for name in ("fit.jsonl", "held.jsonl") for f in cache.glob(f"*/{name}")
            for x in f.read_text().splitlines()]  # fmt: skip
    pairs = [(r["task"], r["strategy"]) for r in rows]
    assert len(pairs) == len(set(pairs)) == 3 * 4  # every task, each worker in both wordings, once
    assert os.path.exists(root / ".conductor" / "policy.json")


def test_learn_says_how_to_use_a_policy_the_configuration_does_not_name(repo) -> None:  # type: ignore[no-untyped-def]
    root, env = repo
    toml = root / "conductor.toml"
    toml.write_text(toml.read_text().replace('policy = ".conductor/policy.json"\n', ""))
    done = cli("learn", str(root), "--budget-usd", "5", env=env)
    assert done.returncode == 0, done.stderr
    assert 'use it: [conductor] policy = ".conductor/policy.json"; [learn] online' in done.stdout


def test_learn_with_shapes_runs_every_pair_and_the_policy_knows_the_shape(repo) -> None:  # type: ignore[no-untyped-def]
    root, env = repo
    done = cli("learn", str(root), "--budget-usd", "5", "--shapes", env=env)
    assert done.returncode == 0, done.stderr
    rows = [json.loads(line) for f in sorted(Path(env["XDG_CACHE_HOME"]).rglob("fit.jsonl"))
            for line in f.read_text().splitlines()]  # fmt: skip
    ran = {r["strategy"] for r in rows}
    assert {"architect:cheap>dear", "architect:dear>cheap", "single:cheap"} <= ran, ran
    policy = Policy.load(root / ".conductor" / "policy.json")
    assert policy.shapes() == ["architect", "review"]
