"""Walls around tests of code we did not write: no network, read-only outside the sandbox."""

from __future__ import annotations

import sys
import time
from pathlib import Path

import pytest
from helpers import WAIT

from conductor_lsp.testrun import Confinement, probe, run_tests
from conductor_lsp.testrun.walls import FAILED, Walls, main

PY = sys.executable
WALLED = probe()
needs_walls = pytest.mark.skipif(not WALLED.in_force, reason=f"no walls here: {WALLED.why}")

#: A test that tries to leave its sandbox: a file outside, the network, loopback.
ESCAPE = """
import pathlib, socket, sys
outside = pathlib.Path(sys.argv[1])
try:
    outside.write_text("escaped")
    print("OUTSIDE written")
except OSError as e:
    print("OUTSIDE refused", e.errno)
pathlib.Path("inside.txt").write_text("here")
print("INSIDE written")
try:
    socket.create_connection(("192.0.2.1", 80), timeout=3)
    print("NETWORK reached")
except OSError as e:
    print("NETWORK refused", e.errno)
server = socket.create_server(("127.0.0.1", 0))
socket.create_connection(server.getsockname(), timeout=3).close()
print("LOOPBACK works")
"""


@needs_walls
async def test_a_walled_run_writes_only_in_its_sandbox_and_reaches_no_network(
    tmp_path: Path,
) -> None:
    box, elsewhere = tmp_path / "box", tmp_path / "elsewhere"
    box.mkdir()
    elsewhere.mkdir()
    (box / "escape.py").write_text(ESCAPE)
    canary = elsewhere / "canary.txt"
    run = await run_tests(f"{PY} escape.py {canary}", box, WAIT, confine=Confinement())
    assert run.passed, run.output
    assert "OUTSIDE refused" in run.output and not canary.exists()
    assert "INSIDE written" in run.output and (box / "inside.txt").read_text() == "here"
    assert "NETWORK refused 101" in run.output  # ENETUNREACH: no route but loopback
    assert "LOOPBACK works" in run.output


async def test_without_walls_the_files_outside_are_open(tmp_path: Path) -> None:
    """``[test] walls = false`` (and a machine without user namespaces): only the
    environment is confined, as doctor then says."""
    box = tmp_path / "box"
    box.mkdir()
    (box / "escape.py").write_text(ESCAPE)
    canary = tmp_path / "canary.txt"
    run = await run_tests(f"{PY} escape.py {canary}", box, WAIT, confine=Confinement(walls=False))
    assert "OUTSIDE written" in run.output and canary.read_text() == "escaped"


@needs_walls
async def test_a_walled_pytest_run_still_reports_its_failures(tmp_path: Path) -> None:
    """The junit report lives in the run's private folder, which the walls leave open."""
    (tmp_path / "test_one.py").write_text("def test_one():\n    assert 1 == 2\n")
    run = await run_tests(f"{PY} -m pytest -q", tmp_path, WAIT, confine=Confinement())
    assert run.structured and [f.test_id for f in run.failures] == ["test_one.py::test_one"]


@needs_walls
async def test_a_walled_run_still_ends_at_its_timeout(tmp_path: Path) -> None:
    (tmp_path / "hang.py").write_text(
        "import subprocess, sys, time\n"
        "subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(900)'],"
        " start_new_session=True)\n"
        "print('started', flush=True)\n"
        "time.sleep(900)\n"
    )
    t0 = time.monotonic()
    run = await run_tests(f"{PY} hang.py", tmp_path, 2, confine=Confinement())
    assert time.monotonic() - t0 < 300
    assert run.timed_out and "started" in run.output


#: A test that looks for a process outside its run, and leaves one behind.
PEEK = """
import os, subprocess, sys
pid = int(sys.argv[1])
print("SEEN" if os.path.exists(f"/proc/{pid}") else "UNSEEN")
try:
    os.kill(pid, 0)
    print("SIGNALLED")
except ProcessLookupError:
    print("UNREACHABLE")
subprocess.Popen(["sleep", "613"], start_new_session=True)
"""


@needs_walls
async def test_a_walled_run_has_a_process_table_of_its_own(tmp_path: Path) -> None:
    """The user's other processes (here a stand-in) are neither visible nor signalled,
    and a process the tests left behind, outside their group, ends with the run."""
    import subprocess

    (tmp_path / "peek.py").write_text(PEEK)
    user = subprocess.Popen(["sleep", "613"])
    try:
        run = await run_tests(f"{PY} peek.py {user.pid}", tmp_path, WAIT, confine=Confinement())
        assert run.passed, run.output
        assert "UNREACHABLE" in run.output and user.poll() is None
        if WALLED.own_processes:
            assert "UNSEEN" in run.output
        left = subprocess.run(["pgrep", "-f", "^sleep 613$"], capture_output=True, text=True)
        assert left.stdout.split() == [str(user.pid)]  # only the user's own
    finally:
        user.kill()
        user.wait()


def test_walls_that_cannot_be_built_say_why(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["/nowhere"]) == FAILED  # no command
    assert "usage" in capsys.readouterr().err
    off = Walls(False, "user namespaces are off")
    assert "not walled off (user namespaces are off)" in off.describe()
    assert "no network" in Walls(True).describe()
    assert "a process table of their own" in Walls(True, own_processes=True).describe()
