"""Run the project's test command: own process group, hard timeout, bounded output.

The timeout is a limit whatever the tests start: at its end the process group is
killed, and so is every process the run started that left the group (a child with a
session of its own): each carries the run's mark in its environment, which ``/proc``
shows on Linux. Output is read until the command ends and then for at most
``DRAIN_SECONDS`` more, never until a pipe a stray process holds is closed.

For pytest, failures are also read as data (junit XML): test id, file, line,
message, so the loop can re-run failing tests first and the editor can show
them as diagnostics.
"""

from __future__ import annotations

import asyncio
import dataclasses
import os
import re
import shlex
import shutil
import signal
import sys
import tempfile
import time
import uuid
import xml.etree.ElementTree as ET
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path

from . import walls
from .confine import Confinement
from .result import HEAD_CHARS, TAIL_CHARS, TestFailure, TestRun, clip

#: The environment variable that marks every process of one test run.
MARK = "CONDUCTOR_TEST_RUN"
#: How long output is still read once the command ended (or was killed).
DRAIN_SECONDS = 1.0
#: What every test run gets unless ``[test] env`` says otherwise: a suite that iterates a
#: set fails in the same order on every run, so a model reads the same failure twice.
STEADY_ENV = {"PYTHONHASHSEED": "0"}


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
    confine: Confinement | None = None,
    env: Mapping[str, str] | None = None,
) -> TestRun:
    """Run ``command`` (a shell-like string); kill what it started at the timeout.
    ``confine``: code we did not write (``testrun.confine``): no keys in its
    environment, a private HOME and temp dir for this run alone. ``env``: variables
    the run gets besides (``[test] env``), over ``STEADY_ENV``. The run's paths read
    relative to ``cwd`` (and ``~`` for a private HOME), so the same failure reads the
    same in any sandbox."""
    argv = shlex.split(command)
    report = None
    home = tempfile.mkdtemp(prefix="conductor-home-") if confine is not None else None
    if is_pytest(argv):  # in the private folder when confined: the walls let it write
        fd, report = tempfile.mkstemp(prefix="conductor-junit-", suffix=".xml", dir=home)
        os.close(fd)
        argv += ["-o", "junit_family=xunit1", f"--junitxml={report}", *select]
    base = confine.environ(os.environ, Path(home)) if confine and home else dict(os.environ)
    base.update({**STEADY_ENV, **(env or {})})
    if confine and home and confine.walls and walls.probe().in_force:
        argv = walls.wrap(argv, [cwd, Path(home)])
    try:
        run = await _run(argv, command, cwd, timeout, report, tuple(select), base)
        return _as_shown(run, cwd, Path(home) if home else None)
    finally:  # a cancelled candidate's report too
        if report:
            Path(report).unlink(missing_ok=True)
        if home:
            shutil.rmtree(home, ignore_errors=True)


def _as_shown(run: TestRun, cwd: Path, home: Path | None) -> TestRun:
    """``run`` with the folder it ran in as ``.``, its private HOME as ``~`` and this
    interpreter as ``python``: no machine's paths in what a model is shown or a trace
    keeps."""
    places = {str(cwd): ".", str(cwd.resolve()): ".", sys.executable: "python"}
    if home is not None:
        places.update({str(home): "~", str(home.resolve()): "~"})
    order = sorted(places.items(), key=lambda kv: -len(kv[0]))
    # a whole path only: "/tmp/x" is not the start of "/tmp/xy"
    patterns = [(re.compile(re.escape(a) + r"(/|(?![\w.-]))"), _short(s)) for a, s in order]

    def shown(text: str) -> str:
        for pattern, short in patterns:
            text = pattern.sub(short, text)
        return text

    failures = tuple(
        dataclasses.replace(f, file=shown(f.file), message=shown(f.message)) for f in run.failures
    )
    return dataclasses.replace(
        run, command=shown(run.command), output=shown(run.output), failures=failures
    )


def _short(short: str) -> Callable[[re.Match[str]], str]:
    """What a path becomes: ``short``, and a path under it relative (``./a`` as ``a``)."""
    inside = "" if short == "." else short + "/"
    return lambda m: inside if m.group(1) else short


class Output:
    """What a run printed, its head and its tail kept (a test that prints gigabytes
    costs no memory), read until told to stop."""

    def __init__(self, head: int = HEAD_CHARS * 4, tail: int = TAIL_CHARS * 4) -> None:
        self.head, self.tail, self.cut = bytearray(), bytearray(), 0
        self._room_head, self._room_tail = head, tail

    def add(self, chunk: bytes) -> None:
        take = chunk[: max(self._room_head - len(self.head), 0)]
        self.head += take
        self.tail += chunk[len(take) :]
        if len(self.tail) > self._room_tail:
            over = len(self.tail) - self._room_tail
            del self.tail[:over]
            self.cut += over

    async def pump(self, stream: asyncio.StreamReader) -> None:
        while chunk := await stream.read(65536):
            self.add(chunk)

    def text(self) -> str:
        middle = f"\n... [{self.cut} bytes cut] ...\n".encode() if self.cut else b""
        return clip((bytes(self.head) + middle + bytes(self.tail)).decode("utf-8", "replace"))


async def _run(
    argv: list[str],
    command: str,
    cwd: Path,
    timeout: float,
    report: str | None,
    select: tuple[str, ...],
    env: dict[str, str],
) -> TestRun:
    started = time.monotonic()
    mark = uuid.uuid4().hex
    try:
        proc = await asyncio.create_subprocess_exec(
            *argv,
            cwd=str(cwd),
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.STDOUT,
            stdin=asyncio.subprocess.DEVNULL,
            start_new_session=True,
            env={**env, MARK: mark},
        )
    except OSError as e:
        return TestRun(command, 127, f"cannot start the test command: {e}", 0.0)
    assert proc.stdout is not None
    output = Output()
    reader = asyncio.create_task(output.pump(proc.stdout))
    timed_out = False
    try:
        await asyncio.wait_for(_exited(proc), timeout)
    except TimeoutError:
        timed_out = True
    finally:  # on cancel too: nothing the run started outlives it
        _kill_group(proc.pid)  # stray children left behind by the tests
        _kill_marked(mark)  # and those that left the group
        await _drain(reader, proc)
        await _exited(proc)  # the group was killed: this is at once
    text = output.text()
    failures: tuple[TestFailure, ...] = ()
    structured = False
    if report:
        failures, structured = _read_junit(Path(report), cwd)
    if not structured:
        failures = _guess_failures(text)
    return TestRun(
        command,
        -9 if proc.returncode is None else proc.returncode,
        text,
        time.monotonic() - started,
        timed_out,
        failures,
        structured and not timed_out,
        select,
    )


async def _exited(proc: asyncio.subprocess.Process) -> None:
    """Until the command itself has exited. Not ``proc.wait()``: on Python 3.11 that also
    waits for its output pipe to close, which a process that left the group may hold."""
    while proc.returncode is None:
        await asyncio.sleep(0.02)


async def _drain(reader: asyncio.Task[None], proc: asyncio.subprocess.Process) -> None:
    """Let the reader take what is left in the pipe, for at most ``DRAIN_SECONDS``; then
    stop reading (where a stray process still holds the pipe, the pipe is closed)."""
    try:
        await asyncio.wait_for(asyncio.shield(reader), DRAIN_SECONDS)
    except TimeoutError:
        reader.cancel()
        await asyncio.gather(reader, return_exceptions=True)
        transport = getattr(proc, "_transport", None)  # asyncio offers no public close
        if transport is not None:
            transport.close()


def _kill_marked(mark: str) -> int:
    """SIGKILL every process whose environment carries this run's mark (Linux: read from
    ``/proc``; elsewhere nothing is found and the group kill is all there is). Returns
    how many were killed."""
    needle = f"{MARK}={mark}".encode()
    killed = 0
    proc = Path("/proc")
    if not proc.is_dir():
        return 0
    for entry in proc.iterdir():
        if not entry.name.isdigit():
            continue
        try:
            environ = (entry / "environ").read_bytes()
        except OSError:  # gone, or not ours
            continue
        if needle in environ.split(b"\0"):
            try:
                os.kill(int(entry.name), signal.SIGKILL)
                killed += 1
            except (ProcessLookupError, PermissionError):
                pass
    return killed


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
        test_id = _test_id(file, classname, name, cwd)
        body = bad.text or ""
        line = int(case.get("line", "-1") or -1) + 1
        locs = [(f, int(n)) for f, n in _LOCATION.findall(body) if f == file]
        if locs:
            line = locs[-1][1]
        out.append(TestFailure(test_id, file, max(line, 0), bad.get("message", "") or body[-300:]))
    return tuple(out), True


def _test_id(file: str, classname: str, name: str, cwd: Path) -> str:
    """pytest's id for a junit case. A test a class inherits from a mixin in another
    module (``tests/__init__.py``) is run, and selected, as the class's module's:
    ``tests/test_cache.py::CacheTest::test_clear``, not where its code is."""
    module = file[:-3].replace("/", ".") if file.endswith(".py") else ""
    if module and classname.startswith(module + "."):
        inner = classname[len(module) + 1 :]
    else:
        parts = classname.split(".")
        cut = next(
            (
                k
                for k in range(len(parts), 0, -1)
                if (cwd.joinpath(*parts[:k]).with_suffix(".py")).is_file()
            ),
            0,
        )
        if cut:
            file, inner = "/".join(parts[:cut]) + ".py", ".".join(parts[cut:])
        else:
            inner = ""
    return "::".join(p for p in (file or classname, *inner.split("."), name) if p)


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
