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
from dataclasses import dataclass, field
from pathlib import Path

HEAD_CHARS = 4_000
TAIL_CHARS = 12_000
#: Failing-test count used for a run that failed without saying which tests (a crash, a hang).
UNKNOWN_FAILURES = 10**6


@dataclass(frozen=True)
class TestFailure:
    __test__ = False  # not a pytest class
    test_id: str
    file: str
    line: int  # 1-based; 0 when unknown
    message: str


@dataclass(frozen=True)
class TestRun:
    __test__ = False  # not a pytest class
    command: str
    exit_code: int | None
    output: str
    seconds: float
    timed_out: bool = False
    failures: tuple[TestFailure, ...] = field(default=())
    structured: bool = False  # failures came from a report, not guessed
    selected: tuple[str, ...] = field(default=())

    @property
    def passed(self) -> bool:
        return self.exit_code == 0 and not self.timed_out

    @property
    def failing(self) -> int:
        """How bad this run is: 0 when green; a crash or hang counts as very bad."""
        if self.passed:
            return 0
        if self.structured and self.failures and not self.timed_out:
            return len(self.failures)
        return UNKNOWN_FAILURES

    def failing_ids(self) -> list[str] | None:
        """The failing tests by id; None when the run cannot say (a crash, a hang)."""
        if self.passed:
            return []
        if self.structured and self.failures:
            return sorted({f.test_id for f in self.failures})
        return None

    def signature(self) -> frozenset[tuple[str, str]]:
        """What failed and how, to notice when an edit changed nothing."""
        if self.structured:
            return frozenset(
                (f.test_id, f.message.splitlines()[0] if f.message else "") for f in self.failures
            )
        return frozenset({("output", self.output[-2000:])})

    def summary(self) -> str:
        """A compact report a model can act on."""
        if self.timed_out:
            state = f"TIMED OUT after {self.seconds:.0f}s (process group killed)"
        else:
            state = "PASSED" if self.passed else f"FAILED (exit {self.exit_code})"
        lines = [f"$ {self.command}", state]
        for f in self.failures[:20]:
            lines.append(
                f"- {f.test_id} at {f.file}:{f.line}: {f.message.splitlines()[0][:200]}"
                if f.message
                else f"- {f.test_id} at {f.file}:{f.line}"
            )
        lines.append(steady(self.output, self.structured))
        return "\n".join(lines)


#: pytest's closing count "2 failed, 1 passed in 1.41s": the seconds vary run to run, and
#: a prompt that differs only there makes a greedy model answer differently.
_TOOK = re.compile(
    r"\b(\d+ (?:failed|passed|errors?|skipped|xfailed|xpassed|warnings?|deselected)"
    r"(?:, \d+ \w+)*) in \d+(?:\.\d+)?s(?: \(\d+:\d\d:\d\d\))?"
)


#: An object's address in a repr ("<function f at 0x7f5a0fe4cae0>"): new on every run.
_ADDRESS = re.compile(r" at 0x[0-9a-fA-F]{6,}")
#: Where pytest's report of what failed begins; before it: start-up warnings, progress dots.
_REPORT = re.compile(r"^=+ (?:FAILURES|ERRORS) =+$", re.M)


def steady(output: str, structured: bool) -> str:
    """The output as a model should read it: the same failure gives the same text on every
    run (no seconds, no addresses), and, when the failures are already listed from the
    report, pytest's account of them without the start-up noise before it."""
    text = output.strip()
    start = _REPORT.search(text) if structured else None
    if start is not None:
        text = text[start.start() :]
    return _ADDRESS.sub("", _TOOK.sub(r"\1", text))


def clip(text: str, head: int = HEAD_CHARS, tail: int = TAIL_CHARS) -> str:
    """Keep the head and the tail of long output: errors show at both ends."""
    if len(text) <= head + tail:
        return text
    cut = len(text) - head - tail
    return f"{text[:head]}\n... [{cut} characters cut] ...\n{text[-tail:]}"


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
