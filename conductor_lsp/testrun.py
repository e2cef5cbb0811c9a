"""Run the project's test command: own process group, hard timeout, bounded output."""

from __future__ import annotations

import asyncio
import os
import shlex
import signal
import time
from dataclasses import dataclass
from pathlib import Path

HEAD_CHARS = 4_000
TAIL_CHARS = 12_000


@dataclass(frozen=True)
class TestRun:
    __test__ = False  # not a pytest class
    command: str
    exit_code: int | None
    output: str
    seconds: float
    timed_out: bool = False

    @property
    def passed(self) -> bool:
        return self.exit_code == 0 and not self.timed_out

    def summary(self) -> str:
        """A compact report a model can act on."""
        if self.timed_out:
            state = f"TIMED OUT after {self.seconds:.0f}s (process group killed)"
        else:
            state = "PASSED" if self.passed else f"FAILED (exit {self.exit_code})"
        return f"$ {self.command}\n{state}\n{self.output.strip()}"


def clip(text: str, head: int = HEAD_CHARS, tail: int = TAIL_CHARS) -> str:
    """Keep the head and the tail of long output: errors show at both ends."""
    if len(text) <= head + tail:
        return text
    cut = len(text) - head - tail
    return f"{text[:head]}\n... [{cut} characters cut] ...\n{text[-tail:]}"


async def run_tests(
    command: str, cwd: Path, timeout: float, extra_env: dict[str, str] | None = None
) -> TestRun:
    """Run ``command`` (a shell-like string) and kill its whole group on timeout."""
    started = time.monotonic()
    env = {**os.environ, **(extra_env or {})}
    proc = await asyncio.create_subprocess_exec(
        *shlex.split(command),
        cwd=str(cwd),
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.STDOUT,
        stdin=asyncio.subprocess.DEVNULL,
        start_new_session=True,
        env=env,
    )
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
    text = clip(out.decode("utf-8", "replace"))
    return TestRun(command, proc.returncode, text, time.monotonic() - started, timed_out)


def _kill_group(pid: int) -> None:
    try:
        os.killpg(pid, signal.SIGKILL)
    except ProcessLookupError:
        pass
