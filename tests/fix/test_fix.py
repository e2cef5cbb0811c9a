"""`conductor-lsp fix` end to end: real git repos, real pytest, scripted stand-in workers."""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import git
import pytest
from helpers import GOOD, WAIT, calc_project, cli, config, sr, worker
from standin import Behaviour, StandIn

from conductor_lsp.testrun import probe

PY = sys.executable
BUGGY = "def add(a, b):\n    return a - b\n\n\ndef mul(a, b):\n    return a * b\n"
TESTS = (
    "from calc import add, mul\n\n\ndef test_add():\n    assert add(2, 3) == 5\n\n\n"
    "def test_mul():\n    assert mul(2, 3) == 6\n"
)
WORSE = "calc.py\n<<<<<<< SEARCH\n    return a * b\n=======\n    return a ** b\n>>>>>>> REPLACE\n"


@pytest.fixture
def repo(tmp_path: Path, standin: StandIn) -> Path:
    root = tmp_path / "proj"
    root.mkdir()
    r = git.Repo.init(root)
    with r.config_writer() as c:
        c.set_value("user", "name", "Test")
        c.set_value("user", "email", "test@example.com")
    calc_project(root, calc=BUGGY, tests=TESTS)
    (root / ".gitignore").write_text(".conductor/\n")
    r.index.add(["calc.py", "conftest.py", "test_calc.py", ".gitignore"])
    r.index.commit("init")
    conductor = 'backend = "static"\nmax_steps = 1'
    (root / "conductor.toml").write_text(config(conductor, worker("coder", standin.url)))
    return root


def fix(root: Path, *args: str, timeout: float = WAIT) -> subprocess.CompletedProcess[str]:
    return cli("fix", str(root), *args, timeout=timeout)


def test_fix_turns_a_buggy_repo_green(repo: Path, standin: StandIn) -> None:
    standin.push(Behaviour(text="Some analysis without edits."), Behaviour(text=GOOD))
    out = fix(repo)
    assert out.returncode == 0, out.stdout + out.stderr
    assert (repo / "calc.py").read_text() == BUGGY.replace("a - b", "a + b")
    assert "outcome: green" in out.stdout and "tests: 1 failing -> green" in out.stdout
    assert "-    return a - b" in out.stdout and "+    return a + b" in out.stdout  # the diff
    assert "refs/conductor/checkpoints/" in out.stdout and "coder" in out.stdout
    # The second round told the conductor and workers what happened in the first.
    assert "No edit was applied" in standin.seen[1].prompt()
    assert "test_add" in standin.seen[0].prompt() and "return a - b" in standin.seen[0].prompt()


def test_hostile_edits_are_refused_and_nothing_is_written(
    repo: Path, standin: StandIn, tmp_path: Path
) -> None:
    (tmp_path / "outside").mkdir()
    (tmp_path / "outside" / "victim.py").write_text("SAFE = True\n")
    (repo / "escape").symlink_to(tmp_path / "outside")
    hooks = sorted(p.name for p in (repo / ".git" / "hooks").iterdir())
    standin.push(
        Behaviour(text=GOOD + sr("../outside/victim.py", "SAFE = True\n", "SAFE = False\n")),
        Behaviour(
            text=GOOD
            + sr(".git/hooks/pre-commit", "", "#!/bin/sh\necho pwned\n")
            + sr("escape/victim.py", "SAFE = True\n", "SAFE = False\n")
        ),
    )
    out = fix(repo, "--max-iterations", "3")
    assert out.returncode == 1
    assert "refused path '../outside/victim.py'" in out.stdout
    assert "refused path '.git/hooks/pre-commit'" in out.stdout
    assert "no applicable edit twice in a row" in out.stdout
    assert (tmp_path / "outside" / "victim.py").read_text() == "SAFE = True\n"
    assert sorted(p.name for p in (repo / ".git" / "hooks").iterdir()) == hooks
    assert (repo / "calc.py").read_text() == BUGGY  # the good edit beside them was not applied


def test_a_long_test_run_is_never_silence_and_rounds_end_apart_from_the_job(
    repo: Path, standin: StandIn
) -> None:
    """Candidates' tests that take a while (12 s, in the sandboxes only) still leave a
    line every few seconds; a round's end and the job's have words of their own."""
    conftest = repo / "conftest.py"
    conftest.write_text(
        conftest.read_text() + "\nimport pathlib, time\n\n"
        'if "sandboxes" in str(pathlib.Path(__file__).resolve()):\n    time.sleep(12)\n'
    )
    standin.push(Behaviour(text=WORSE))
    out = fix(repo, "--max-iterations", "1")
    assert out.returncode == 1, out.stdout + out.stderr
    quiet = [line for line in out.stdout.splitlines() if line.startswith("still working, ")]
    assert quiet and all(line.endswith(") in a sandbox") for line in quiet), out.stdout
    assert "[1] round over: best so far 1 failing; $" in out.stdout
    assert "plan finished: done in " in out.stdout and "job done" not in out.stdout
    assert re.search(r"\[0\] job ended: stuck in [\d.]+s", out.stdout), out.stdout


def test_ambiguous_edit_is_refused_with_a_hint(repo: Path, standin: StandIn) -> None:
    (repo / "calc.py").write_text(BUGGY + "\n\ndef sub(a, b):\n    return a - b\n")
    standin.push(Behaviour(text=GOOD), Behaviour(text=GOOD))
    out = fix(repo, "--max-iterations", "2")
    assert out.returncode == 1
    assert "occurs 2 times" in out.stdout
    assert "occurs 2 times" in standin.seen[1].prompt()  # the error went to the next round


def test_hung_tests_are_killed_on_time(repo: Path, standin: StandIn) -> None:
    (repo / "test_hang.py").write_text("import time\n\n\ndef test_hang():\n    time.sleep(900)\n")
    cfg = (repo / "conductor.toml").read_text().replace("timeout = 60", "timeout = 2")
    (repo / "conductor.toml").write_text(cfg)
    standin.push(Behaviour(text="nothing useful"), Behaviour(text="still nothing"))
    t0 = time.monotonic()
    out = fix(repo, "--max-iterations", "2")
    assert out.returncode == 1
    assert time.monotonic() - t0 < 300  # three runs, each killed at 2 s, not 900
    assert "TIMED OUT after 2s" in standin.seen[0].prompt()


def test_user_work_survives_a_run_that_ends_worse(repo: Path, standin: StandIn) -> None:
    r = git.Repo(repo)
    (repo / "calc.py").write_text(BUGGY + "# my uncommitted note\n")
    (repo / "scratch.txt").write_text("untracked thoughts\n")
    (repo / "test_calc.py").write_text(TESTS + "\n# staged change\n")
    r.index.add(["test_calc.py"])
    staged = r.git.diff("--cached")
    standin.push(Behaviour(text=WORSE), Behaviour(text="no edits here"), Behaviour(text="nor here"))
    out = fix(repo, "--max-iterations", "3")
    assert out.returncode == 1
    assert "no state beat the start: the workspace is unchanged" in out.stdout
    assert "written: nothing" in out.stdout
    assert (repo / "calc.py").read_text() == BUGGY + "# my uncommitted note\n"
    assert (repo / "scratch.txt").read_text() == "untracked thoughts\n"
    assert r.git.diff("--cached") == staged and r.head.commit.message == "init"


def test_same_edit_twice_is_stuck(repo: Path, standin: StandIn) -> None:
    half = sr("calc.py", "def mul(a, b):\n", "def mul(a, b):  # noted\n")
    standin.push(Behaviour(text=half), Behaviour(text=half))
    out = fix(repo, "--max-iterations", "4")
    assert out.returncode == 1
    assert "the same" in out.stdout


def worktrees(repo: Path) -> list[str]:
    listing = git.Repo(repo).git.worktree("list", "--porcelain")
    return [line for line in listing.splitlines() if line.startswith("worktree ")]


def test_kill_9_mid_job_leaves_the_workspace_as_it_was(
    repo: Path, standin: StandIn, tmp_path: Path
) -> None:
    (repo / "calc.py").write_text(BUGGY + "# uncommitted work\n")
    (repo / "mine.txt").write_text("untracked\n")
    files = {p.name: p.read_bytes() for p in repo.iterdir() if p.is_file()}
    nudge = sr("calc.py", "    return a - b\n", "    return a - b + 1\n")  # new failure text
    standin.push(Behaviour(text=nudge), Behaviour("slow", delay=60, text="too late"))
    env = {**os.environ, "NO_COLOR": "1", "XDG_CACHE_HOME": str(tmp_path / "cache")}
    proc = subprocess.Popen(
        [PY, "-m", "conductor_lsp.cli", "fix", str(repo)],
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        deadline = time.monotonic() + 120
        while len(standin.seen) < 2 and time.monotonic() < deadline:
            time.sleep(0.1)
        assert len(standin.seen) == 2, "the loop never reached its second round"
        assert len(worktrees(repo)) > 1  # the second round's sandbox is registered
    finally:
        proc.send_signal(signal.SIGKILL)
        proc.wait()
    # The first round's edit was judged in a sandbox only: the workspace is as it was.
    assert {p.name: p.read_bytes() for p in repo.iterdir() if p.is_file()} == files
    undo = subprocess.run(
        [PY, "-m", "conductor_lsp.cli", "undo", str(repo)],
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert undo.returncode == 2 and "nothing to undo" in undo.stderr
    # The next job prunes what the killed one left: no folder, no registered worktree.
    standin.push(Behaviour(text=GOOD))
    out = subprocess.run(
        [PY, "-m", "conductor_lsp.cli", "fix", str(repo)],
        env=env,
        capture_output=True,
        text=True,
        timeout=240,
    )
    assert out.returncode == 0, out.stdout + out.stderr
    assert worktrees(repo) == [f"worktree {repo.resolve()}"]
    assert not any((tmp_path / "cache" / "conductor-lsp" / "sandboxes").glob("*/*"))


def test_budget_usd_stops_the_loop(repo: Path, standin: StandIn) -> None:
    standin.push(Behaviour(text="thinking"), Behaviour(text=GOOD))
    out = fix(repo, "--budget-usd", "0.0000001")
    assert out.returncode == 1
    assert "budget: cost" in out.stdout and "budget: budget" not in out.stdout
    assert len(standin.seen) == 1


def test_trace_records_each_round(repo: Path, standin: StandIn) -> None:
    standin.push(Behaviour(text=GOOD))
    assert fix(repo).returncode == 0
    traces = list((repo / ".conductor" / "traces").glob("*.jsonl"))
    assert len(traces) == 1
    kinds = [json.loads(line)["type"] for line in traces[0].read_text().splitlines()]
    assert kinds == ["task", "plan", "request", "response", "done", "verdict"]
    verdict = json.loads(traces[0].read_text().splitlines()[-1])
    assert verdict["worker"] == "coder" and verdict["green"] and verdict["applied"] == ["calc.py"]


def test_state_folder_stays_out_of_git_status(repo: Path, standin: StandIn) -> None:
    (repo / ".gitignore").unlink()  # the user's own ignore rules know nothing of us
    r = git.Repo(repo)
    r.index.remove([".gitignore"])
    r.index.commit("no ignore file")
    standin.push(Behaviour(text=GOOD))
    assert fix(repo).returncode == 0
    assert (repo / ".conductor" / ".gitignore").read_text().splitlines()[-1] == "*"
    status = r.git.status("--porcelain", "--untracked-files=all")
    assert ".conductor" not in status
    assert "calc.py" in status  # the fix itself does show


CHEAT = sr("test_calc.py", "    assert add(2, 3) == 5\n", "    assert True\n")


def test_a_fix_may_not_rewrite_the_tests_by_default(repo: Path, standin: StandIn) -> None:
    standin.push(Behaviour(text=CHEAT), Behaviour(text=CHEAT))
    out = fix(repo, "--max-iterations", "2")
    assert out.returncode == 1
    assert "test_calc.py holds tests this job must make pass" in out.stdout
    assert "allow_test_edits" in standin.seen[1].prompt()  # the next round was told why
    assert (repo / "test_calc.py").read_text() == TESTS
    # Nor through pytest's configuration.
    (repo / "pyproject.toml").write_text('[project]\nname = "x"\n')
    skip = sr(
        "pyproject.toml",
        '[project]\nname = "x"\n',
        '[project]\nname = "x"\n\n[tool.pytest.ini_options]\naddopts = "-k not test_add"\n',
    )
    standin.push(Behaviour(text=skip), Behaviour(text=skip))
    out = fix(repo, "--max-iterations", "1")
    assert out.returncode == 1 and "touches pytest's configuration" in out.stdout


def test_allow_test_edits_lets_it_through(repo: Path, standin: StandIn) -> None:
    cfg = repo / "conductor.toml"
    cfg.write_text(cfg.read_text() + "[fix]\nallow_test_edits = true\n")
    standin.push(Behaviour(text=CHEAT))
    out = fix(repo)
    assert out.returncode == 0, out.stdout
    assert "assert True" in (repo / "test_calc.py").read_text()


def test_plain_undo_after_a_green_fix_brings_back_what_the_user_had(
    repo: Path, standin: StandIn
) -> None:
    r = git.Repo(repo)
    (repo / "calc.py").write_text(BUGGY + "# my note\n")  # uncommitted work
    (repo / "test_calc.py").write_text(TESTS + "\n# staged\n")
    r.index.add(["test_calc.py"])
    staged, head = r.git.diff("--cached"), r.head.commit.hexsha
    standin.push(Behaviour(text=GOOD))
    out = fix(repo)
    assert out.returncode == 0 and "return a + b" in (repo / "calc.py").read_text()
    start_ref = re.search(r"undo with `conductor-lsp undo`\): (\S+)", out.stdout).group(1)  # type: ignore[union-attr]
    listing = undo_cli(repo, "--list").stdout
    assert f"{start_ref}  before fix" in listing  # the report names the before-fix ref
    undone = undo_cli(repo)
    assert undone.returncode == 0, undone.stderr
    assert start_ref in undone.stdout
    assert (repo / "calc.py").read_text() == BUGGY + "# my note\n"  # not the best state
    assert r.git.diff("--cached") == staged and r.head.commit.hexsha == head
    again = undo_cli(repo)
    assert again.returncode == 2 and "nothing to undo" in again.stderr


def test_undo_does_not_cross_jobs(repo: Path, standin: StandIn) -> None:
    standin.push(Behaviour(text=GOOD))
    assert fix(repo).returncode == 0
    # The user works on; then a job is killed before it takes its checkpoint (as if).
    (repo / "calc.py").write_text(
        (repo / "calc.py").read_text() + "\n\ndef sub(a, b):\n    return a - b\n"
    )
    refused = undo_cli(repo)
    assert refused.returncode == 2
    assert "has changed since the last job left it" in refused.stderr
    assert "undo --ref refs/conductor/checkpoints/" in refused.stderr
    assert "def sub" in (repo / "calc.py").read_text()  # nothing was touched
    ref = refused.stderr.split("undo --ref ")[1].split()[0]
    forced = undo_cli(repo, "--ref", ref)
    assert forced.returncode == 0 and (repo / "calc.py").read_text() == BUGGY


def undo_cli(root: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return cli("undo", str(root), *args, timeout=60)


def test_review_writes_only_accepted_hunks_and_the_reason_reaches_the_next_try(
    repo: Path, standin: StandIn
) -> None:
    """`fix --review`: two hunks; the user rejects the fix with a reason and the comment
    without one, so nothing is written; the next try's prompt holds the reason, its fix is
    accepted and written, and the episodes record the rejection (no success for it)."""
    swapped = sr("calc.py", "    return a - b\n", "    return b + a\n")
    comment = sr("calc.py", "    return a * b\n", "    return a * b  # product\n")
    standin.push(Behaviour(text=swapped + comment), Behaviour(text=GOOD))
    answers = "r\nwrite a + b, in that order\nn\ny\ny\n"
    env = {**os.environ, "NO_COLOR": "1", "COLUMNS": "200"}
    out = subprocess.run(
        [PY, "-m", "conductor_lsp.cli", "fix", str(repo), "--review"],
        env=env,
        input=answers,
        capture_output=True,
        text=True,
        timeout=240,
    )
    assert out.returncode == 0, out.stdout + out.stderr
    assert "Apply this hunk (1/2)" in out.stdout and "Apply this hunk (2/2)" in out.stdout
    assert "rejected: calc.py:2: write a + b, in that order" in out.stdout
    assert "rejected: calc.py:6: (no reason given)" in out.stdout
    assert (repo / "calc.py").read_text() == BUGGY.replace("a - b", "a + b")  # the retry's
    assert "write a + b, in that order" in standin.seen[1].prompt()
    from conductor_lsp.episodes.log import read_episodes
    from conductor_lsp.learn.reward import reward

    episodes = read_episodes(repo / ".conductor" / "episodes.jsonl")
    first, second = sorted(
        {e.job for e in episodes}, key=lambda j: [e.job for e in episodes].index(j)
    )
    rejected = [e for e in episodes if e.job == first]
    assert rejected and all(e.rejected and not e.green for e in rejected)
    assert all(reward(e) <= 0 for e in rejected)
    assert any(e.green for e in episodes if e.job == second)


def test_review_writes_the_accepted_hunk_alone_and_tests_it(repo: Path, standin: StandIn) -> None:
    fixed = sr("calc.py", "    return a - b\n", "    return a + b\n")
    comment = sr("calc.py", "    return a * b\n", "    return a * b  # product\n")
    standin.push(Behaviour(text=fixed + comment))
    env = {**os.environ, "NO_COLOR": "1", "COLUMNS": "200"}
    out = subprocess.run(
        [PY, "-m", "conductor_lsp.cli", "fix", str(repo), "--review"],
        env=env,
        input="y\nq\nn\n",
        capture_output=True,
        text=True,
        timeout=240,
    )
    assert (repo / "calc.py").read_text() == BUGGY.replace("a - b", "a + b")  # no comment
    assert "not tested without the rest" in out.stdout
    assert "tests after review: green" in out.stdout
    assert out.returncode == 0, out.stdout + out.stderr


@pytest.mark.parametrize("walls", [False, True], ids=["keys-only", "walled"])
def test_a_candidates_tests_never_see_the_workers_key(
    repo: Path, standin: StandIn, tmp_path: Path, walls: bool
) -> None:
    """The worker's key is in the environment of the job (it calls the worker with it),
    and a candidate's tests, run in its sandbox, see neither it nor the user's HOME;
    walled in, they cannot even write the spy file outside their sandbox."""
    if walls and not probe().in_force:
        pytest.skip(f"no walls here: {probe().why}")
    spy = tmp_path / "seen.txt"
    (repo / "test_calc.py").write_text(
        "import os, pathlib\nfrom calc import add\n\n\ndef test_add():\n"
        "    try:\n"
        f"        pathlib.Path({str(spy)!r}).open('a').write("
        "f\"{os.environ.get('CODER_KEY', 'no key')} {os.environ['HOME']}\\n\")\n"
        "    except OSError:\n"
        "        pass\n"
        "    assert add(2, 3) == 5\n"
    )
    toml = (repo / "conductor.toml").read_text()
    toml = toml.replace("[workers.coder]\n", '[workers.coder]\napi_key_env = "CODER_KEY"\n')
    toml = toml.replace("[test]\n", f"[test]\nwalls = {str(walls).lower()}\n")
    (repo / "conductor.toml").write_text(toml)
    git.Repo(repo).git.commit("-qam", "spy")
    standin.push(Behaviour(text=GOOD))
    env = {**os.environ, "CODER_KEY": "sk-worker-key-0123"}
    out = subprocess.run(
        [PY, "-m", "conductor_lsp.cli", "fix", str(repo)],
        capture_output=True, text=True, timeout=WAIT, env=env,
    )  # fmt: skip
    assert out.returncode == 0, out.stdout + out.stderr
    assert standin.seen[0].headers.get("authorization") == "Bearer sk-worker-key-0123"
    seen = spy.read_text().splitlines()
    # The workspace's own runs (the first) are the user's command on the user's files.
    assert seen[0] == f"sk-worker-key-0123 {Path.home()}", seen
    candidates = [line for line in seen if not line.startswith("sk-worker-key-0123")]
    if walls:
        assert not candidates, seen  # the write outside the sandbox was refused
        return
    assert all(line.split(" ", 2)[2] != str(Path.home()) for line in candidates), seen


#: A failing test whose report varies from run to run unless the runs are made steady: it
#: iterates a set of strings (its order follows PYTHONHASHSEED) and names its temp folder.
UNSTEADY = (
    "from calc import add\n\n\ndef test_add(tmp_path):\n"
    "    names = list({'alpha', 'beta', 'gamma', 'delta', 'epsilon', 'zeta', 'eta'})\n"
    "    assert add(2, 3) == 5, f'{names} in {tmp_path}'\n"
)


def test_two_runs_on_one_task_send_the_same_first_prompt(repo: Path, standin: StandIn) -> None:
    """What a model is shown does not depend on the run: no seconds, no hash order, no
    sandbox or temp path. A greedy model then answers the same, and strategies compare
    like for like."""
    (repo / "test_calc.py").write_text(UNSTEADY)
    git.Repo(repo).git.commit("-qam", "unsteady")
    first: list[str] = []
    for _ in range(2):
        standin.seen.clear()
        standin.push(Behaviour(text="No edit from me."))
        out = fix(repo, "--max-iterations", "1")
        assert out.returncode == 1, out.stdout + out.stderr
        first.append(json.dumps(standin.seen[0].body, sort_keys=True))

    assert first[0] == first[1]
    prompt = standin.seen[0].prompt()
    assert "alpha" in prompt and str(repo) not in prompt  # the workspace reads as "."
    assert "<tmp>/pytest-N" in prompt and "pytest-of-" not in prompt
