"""Mining a real git history built here: a bug fix with the test that proves it, a
refactor with no test, a flaky test, a test that needs a missing package and a merge.
Exactly the bug fix becomes a task; the others are skipped with their reasons; the
workspace and its git state are byte-identical after; a mined task never shows the fix.
With ``--merges`` the merge is mined too, named by its pull request's title; with
``--ray`` the same rows and task files come back from Ray workers."""

from __future__ import annotations

import json
import shlex
import subprocess
import sys
import tomllib
from pathlib import Path

import git
import pytest
from helpers import cli, config, hostile_git_config, worker
from standin import StandIn

from conductor_lsp.edits.workspace import apply_output_to_disk

CALC = "def add(a, b):\n    return a + b\n\n\ndef mul(a, b):\n    return a + b\n"
FIX_LINE = "    return a * b  # the fix\n"


def commit(repo: git.Repo, files: dict[str, str], message: str) -> str:
    root = Path(repo.working_dir)
    for rel, text in files.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text)
    repo.index.add(list(files))
    return repo.index.commit(message).hexsha


def history(root: Path) -> dict[str, str]:
    """The repository; returns each kind of commit's sha."""
    repo = git.Repo.init(root, initial_branch="main")
    shas = {
        "start": commit(
            repo,
            {"calc.py": CALC, "test_calc.py": "from calc import add\n\n\ndef test_add():\n"
             "    assert add(2, 3) == 5\n", "conftest.py": ""},
            "Start",
        )
    }  # fmt: skip
    shas["refactor"] = commit(repo, {"calc.py": CALC.replace("a, b", "x, y").replace(
        "a + b", "x + y")}, "Rename the arguments")  # fmt: skip
    calc = (Path(root) / "calc.py").read_text()
    shas["fix"] = commit(
        repo,
        {"calc.py": calc[: calc.rindex("    return")] + FIX_LINE.replace("a * b", "x * y"),
         "test_calc.py": "from calc import add, mul\n\n\ndef test_add():\n    assert add(2, 3) "
         "== 5\n\n\ndef test_mul():\n    assert mul(2, 3) == 6\n"},
        "Fix mul() multiplying",
    )  # fmt: skip
    flaky = (
        "from pathlib import Path\n\nfrom flake import value\n\n"  # in its sandbox: the
        "COUNTER = Path(__file__).with_name('.counter')\n\n\n"  # walls allow no other
        "def test_value():\n    n = int(COUNTER.read_text() or 0) "
        "if COUNTER.exists() else 0\n    COUNTER.write_text(str(n + 1))\n    assert n % 2 == 0 "
        "and value() == 1\n"
    )
    shas["flaky"] = commit(
        repo, {"flake.py": "def value():\n    return 1\n", "test_flake.py": flaky}, "Add flake"
    )
    shas["missing"] = commit(
        repo,
        {"extra.py": "def twice(x):\n    return 2 * x\n",
         "tests/test_extra.py": "import not_a_package_anyone_has\nfrom extra import twice\n\n\n"
         "def test_twice():\n    assert twice(2) == 4\n"},
        "Add twice() with a test that needs a package",
    )  # fmt: skip
    repo.git.checkout("-b", "side")
    commit(repo, {"side.py": "def s():\n    return 1\n", "test_side.py": "from side import s\n"
           "\n\ndef test_s():\n    assert s() == 1\n"}, "Side work")  # fmt: skip
    repo.git.checkout("main")
    repo.git.merge("side", "--no-ff", "-m", "Merge pull request #7 from dev/side", "-m", "Add s()")
    shas["merge"] = repo.head.commit.hexsha
    return shas


def git_state(root: Path) -> dict[str, object]:
    run = lambda *a: subprocess.run(["git", "-C", str(root), *a], capture_output=True).stdout  # noqa: E731
    return {
        "head": run("rev-parse", "HEAD"),
        "index": (root / ".git" / "index").read_bytes(),
        "stash": run("stash", "list"),
        "status": run("status", "--porcelain", "--untracked-files=all"),
        "untracked": (root / "notes.txt").read_bytes(),
        "worktrees": run("worktree", "list", "--porcelain"),
        "calc": (root / "calc.py").read_bytes(),
    }


@pytest.fixture
def mined(tmp_path: Path) -> tuple[Path, Path, dict[str, str], str]:
    root = tmp_path / "repo"
    shas = history(root)
    (root / "notes.txt").write_text("untracked work\n")
    (root / "calc.py").write_text((root / "calc.py").read_text() + "# uncommitted edit\n")
    subprocess.run(["git", "-C", str(root), "stash"], check=True, capture_output=True)
    (root / "calc.py").write_text((root / "calc.py").read_text() + "# another edit\n")
    before = git_state(root)
    out = tmp_path / "suite"
    done = cli("mine", str(root), "--out", str(out))
    assert done.returncode == 0, done.stderr
    assert git_state(root) == before  # HEAD, index, stash, untracked and edits untouched
    return root, out, shas, done.stdout


def test_exactly_the_bug_fix_becomes_a_task(mined: tuple[Path, Path, dict[str, str], str]) -> None:
    _, out, shas, stdout = mined
    tasks = [p for p in out.iterdir() if (p / "task.toml").is_file()]
    assert [t.name for t in tasks] == [f"{shas['fix'][:10]}-fix-mul-multiplying"]
    spec = tomllib.loads((tasks[0] / "task.toml").read_text())
    assert spec["instruction"] == "Fix mul() multiplying"
    assert spec["mined"]["commit"] == shas["fix"] and spec["mined"]["files"] == ["calc.py"]
    assert spec["test"].endswith("test_calc.py::test_mul")
    assert "x * y" in spec["solution"]["edit"] and "x * y" not in (tasks[0] / "calc.py").read_text()
    for why in ("no test changed", "flaky: two runs after the fix disagree",
                "needs a package that is not installed (not_a_package_anyone_has)", "a merge",
                "the first commit (no parent to revert to)"):  # fmt: skip
        assert f"skipped 1: {why}" in stdout
    # The task fails as mined and passes with its known fix.
    pytest_ = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "test_calc.py"]
    assert subprocess.run(pytest_, cwd=tasks[0], capture_output=True).returncode == 1
    assert apply_output_to_disk(tasks[0], spec["solution"]["edit"]).written == ["calc.py"]
    assert subprocess.run(pytest_, cwd=tasks[0], capture_output=True).returncode == 0


def test_a_second_run_resumes(mined: tuple[Path, Path, dict[str, str], str]) -> None:
    root, out, _, _ = mined
    again = cli("mine", str(root), "--out", str(out))
    assert again.returncode == 0 and "(6 already mined, skipped)" in again.stdout
    assert "1 task(s) from 0 commit(s)" in again.stdout


def test_a_mined_task_never_shows_the_fix(
    mined: tuple[Path, Path, dict[str, str], str], tmp_path: Path
) -> None:
    _, out, _, _ = mined
    standin = StandIn().start()
    try:
        cfg = tmp_path / "pool.toml"
        cfg.write_text(config('backend = "static"', worker("coder", standin.url)))
        done = cli("eval", str(out), "--strategy", "static", "--config", str(cfg),
                   "--max-iterations", "1", "--out", str(tmp_path / "rows.jsonl"),
                   cwd=tmp_path)  # fmt: skip
        assert done.returncode in (0, 1), done.stderr
        assert standin.seen  # the worker was asked
        assert all("x * y" not in s.prompt() for s in standin.seen)
        assert any("def test_mul" in s.prompt() for s in standin.seen)
    finally:
        standin.stop()


def _rows(suite: Path) -> list[tuple[str, str, str]]:
    rows = [json.loads(line) for line in (suite / "mined.jsonl").read_text().splitlines()]
    return sorted((r["commit"], r["task"], r["reason"]) for r in rows)


def _files(suite: Path) -> dict[str, bytes]:
    return {
        str(p.relative_to(suite)): p.read_bytes()
        for p in sorted(suite.rglob("*"))
        if p.is_file() and p.name != "mined.jsonl"
    }


def test_merges_are_mined_against_their_first_parent_when_asked(
    mined: tuple[Path, Path, dict[str, str], str], tmp_path: Path
) -> None:
    root, out, shas, _ = mined
    done = cli("mine", str(root), "--out", str(tmp_path / "merges"), "--merges")
    assert done.returncode == 0, done.stderr
    tasks = sorted(p.name for p in (tmp_path / "merges").iterdir() if p.is_dir())
    assert tasks == sorted(
        [f"{shas['merge'][:10]}-add-s", f"{shas['fix'][:10]}-fix-mul-multiplying"]
    )
    merge = f"{shas['merge'][:10]}-add-s"
    spec = tomllib.loads((tmp_path / "merges" / merge / "task.toml").read_text())
    assert spec["instruction"] == "Add s()" and spec["mined"]["files"] == ["side.py"]
    assert "a merge" not in done.stdout
    # Without --merges, the same merge is skipped as one (the fixture's run).
    assert tuple(r[2] for r in _rows(out) if r[0] == shas["merge"]) == ("a merge",)


def test_ray_gives_the_rows_and_tasks_a_local_run_gives(
    mined: tuple[Path, Path, dict[str, str], str], tmp_path: Path
) -> None:
    pytest.importorskip("ray")
    root, out, _, _ = mined
    on_ray = tmp_path / "on-ray"
    done = cli("mine", str(root), "--out", str(on_ray), "--ray", "local", "--jobs", "2")
    assert done.returncode == 0, done.stderr[-2000:]
    assert "on Ray: 1 node(s), 2 CPUs" in done.stdout
    assert _rows(on_ray) == _rows(out) and sum(1 for r in _rows(out) if r[1]) == 1
    assert _files(on_ray) == _files(out)


def test_a_fix_whose_tests_cannot_run_is_named_by_its_error(tmp_path: Path) -> None:
    repo = git.Repo.init(tmp_path / "repo", initial_branch="main")
    commit(repo, {"calc.py": CALC, "test_calc.py": "def test_nothing():\n    pass\n"}, "Start")
    broken = CALC.replace("    return a + b\n", "    return a * (b\n", 1)  # a fix that cannot parse
    commit(repo, {"calc.py": broken, "test_calc.py": "from calc import mul\n\n\ndef test_mul():"
           "\n    assert mul(2, 3) == 6\n"}, "Fix mul, badly")  # fmt: skip
    done = cli("mine", str(tmp_path / "repo"), "--out", str(tmp_path / "suite"))
    assert done.returncode == 0, done.stderr
    assert "skipped 1: the tests do not run with the fix (SyntaxError)" in done.stdout
    assert "0 task(s)" in done.stdout


def test_a_src_layout_whose_config_names_a_missing_plugin_is_mined_and_runs(
    tmp_path: Path,
) -> None:
    """A package under ``src/`` (not installed) and ``addopts`` naming a plugin's option
    this Python lacks: each run's own error adds what it asks for, and the task's test
    command carries it, so the task fails as mined and passes with its fix."""
    repo = git.Repo.init(tmp_path / "repo", initial_branch="main")
    ini = '[tool.pytest.ini_options]\naddopts = "--an-option-of-a-plugin-not-here"\n'
    test = "from calc import add\n\n\ndef test_add():\n    assert add(2, 3) == 5\n"
    files = {"pyproject.toml": ini, "src/calc/__init__.py": CALC, "tests/test_calc.py": test}
    commit(repo, files, "Start")
    more = "from calc import mul\n\n\ndef test_mul():\n    assert mul(2, 3) == 6\n"
    commit(repo, {"src/calc/__init__.py": CALC[: CALC.rindex("    return")] + FIX_LINE,
                  "tests/test_calc.py": test + "\n\n" + more}, "Fix mul")  # fmt: skip
    done = cli("mine", str(tmp_path / "repo"), "--out", str(tmp_path / "suite"))
    assert done.returncode == 0, done.stderr
    assert "1 task(s)" in done.stdout, done.stdout
    (task,) = [p for p in (tmp_path / "suite").iterdir() if (p / "task.toml").is_file()]
    spec = tomllib.loads((task / "task.toml").read_text())
    assert spec["test"].endswith("-o addopts= -o pythonpath=src tests/test_calc.py::test_mul")
    command = [sys.executable, *shlex.split(spec["test"])[1:]]
    assert subprocess.run(command, cwd=task, capture_output=True).returncode == 1
    assert apply_output_to_disk(task, spec["solution"]["edit"]).written == ["src/calc/__init__.py"]
    assert subprocess.run(command, cwd=task, capture_output=True).returncode == 0


def test_a_users_git_settings_do_not_reach_the_known_answer(tmp_path: Path) -> None:
    """``diff.external``, ``color.ui = always`` and ``diff.noprefix`` in the user's own git
    configuration: the mined task's known answer is git's plain diff all the same, and it
    applies."""
    root = tmp_path / "repo"
    history(root)
    hostile = hostile_git_config(tmp_path)
    out = tmp_path / "suite"
    done = cli("mine", str(root), "--out", str(out), env={"GIT_CONFIG_GLOBAL": str(hostile)})
    assert done.returncode == 0, done.stderr
    (task,) = [p for p in out.iterdir() if (p / "task.toml").is_file()]
    edit = tomllib.loads((task / "task.toml").read_text())["solution"]["edit"]
    assert "NOT A DIFF" not in edit and "\x1b[" not in edit
    assert "--- a/calc.py" in edit and "+++ b/calc.py" in edit
    assert apply_output_to_disk(task, edit).written == ["calc.py"]


def test_a_link_out_of_the_tree_in_the_history_is_left_out_not_a_crash(tmp_path: Path) -> None:
    """``ln -s ../../.. up`` committed before the fix: the commit's tree is checked out
    without the link (tarfile's data filter refuses it) and the fix is mined as before;
    the link's target outside is untouched."""
    root = tmp_path / "repo"
    history(root)
    repo = git.Repo(root)
    (root / "up").symlink_to("../../..")
    (root / "abs").symlink_to("/etc/passwd")
    repo.index.add(["up", "abs"])
    repo.index.commit("Add links out of the tree")
    calc = (root / "calc.py").read_text()
    commit(repo, {"calc.py": calc.replace("x + y", "x - y", 1)}, "Break add")
    more = "\n\ndef test_add_again():\n    assert add(1, 1) == 2\n"
    tests = (root / "test_calc.py").read_text() + more
    commit(repo, {"calc.py": calc, "test_calc.py": tests}, "Fix add")
    out = tmp_path / "suite"
    for _ in range(2):  # and a second run resumes past it
        done = cli("mine", str(root), "--out", str(out))
        assert done.returncode == 0, done.stdout + done.stderr
        assert "Traceback" not in done.stderr
    tasks = [p for p in out.iterdir() if (p / "task.toml").is_file()]
    assert len(tasks) >= 2  # the first fix, and the one after the links
    assert all(not (t / "up").exists() and not (t / "abs").exists() for t in tasks)


def test_a_history_with_a_submodule_and_binary_blobs_is_mined_past(tmp_path: Path) -> None:
    """A gitlink (a submodule's commit), a binary file changed beside the code and a file
    name no file system likes: each commit is judged or skipped with a reason."""
    root = tmp_path / "repo"
    history(root)
    repo = git.Repo(root)
    sub = git.Repo.init(tmp_path / "lib")
    commit(sub, {"lib.py": "X = 1\n"}, "lib")
    repo.git.update_index(
        "--add", "--cacheinfo", f"160000,{sub.head.commit.hexsha},vendor/lib"
    )  # a submodule's entry, its content not here
    (root / "data.bin").write_bytes(bytes(range(256)) * 64)
    repo.index.add(["data.bin"])
    repo.index.commit("Vendor a library and some data")
    calc = (root / "calc.py").read_text()
    commit(repo, {"calc.py": calc.replace("x + y", "x - y", 1)}, "Break add")
    (root / "data.bin").write_bytes(bytes(range(255, -1, -1)) * 64)
    more = "\n\ndef test_add_again():\n    assert add(1, 1) == 2\n"
    tests = (root / "test_calc.py").read_text() + more
    repo.index.add(["data.bin"])
    commit(repo, {"calc.py": calc, "test_calc.py": tests}, "Fix add, refresh the data")
    out = tmp_path / "suite"
    for _ in range(2):
        done = cli("mine", str(root), "--out", str(out))
        assert done.returncode == 0 and "Traceback" not in done.stderr, done.stderr
    log = (out / "mined.jsonl").read_text().splitlines() if (out / "mined.jsonl").exists() else []
    tasks = [p for p in out.iterdir() if (p / "task.toml").is_file()]
    assert tasks, (done.stdout, log)


@pytest.mark.parametrize("layout", ["src/calc.py", "src/calc/__init__.py", "calc.py"])
def test_a_module_of_the_tree_is_never_called_a_missing_package(
    tmp_path: Path, layout: str
) -> None:
    """An import of the tree's own module that fails (a src layout not on the path, a
    submodule the fix adds) is no package to install: mining does not skip the commit
    as one, and asks for ``pythonpath=src`` where the module lives under ``src/``."""
    from conductor_lsp.mine.sandbox import SRC_PATH, _asks_for, _missing_package
    from conductor_lsp.testrun import TestRun

    run = TestRun("pytest", 2, "E   ModuleNotFoundError: No module named 'calc.sub'", 0.1)
    assert _missing_package(run, tmp_path, ()) == "needs a package that is not installed (calc)"
    assert _asks_for(run, tmp_path, ()) == ()
    (tmp_path / layout).parent.mkdir(parents=True, exist_ok=True)
    (tmp_path / layout).write_text("X = 1\n")
    assert _missing_package(run, tmp_path, ()) == ""
    wanted = SRC_PATH if layout.startswith("src/") else ()
    assert _asks_for(run, tmp_path, ()) == wanted
    assert _asks_for(run, tmp_path, SRC_PATH) == ()


@pytest.mark.parametrize(
    ("added", "ours"),
    [(("src/calc.py",), True), (("src/calc/sub.py",), True), (("calc/sub.py",), True),
     (("calc.py",), True), (("src/calcx.py",), False), (("calcx/sub.py",), False),
     (("tests/calc.py",), False)],
)  # fmt: skip
def test_only_a_fix_adding_the_module_itself_makes_it_ours(
    tmp_path: Path, added: tuple[str, ...], ours: bool
) -> None:
    """A module missing before the fix is the tree's own only when the fix adds that very
    module (a file or a package, at the root or under ``src/``), not one whose name starts
    with it, nor a file of that name elsewhere."""
    from conductor_lsp.mine.sandbox import _missing_package
    from conductor_lsp.testrun import TestRun

    run = TestRun("pytest", 2, "E   ModuleNotFoundError: No module named 'calc'", 0.1)
    want = "" if ours else "needs a package that is not installed (calc)"
    assert _missing_package(run, tmp_path, added) == want
