"""Run the project's test command: own process group, hard timeout, bounded output.

For pytest, failures are also read as data (junit XML): test id, file, line,
message, so the loop can re-run failing tests first and the editor can show
them as diagnostics.
"""

from __future__ import annotations

import asyncio
import os
import re
import shlex
import signal
import tempfile
import time
import xml.etree.ElementTree as ET
from collections.abc import Sequence
from pathlib import Path

from .result import TestFailure, TestRun, clip


def is_pytest(argv: Sequence[str]) -> bool:
    return any(Path(a).name in ("pytest", "py.test") for a in argv[:3]) or (
        "-m" in argv[:3] and "pytest" in argv[:4]
    )


async def run_tests(
    command: str,
    cwd: Path,
    timeout: float,
    *,
    select: Sequence[str] = (),
) -> TestRun:
    """Run ``command`` (a shell-like string); kill its whole process group on timeout."""
    argv = shlex.split(command)
    report = None
    if is_pytest(argv):
        fd, report = tempfile.mkstemp(prefix="conductor-junit-", suffix=".xml")
        os.close(fd)
        argv += ["-o", "junit_family=xunit1", f"--junitxml={report}", *select]
    try:
        return await _run(argv, command, cwd, timeout, report, tuple(select))
    finally:  # a cancelled candidate's report too
        if report:
            Path(report).unlink(missing_ok=True)


async def _run(
    argv: list[str],
    command: str,
    cwd: Path,
    timeout: float,
    report: str | None,
    select: tuple[str, ...],
) -> TestRun:
    started = time.monotonic()
    try:
        proc = await asyncio.create_subprocess_exec(
            *argv,
            cwd=str(cwd),
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.STDOUT,
            stdin=asyncio.subprocess.DEVNULL,
            start_new_session=True,
        )
    except OSError as e:
        return TestRun(command, 127, f"cannot start the test command: {e}", 0.0)
    timed_out = False
    try:
        out, _ = await asyncio.wait_for(proc.communicate(), timeout)
    except TimeoutError:
        timed_out = True
        _kill_group(proc.pid)
        out, _ = await proc.communicate()
    except asyncio.CancelledError:
        _kill_group(proc.pid)
        await proc.wait()
        raise
    else:
        _kill_group(proc.pid)  # stray children left behind by the tests
    text = clip(out.decode("utf-8", "replace"))
    failures: tuple[TestFailure, ...] = ()
    structured = False
    if report:
        failures, structured = _read_junit(Path(report), cwd)
    if not structured:
        failures = _guess_failures(text)
    return TestRun(
        command,
        proc.returncode,
        text,
        time.monotonic() - started,
        timed_out,
        failures,
        structured and not timed_out,
        select,
    )


def _kill_group(pid: int) -> None:
    try:
        os.killpg(pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass


_LOCATION = re.compile(r"^([^\s:]+\.py):(\d+): ", re.M)


def _read_junit(path: Path, cwd: Path) -> tuple[tuple[TestFailure, ...], bool]:
    try:
        root = ET.parse(path).getroot()
    except (ET.ParseError, OSError):
        return (), False
    out = []
    for case in root.iter("testcase"):
        bad = case.find("failure")
        if bad is None:
            bad = case.find("error")
        if bad is None:
            continue
        file = case.get("file", "")
        name = case.get("name", "")
        classname = case.get("classname", "")
        module = file[:-3].replace("/", ".") if file.endswith(".py") else ""
        inner = (
            classname[len(module) + 1 :] if module and classname.startswith(module + ".") else ""
        )
        test_id = "::".join(p for p in (file or classname, *inner.split("."), name) if p)
        body = bad.text or ""
        line = int(case.get("line", "-1") or -1) + 1
        locs = [(f, int(n)) for f, n in _LOCATION.findall(body) if f == file]
        if locs:
            line = locs[-1][1]
        out.append(TestFailure(test_id, file, max(line, 0), bad.get("message", "") or body[-300:]))
    return tuple(out), True


def _guess_failures(text: str) -> tuple[TestFailure, ...]:
    """Other runners: a best effort from ``file:line:`` lines, marked as unstructured."""
    out = []
    for m in _LOCATION.finditer(text):
        end = text.find("\n", m.end())
        out.append(
            TestFailure(
                f"{m.group(1)}:{m.group(2)}",
                m.group(1),
                int(m.group(2)),
                text[m.end() : end if end > 0 else None].strip(),
            )
        )
    return tuple(out[:50])
