"""The test runner: real subprocesses, process groups, timeouts, structured failures."""

from __future__ import annotations

import asyncio
import os
import site
import sys
import tempfile
import time
from pathlib import Path

import pytest
from helpers import WAIT

from conductor_lsp.testrun import UNKNOWN_FAILURES, clip, run_tests

PY = sys.executable


def write_suite(root: Path) -> None:
    (root / "conftest.py").write_text("")
    (root / "calc.py").write_text("def add(a, b):\n    return a - b\n")
    (root / "test_calc.py").write_text(
        "from calc import add\n\n\ndef test_add():\n    assert add(2, 2) == 4\n\n\n"
        "class TestMore:\n    def test_zero(self):\n        assert add(0, 0) == 0\n\n"
        "    def test_neg(self):\n        assert add(-1, -1) == -2\n"
    )


async def test_pytest_failures_are_structured(tmp_path: Path) -> None:
    write_suite(tmp_path)
    run = await run_tests(f"{PY} -m pytest -q -p no:cacheprovider", tmp_path, 120)
    assert not run.passed and run.structured
    assert {f.test_id for f in run.failures} == {
        "test_calc.py::test_add",
        "test_calc.py::TestMore::test_neg",
    }
    add = next(f for f in run.failures if f.test_id.endswith("test_add"))
    assert add.file == "test_calc.py" and add.line == 5 and "assert 0 == 4" in add.message
    assert run.failing == 2


async def test_select_reruns_only_the_named_tests(tmp_path: Path) -> None:
    write_suite(tmp_path)
    run = await run_tests(
        f"{PY} -m pytest -q -p no:cacheprovider",
        tmp_path,
        120,
        select=["test_calc.py::TestMore::test_zero"],
    )
    assert run.passed and "1 passed" in run.output


async def test_hung_tests_are_killed_with_their_children(tmp_path: Path) -> None:
    pidfile = tmp_path / "child.pid"
    script = (
        "import subprocess, sys, time, pathlib;"
        f"p = subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(900)']);"
        f"pathlib.Path({str(pidfile)!r}).write_text(str(p.pid));"
        "time.sleep(900)"
    )
    (tmp_path / "hang.py").write_text(script)
    t0 = time.monotonic()
    run = await run_tests(f"{PY} hang.py", tmp_path, 1.5)
    assert run.timed_out and not run.passed and run.failing == UNKNOWN_FAILURES
    assert time.monotonic() - t0 < 300  # killed at 1.5 s, not after 900
    child = int(pidfile.read_text())
    for _ in range(50):
        try:
            os.kill(child, 0)
        except ProcessLookupError:
            break
        time.sleep(0.05)
    else:
        raise AssertionError("the grandchild survived the timeout")
    assert "TIMED OUT" in run.summary()


async def test_missing_command(tmp_path: Path) -> None:
    run = await run_tests("definitely-not-a-command-xyz", tmp_path, 5)
    assert not run.passed and "cannot start" in run.output


def test_clip_keeps_head_and_tail() -> None:
    text = "H" * 5000 + "M" * 50_000 + "T" * 13_000
    out = clip(text)
    assert out.startswith("H" * 4000) and out.endswith("T" * 12_000) and "characters cut" in out
    assert clip("short") == "short"


async def test_a_cancelled_run_leaves_no_report_behind(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Search cancels the candidates still testing once one is green: no file may pile up."""
    reports = tmp_path / "tmp"
    reports.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(reports))
    (tmp_path / "test_slow.py").write_text("import time\n\ndef test_slow():\n    time.sleep(60)\n")
    job = asyncio.ensure_future(run_tests(f"{PY} -m pytest -q -p no:cacheprovider", tmp_path, 120))
    for _ in range(100):  # until the report file exists and pytest is running
        await asyncio.sleep(0.05)
        if list(reports.glob("conductor-junit-*")):
            break
    assert list(reports.glob("conductor-junit-*"))
    job.cancel()
    with pytest.raises(asyncio.CancelledError):
        await job
    assert not list(reports.glob("conductor-junit-*"))
    done = await run_tests(f"{PY} -c pass", tmp_path, 30)  # and a run that ends normally
    assert done.passed and not list(reports.glob("*"))


async def test_the_summary_is_the_same_text_on_every_run(tmp_path: Path) -> None:
    """Greedy models answer a prompt that differs in one digit differently: no seconds and
    no object addresses (nor their tails, where pytest cut a repr short); start-up noise
    before pytest's failure report is dropped when the failures are read from the
    report."""
    (tmp_path / "conftest.py").write_text(
        "import warnings\n\n\ndef pytest_configure(config):\n"
        "    warnings.warn(UserWarning('start-up noise from a plugin'))\n"
    )
    (tmp_path / "test_f.py").write_text(
        "def f():\n    pass\n\n\ndef check(g):\n    assert g() == 1\n\n\n"
        "def test_f():\n    check(f)\n\n\n"
        "class Keyed(list):\n    def __init__(self, key):\n        super().__init__(range(30))\n"
        "        self.key = key\n\n    def __repr__(self):\n"
        "        return f'Keyed({list(self)!r}, key={self.key!r})'\n\n\n"
        "def test_keyed():\n    assert Keyed(lambda v: v) == list(range(50))\n"
    )
    command = f"{PY} -m pytest -q -p no:cacheprovider"
    first, second = [await run_tests(command, tmp_path, 60) for _ in range(2)]
    assert first.structured and "start-up noise" in first.output
    text = first.summary()
    assert text == second.summary()
    assert "0x" not in text and "start-up noise" not in text and " in 0." not in text
    assert "= FAILURES =" in text and "assert None == 1" in text and "2 failed" in text
    assert "assert Keyed([0, 1, ...>) == [0, 1, 2" in text  # the cut repr, without its tail


DETACHED = (
    "import subprocess, sys, pathlib, time\n"
    "p = subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(900)'],"
    " start_new_session=True)\n"  # its own session: the process group kill misses it
    "pathlib.Path(sys.argv[1]).write_text(str(p.pid))\n"
    "print('started', flush=True)\n"
    "time.sleep(float(sys.argv[2]))\n"
)


def _gone(pid: int) -> bool:
    """Whether ``pid`` has ended (a zombie waiting for its reaper counts), waiting for
    it up to the suite's hang guard."""
    deadline = time.monotonic() + WAIT
    while time.monotonic() < deadline:
        try:
            state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
        except (OSError, IndexError):
            return True
        if state in ("Z", "X"):
            return True
        time.sleep(0.05)
    return False


@pytest.mark.skipif(not Path("/proc").is_dir(), reason="finding detached processes needs /proc")
@pytest.mark.parametrize("lives", [0.0, 900.0], ids=["exits-at-once", "hangs"])
async def test_a_child_in_a_session_of_its_own_neither_outlives_nor_holds_the_run(
    tmp_path: Path, lives: float
) -> None:
    """A test that starts a child with ``start_new_session=True`` (which holds the output
    pipe for 900 s): the run ends at its timeout (or when the command exits), the child
    is killed, and a command that exited 0 is green, not a timeout."""
    (tmp_path / "detach.py").write_text(DETACHED)
    pidfile = tmp_path / "child.pid"
    t0 = time.monotonic()
    run = await run_tests(f"{PY} detach.py {pidfile} {lives}", tmp_path, 2)
    assert time.monotonic() - t0 < 300  # not the 900 s the child would hold the pipe
    assert "started" in run.output
    if lives:
        assert run.timed_out and run.state() == "timed out after 2s", run.state()
    else:
        assert run.passed and not run.timed_out and run.state() == "green"
    assert _gone(int(pidfile.read_text())), "the detached child outlived its test run"


async def test_output_is_bounded_whatever_a_test_prints(tmp_path: Path) -> None:
    (tmp_path / "loud.py").write_text(
        "import sys\nfor _ in range(2000):\n    sys.stdout.write('x' * 10_000 + '\\n')\n"
        "print('the end')\n"
    )
    run = await run_tests(f"{PY} loud.py", tmp_path, WAIT)
    assert run.passed and run.output.endswith("the end\n")
    assert len(run.output) < 100_000 and "characters cut" in run.output


async def test_where_strays_cannot_be_found_the_run_still_ends(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Without ``/proc`` (macOS) the detached child survives, and holds the pipe: the run
    stops reading a second after the command ended, and says what the command said."""
    from conductor_lsp.testrun import process

    monkeypatch.setattr(process, "_kill_marked", lambda mark: 0)
    (tmp_path / "detach.py").write_text(DETACHED)
    pidfile = tmp_path / "child.pid"
    t0 = time.monotonic()
    try:
        run = await run_tests(f"{PY} detach.py {pidfile} 0", tmp_path, WAIT)
        assert time.monotonic() - t0 < 300
        assert run.passed and not run.timed_out and "started" in run.output
    finally:
        os.kill(int(pidfile.read_text()), 9)


def test_a_confined_environment_holds_no_key() -> None:
    from conductor_lsp.testrun import Confinement

    base = {
        "PATH": "/usr/bin",
        "OPENAI_API_KEY": "sk-1",
        "GITHUB_TOKEN": "ghp-2",
        "DB_PASSWORD": "pw-3",
        "MY_LLM": "named-in-the-config",
        "ELSEWHERE": "sk-the-key-in-use",
        "LANG": "C.UTF-8",
        "HOME": "/home/someone",
    }
    confine = Confinement(frozenset({"MY_LLM"}), frozenset({"sk-the-key-in-use"}))
    with tempfile.TemporaryDirectory() as tmp:
        env = confine.environ(base, Path(tmp) / "home")
        assert env["PATH"] == "/usr/bin" and env["LANG"] == "C.UTF-8"
        assert not {"OPENAI_API_KEY", "GITHUB_TOKEN", "DB_PASSWORD", "MY_LLM", "ELSEWHERE"} & set(
            env
        )
        assert env["HOME"] == str(Path(tmp) / "home") and Path(env["TMPDIR"]).is_dir()
        # user-site packages stay importable; git has someone to commit as
        assert env["PYTHONUSERBASE"] == site.getuserbase()
        assert env["GIT_AUTHOR_NAME"] and env["GIT_COMMITTER_EMAIL"]
    assert "sk-the-key-in-use" not in repr(confine)
    assert confine.removed(base) == [
        "DB_PASSWORD", "ELSEWHERE", "GITHUB_TOKEN", "MY_LLM", "OPENAI_API_KEY",
    ]  # fmt: skip


async def test_a_confined_run_sees_no_key_and_a_home_of_its_own(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from conductor_lsp.testrun import Confinement

    monkeypatch.setenv("OPENAI_API_KEY", "sk-must-not-leak")
    (tmp_path / "peek.py").write_text(
        "import os, pathlib, tempfile\n"
        "print('KEY' if 'OPENAI_API_KEY' in os.environ else 'NO KEY')\n"
        "home = pathlib.Path(os.environ['HOME'])\n"
        "print('HOME', home, home.is_dir())\n"
        "print('TMP', tempfile.gettempdir())\n"
    )
    run = await run_tests(f"{PY} peek.py", tmp_path, WAIT, confine=Confinement())
    assert run.passed and "NO KEY" in run.output, run.output
    home = Path(run.output.split("HOME ", 1)[1].split()[0])
    assert f"HOME {home} True" in run.output  # made for the run
    assert home != Path.home() and not home.exists()  # and removed after it
    assert f"TMP {home}" in run.output
    plain = await run_tests(f"{PY} peek.py", tmp_path, WAIT)  # the user's own run
    assert "\nKEY" in "\n" + plain.output and f"HOME {Path.home()}" in plain.output


async def test_a_runs_paths_read_relative_to_where_it_ran(tmp_path: Path) -> None:
    """No machine's paths in what a model is shown: the folder the run is in is ``.``,
    a file in it its relative path, a private HOME ``~``; a longer path that merely
    starts the same is left alone. PYTHONHASHSEED is fixed unless ``env`` sets it."""
    from conductor_lsp.testrun import Confinement

    box = tmp_path / "box"
    box.mkdir()
    (box / "where.py").write_text(
        "import os, pathlib\n"
        "here = pathlib.Path.cwd()\n"
        "print('FILE', here / 'calc.py')\n"
        "print('DIR', here)\n"
        "print('SIBLING', str(here) + 'xyz')\n"
        "print('HOME', os.environ['HOME'] + '/cache')\n"
        "print('SEED', os.environ.get('PYTHONHASHSEED'))\n"
    )
    run = await run_tests(f"{PY} where.py", box, WAIT, confine=Confinement())
    lines = dict(line.split(" ", 1) for line in run.output.splitlines() if " " in line)
    assert lines["FILE"] == "calc.py" and lines["DIR"] == "."
    assert lines["SIBLING"] == f"{box}xyz" and lines["HOME"] == "~/cache"
    assert lines["SEED"] == "0"
    again = await run_tests(f"{PY} where.py", box, WAIT, env={"PYTHONHASHSEED": "random"})
    assert "SEED random" in again.output
