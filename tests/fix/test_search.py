"""Search in sandboxes: candidates judged by the tests before anything touches the user's files.

Real git, real pytest in subprocesses, loopback workers (the stand-in) that answer by
model name, fast or slow.
"""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
import time
from pathlib import Path

import git
import helpers
import pytest
from helpers import BUGGY, FIXED, TESTS, WAIT, WRONG, by_model, calc_project, config, worker
from standin import Behaviour, Seen, StandIn

from conductor_lsp import FixLoop, Plan, Session, Step, Task, load_config
from conductor_lsp.conductor.search import search_plan
from conductor_lsp.conductor.static import CAUSE, DIRECT, RETRY
from conductor_lsp.config.schema import SearchConfig
from conductor_lsp.protocols import WorkerInfo
from conductor_lsp.runtime import CandidateJudged, Event, LoopNote

PY = sys.executable
RIGHT = helpers.WHOLE_FIX
#: Every candidate of a round at once, as search ran before the cost-aware order.
LATENCY = '[fix]\nprefer = "latency"\n'
CHEAT = "test_calc.py\n```python\ndef test_add():\n    assert True\n```\n"


def workspace(root: Path, url: str, conductor: str, extra: str = "", *, repo: bool = True) -> Path:
    """A git repository (or a plain folder) with one failing test and two workers, "quick"
    and "strong"."""
    calc_project(root, repo=repo)
    quick = worker("quick", url, price_in=0.1, price_out=0.2, strength=1)
    strong = worker("strong", url, price_in=1.0, price_out=2.0, strength=2)
    (root / "conductor.toml").write_text(config(conductor, quick, strong, extra=extra))
    return root


def cli_env(tmp_path: Path) -> dict[str, str]:
    return helpers.cli_env({"XDG_CACHE_HOME": str(tmp_path / "cache")})


def watch(proc: subprocess.Popen[str], path: Path) -> list[bytes]:
    """The contents ``path`` went through while ``proc`` ran (read every 10 ms)."""
    seen = [path.read_bytes()]
    while proc.poll() is None:
        data = path.read_bytes()
        if data != seen[-1]:
            seen.append(data)
        time.sleep(0.01)
    return seen


TWO_LEAVES = json.dumps(
    {"model_id": [0, 1], "subtasks": ["Fix it.", "Fix it."], "access_list": [[], []]}
)


def test_two_independent_leaves_are_judged_in_sandboxes_and_only_the_green_one_is_written(
    tmp_path: Path, standin: StandIn
) -> None:
    """The Done-when: a plan of two leaves; the quick wrong answer is judged first, in a
    sandbox; the user's file stays byte-identical until the end, then holds the fix."""
    conductor = f'backend = "openai"\nmodel = "planner"\nbase_url = "{standin.url}/v1"'
    root = workspace(tmp_path / "ws", standin.url, conductor, "[fix]\nfloor = false\n")
    standin.responder = by_model(
        {"planner": (0, TWO_LEAVES), "quick": (0, WRONG), "strong": (3.0, RIGHT)}
    )
    proc = subprocess.Popen(
        [PY, "-m", "conductor_lsp.cli", "fix", str(root)],
        env=cli_env(tmp_path),
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    during = watch(proc, root / "calc.py")
    out = proc.communicate(timeout=WAIT)[0]
    assert proc.returncode == 0, out
    # Unchanged while candidates were judged (the wrong one never showed), then one write.
    assert during in ([BUGGY.encode()], [BUGGY.encode(), FIXED.encode()])
    assert (root / "calc.py").read_text() == FIXED
    lines = out.splitlines()
    quick = next(i for i, line in enumerate(lines) if "step 0 (quick): 1 failing" in line)
    strong = next(i for i, line in enumerate(lines) if "step 1 (strong): green" in line)
    assert quick < strong  # the fast wrong one was judged while the slow one worked
    assert "written: calc.py" in out and "2 judged in sandboxes, 1 green" in out
    assert git.Repo(root).git.worktree("list").count("\n") == 0  # sandboxes gone


def run_loop(root: Path, events: list[tuple[float, Event]]) -> object:
    async def go() -> object:
        session = Session(load_config(root))
        try:
            loop = FixLoop(session, on_event=lambda e: events.append((time.monotonic(), e)))
            return await loop.run()
        finally:
            await session.aclose()

    return asyncio.run(go())


def test_candidates_are_tested_at_once(
    tmp_path: Path, standin: StandIn, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    extra = f"[budget]\nmax_iterations = 1\n{LATENCY}"
    root = workspace(tmp_path / "ws", standin.url, 'backend = "search"\nmax_steps = 2', extra)
    (root / "conftest.py").write_text("import time\n\ntime.sleep(1.5)\n")  # every run is slow
    git.Repo(root).git.commit("-qam", "slow tests")
    other = "calc.py\n```python\ndef add(a, b):\n    return a - b - 1\n```\n"
    standin.responder = by_model({"quick": (0, WRONG), "strong": (0, other)})
    events: list[tuple[float, Event]] = []
    report = run_loop(root, events)
    assert not report.end.passed  # type: ignore[attr-defined]
    starts = {
        e.message.split("testing ")[1].split(" in a sandbox")[0]: t
        for t, e in events
        if isinstance(e, LoopNote) and "testing round 1" in e.message
    }
    ends = {e.label: t for t, e in events if isinstance(e, CandidateJudged) and e.round == 1}
    assert set(starts) == set(ends) and len(ends) == 2  # strong and quick
    spans = sorted((starts[k], ends[k]) for k in ends)
    assert spans[1][0] < spans[0][1]  # the second began before the first was judged
    busy = sum(b - a for a, b in spans)
    window = max(b for _, b in spans) - min(a for a, _ in spans)
    assert window < 0.8 * busy, (window, busy)  # [test] jobs = 2 at once


@pytest.mark.parametrize("repo", [True, False], ids=["git", "outside-git"])
def test_the_users_edit_during_the_job_survives_and_the_fix_is_kept(
    tmp_path: Path, standin: StandIn, repo: bool
) -> None:
    root = workspace(tmp_path / "ws", standin.url, 'backend = "static"', repo=repo)
    standin.responder = by_model({"strong": (3.0, RIGHT)})
    env = cli_env(tmp_path)
    proc = subprocess.Popen(
        [PY, "-m", "conductor_lsp.cli", "fix", str(root)],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    deadline = time.monotonic() + 60
    while not standin.seen and time.monotonic() < deadline:
        time.sleep(0.05)
    mine = BUGGY + "\n\ndef sub(a, b):\n    return a - b\n"
    (root / "calc.py").write_text(mine)  # the user works on while the worker thinks
    out = proc.communicate(timeout=WAIT)[0]
    assert proc.returncode == 1, out
    assert (root / "calc.py").read_text() == mine
    assert "changed during the job: calc.py" in out and "written: nothing" in out
    ref = out.split("\nkept: ")[1].split()[0]
    undo = subprocess.run(
        [PY, "-m", "conductor_lsp.cli", "undo", str(root), "--ref", ref],
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert undo.returncode == 0, undo.stderr
    assert (root / "calc.py").read_text() == FIXED  # the verified fix, kept
    saved = undo.stdout.split("saved as ")[1].split()[0]
    subprocess.run(
        [PY, "-m", "conductor_lsp.cli", "undo", str(root), "--ref", saved],
        env=env,
        check=True,
        capture_output=True,
        timeout=60,
    )
    assert (root / "calc.py").read_text() == mine  # and the user's own state is one undo away


@pytest.mark.parametrize("repo", [True, False], ids=["git", "outside-git"])
def test_cancel_removes_the_sandboxes(
    tmp_path: Path, standin: StandIn, monkeypatch: pytest.MonkeyPatch, repo: bool
) -> None:
    cache = tmp_path / "cache"
    monkeypatch.setenv("XDG_CACHE_HOME", str(cache))
    root = workspace(tmp_path / "ws", standin.url, 'backend = "search"', repo=repo)
    (root / "conftest.py").write_text(  # test runs hang, in sandboxes only
        'import pathlib, time\n\nif "sandboxes" in str(pathlib.Path(__file__).resolve()):\n'
        "    time.sleep(30)\n"
    )
    (root / "conductor.toml").write_text(
        (root / "conductor.toml").read_text().replace("timeout = 60", "timeout = 120")
    )
    standin.responder = by_model({"quick": (0, WRONG), "strong": (0, RIGHT)})
    testing = asyncio.Event()

    async def go() -> None:
        session = Session(load_config(root))
        loop = FixLoop(
            session,
            on_event=lambda e: (
                testing.set() if isinstance(e, LoopNote) and "in a sandbox" in e.message else None
            ),
        )
        task = asyncio.create_task(loop.run())
        await asyncio.wait_for(testing.wait(), 90)
        await asyncio.sleep(1.0)  # sandboxes made, their test runs going
        assert list((cache / "conductor-lsp" / "sandboxes").glob("*/*/*"))
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        await session.aclose()

    asyncio.run(go())
    assert not list((cache / "conductor-lsp" / "sandboxes").glob("*/*"))
    if repo:
        assert git.Repo(root).git.worktree("list").count("\n") == 0
    assert (root / "calc.py").read_text() == BUGGY


def test_a_test_weakening_candidate_is_refused_in_its_sandbox(
    tmp_path: Path, standin: StandIn, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    root = workspace(tmp_path / "ws", standin.url, 'backend = "search"', LATENCY, repo=False)
    standin.responder = by_model({"quick": (0, CHEAT), "strong": (1.0, RIGHT)})
    events: list[tuple[float, Event]] = []
    report = run_loop(root, events)
    assert report.end.passed and report.written == ["calc.py"]  # type: ignore[attr-defined]
    verdicts = {e.worker: e.verdict for _, e in events if isinstance(e, CandidateJudged)}
    assert "test_calc.py holds tests this job must make pass" in verdicts["quick"]
    assert (root / "test_calc.py").read_text() == TESTS
    episodes = [
        json.loads(line)
        for line in (root / ".conductor" / "episodes.jsonl").read_text().splitlines()
    ]
    # one outcome a lane: the floor's (strong), the other leaves' (quick's among them)
    leaves = [leaf for e in episodes if e["type"] == "outcome" for leaf in e["leaves"]]
    by = {leaf["worker"]: leaf for leaf in leaves if leaf["worker"] == "quick"}
    assert by["quick"]["applied"] == [] and "holds tests" in by["quick"]["refused"]
    assert any(leaf["worker"] == "strong" and leaf["green"] for leaf in leaves)


#: A conductor slow enough that waiting for it shows, whatever the machine's load.
PLANNER_S = 300.0


def test_the_floor_runs_beside_the_conductors_plan(tmp_path: Path, standin: StandIn) -> None:
    """With ``prefer = "latency"`` the floor's call is one more candidate, started with the
    plan, not after it fails; once it is green, the conductor still writing its plan is
    not waited for."""
    conductor = f'backend = "openai"\nmodel = "planner"\nbase_url = "{standin.url}/v1"'
    root = workspace(tmp_path / "ws", standin.url, conductor, LATENCY)
    plan = json.dumps({"model_id": [0], "subtasks": ["Fix it."], "access_list": ["all"]})
    calls: list[tuple[str, float]] = []
    answer = by_model({"planner": (PLANNER_S, plan), "quick": (0, WRONG), "strong": (0.5, RIGHT)})

    def respond(seen: Seen) -> str:
        calls.append((str(seen.body["model"]), time.monotonic()))
        return answer(seen)

    standin.responder = respond
    t0 = time.monotonic()
    proc = subprocess.run(
        [PY, "-m", "conductor_lsp.cli", "fix", str(root)],
        env=cli_env(tmp_path),
        capture_output=True,
        text=True,
        timeout=WAIT,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert time.monotonic() - t0 < PLANNER_S / 2  # the plan was not waited for
    assert "candidate round 1, floor step 0 (strong): green" in proc.stdout
    when = dict(calls)
    assert set(when) == {"planner", "strong"}  # the plan's quick worker was never called
    assert when["strong"] < when["planner"] + PLANNER_S / 2  # the baseline did not wait for it
    assert "round 1 (floor)" in proc.stdout
    episodes = (root / ".conductor" / "episodes.jsonl").read_text().splitlines()
    (episode,) = [json.loads(e) for e in episodes if '"type": "episode"' in e]
    assert episode["lane"] == "floor" and episode["round"] == 1


INFOS = [
    WorkerInfo("quick", "", 0.1, 0.2, "openai", strength=1),
    WorkerInfo("strong", "", 1.0, 2.0, "openai", strength=2),
    WorkerInfo("tests", "", 0, 0, "tests", is_tool=True),
]
FAILING = Task("Fix it", test_failures="$ pytest\nFAILED (exit 1)\n- t at t.py:1: boom")


def test_search_plans_are_independent_leaves() -> None:
    first = search_plan(INFOS, 5, FAILING)
    assert [(s.worker, s.subtask) for s in first.steps] == [
        ("strong", DIRECT),
        ("quick", DIRECT),
        ("strong", CAUSE),
    ]
    assert first.leaves() == (0, 1, 2) and first.source == "search"
    sampled = search_plan(INFOS, 5, FAILING, SearchConfig(samples=3))
    assert [s.worker for s in sampled.steps] == ["strong", "quick", "strong", "strong", "strong"]
    # Each source of diversity alone, always beside the baseline's own call:
    alone = {
        "workers": SearchConfig(wording=False),
        "wording": SearchConfig(workers=False),
        "samples": SearchConfig(workers=False, wording=False, samples=3),
    }
    shapes = {
        k: [(s.worker, s.subtask) for s in search_plan(INFOS, 5, FAILING, o).steps]
        for k, o in alone.items()
    }
    assert shapes == {
        "workers": [("strong", DIRECT), ("quick", DIRECT)],
        "wording": [("strong", DIRECT), ("strong", CAUSE)],
        "samples": [("strong", DIRECT)] * 3,
    }
    assert len(search_plan(INFOS, 2, FAILING).steps) == 2  # max_steps holds
    later = search_plan(INFOS, 5, Task("Fix it", test_failures="x", previous="it failed"))
    assert [(s.worker, s.subtask) for s in later.steps] == [("strong", RETRY), ("quick", RETRY)]
    # Nothing to judge candidates with: the baseline's one call.
    assert search_plan(INFOS, 5, Task("Rewrite it")).steps == (Step("strong", DIRECT),)


def test_a_repeated_leaf_samples_and_the_first_stays_greedy(
    tmp_path: Path, standin: StandIn
) -> None:
    root = workspace(tmp_path / "ws", standin.url, 'backend = "static"')
    cfg = (root / "conductor.toml").read_text() + "[search]\ntemperature = 0.7\n"
    greedy = 'model = "strong"\ntemperature = 0.0\n'
    (root / "conductor.toml").write_text(cfg.replace('model = "strong"\n', greedy))
    leaf = Step("strong", "Fix it.", ())
    plan = Plan((leaf, leaf, Step("quick", "Fix it.", ())))

    async def go() -> list[str]:
        session = Session(load_config(root))
        try:
            job = await session.run(Task("Fix it"), plan=plan)
            return [r.text for r in job.answers()]
        finally:
            await session.aclose()

    assert len(asyncio.run(go())) == 3
    temps = [(s.body["model"], s.body.get("temperature")) for s in standin.seen]
    assert sorted(temps, key=str) == sorted(
        [("strong", 0.0), ("strong", 0.7), ("quick", None)], key=str
    )


def test_an_answer_that_changes_nothing_is_no_edit(
    tmp_path: Path, standin: StandIn, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A model that rewrites the file as it was has not edited it: no test run is spent on
    it, and the next round retries instead of the job stopping as stuck."""
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    root = workspace(tmp_path / "ws", standin.url, 'backend = "static"')
    same = f"calc.py\n```python\n{BUGGY}```\n"
    standin.push(Behaviour(text=same), Behaviour(text=RIGHT))
    events: list[tuple[float, Event]] = []
    report = run_loop(root, events)
    verdicts = [e.verdict for _, e in events if isinstance(e, CandidateJudged)]
    assert verdicts[0] == "no edit applied: the answer held no edit"
    assert verdicts[1] == "green" and report.end.passed  # type: ignore[attr-defined]
    assert "No edit was applied." in standin.seen[1].prompt()  # the retry was told


def test_search_retraces_the_baselines_rounds(
    tmp_path: Path, standin: StandIn, monkeypatch: pytest.MonkeyPatch
) -> None:
    """With no candidate better than the start in round 1 (one changed nothing, one was
    no edit, one an edit that fails as before), search's retry on the strongest starts
    from the start and is asked exactly what static's retry is asked: the baseline's own
    answer, not every sibling's failure, and no test timings (a greedy model answers a
    prompt that differs in one digit differently). So the floor holds across rounds."""
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    same = f"calc.py\n```python\n{BUGGY}```\n"

    def respond(seen: Seen) -> str:
        if RETRY in seen.prompt():
            return RIGHT
        if CAUSE in seen.prompt():
            return WRONG
        return same if seen.body.get("model") == "strong" else "no idea"

    standin.responder = respond
    retries = {}
    for backend in ("static", "search"):
        standin.seen.clear()
        (tmp_path / backend).mkdir()
        root = workspace(tmp_path / backend / "ws", standin.url, f'backend = "{backend}"')
        report = run_loop(root, [])
        assert report.end.passed  # type: ignore[attr-defined]
        asks = [s for s in standin.seen if RETRY in s.prompt() and s.body["model"] == "strong"]
        retries[backend] = asks[0].body["messages"]
        assert "in 0." not in asks[0].prompt() and "1 failed" in asks[0].prompt()
    # search asked more than static: three leaves, then the floor's retry, green first
    assert len(standin.seen) == 4
    assert retries["search"] == retries["static"]
    assert "Plan (static)" in json.dumps(retries["search"])


def test_a_round_is_not_stuck_while_a_leaf_gave_no_edit(
    tmp_path: Path, standin: StandIn, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The strongest's leaves hold no edit and the quick one's edit fails as before: static,
    whose one call held no edit, would retry, so the job does too (the floor), and the
    retry fixes it, instead of stopping as stuck on the quick leaf's failure."""
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    root = workspace(tmp_path / "ws", standin.url, 'backend = "search"')

    same = "calc.py\n```python\ndef add(a, b):\n    # checked\n    return a - b\n```\n"

    def respond(seen: Seen) -> str:
        if RETRY in seen.prompt():
            return RIGHT
        return "no idea" if seen.body.get("model") == "strong" else same

    standin.responder = respond
    report = run_loop(root, [])
    rounds = report.rounds  # type: ignore[attr-defined]
    assert [c.tests is not None for c in rounds[0].candidates].count(True) == 1
    assert len(rounds) == 2 and report.end.passed  # type: ignore[attr-defined]


def test_the_floor_beside_a_conductor_retraces_statics_rounds(
    tmp_path: Path, standin: StandIn, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The conductor's leaf and the floor's both fail round 1 with as many failing tests:
    the floor's retry starts from its own answer, told only of it, exactly as static's
    retry does (a tie used to move both to the conductor's answer, and with the real pair
    the floor lost a task static solved in round 2)."""
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    plan = json.dumps({"model_id": [1], "subtasks": ["Fix it."], "access_list": ["all"]})
    other = "calc.py\n```python\ndef add(a, b):\n    return b - a\n```\n"

    def respond(seen: Seen) -> str:
        if seen.body.get("model") == "planner":
            return plan
        if RETRY in seen.prompt():
            return RIGHT
        return WRONG if "Fix it." in seen.prompt() else other

    standin.responder = respond
    retries = {}
    for backend in ("static", "openai"):
        standin.seen.clear()
        (tmp_path / backend).mkdir()
        conductor = f'backend = "{backend}"\nmodel = "planner"\nbase_url = "{standin.url}/v1"'
        root = workspace(tmp_path / backend / "ws", standin.url, conductor)
        report = run_loop(root, [])
        assert report.end.passed  # type: ignore[attr-defined]
        asks = [s for s in standin.seen if RETRY in s.prompt() and s.body["model"] == "strong"]
        retries[backend] = asks[0].body["messages"]
        assert "return b - a" in asks[0].prompt() and "a * b" not in asks[0].prompt()
    rounds = report.rounds  # type: ignore[attr-defined]
    assert sorted(c.lane for c in rounds[0].candidates) == ["conductor", "floor"]
    assert retries["openai"] == retries["static"]
