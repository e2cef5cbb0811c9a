"""A test run as data: what the command printed (bounded, steady), whether it passed, and
for pytest each failure's test id, file, line and message."""

from __future__ import annotations

import re
from dataclasses import dataclass, field

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

    def state(self) -> str:
        """The run in a few words, the same in every door and every report: "green", "2
        failing", "timed out after 60s", or a failure that names no test."""
        if self.passed:
            return "green"
        if self.timed_out:
            return f"timed out after {self.seconds:.0f}s"
        if self.failing != UNKNOWN_FAILURES:
            return f"{self.failing} failing"
        return f"failed (exit {self.exit_code}, no failing test named)"

    def to_json(self) -> dict[str, object]:
        """What an agent reads of a run: the words above, and the failing tests by id
        (None where the run cannot say which: a crash, a hang)."""
        ids = self.failing_ids()
        return {
            "command": self.command,
            "state": self.state(),
            "passed": self.passed,
            "failing": len(ids) if ids is not None else None,
            "failing_tests": ids,
            "timed_out": self.timed_out,
            "seconds": round(self.seconds, 3),
        }

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
                f"- {f.test_id} at {f.file}:{f.line}: {_plain(f.message.splitlines()[0])[:200]}"
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


#: An object's address in a repr ("<function f at 0x7f5a0fe4cae0>"): new on every run;
#: also its tail where pytest cut a repr short ("Keyed([0, 1, ...7f15d8e03880>)").
_ADDRESS = re.compile(r" at 0x[0-9a-fA-F]{6,}|(?<=\.\.\.)[0-9a-f]{8,16}(?=>)")
#: pytest's temp folders (``tmp_path``), numbered anew on every run.
_PYTEST_TMP = re.compile(r"(?:/[^\s'\"/]+)*/pytest-of-[^\s'\"/]+/pytest-\d+")
#: Where pytest's report of what failed begins; before it: start-up warnings, progress dots.
_REPORT = re.compile(r"^=+ (?:FAILURES|ERRORS) =+$", re.M)


def steady(output: str, structured: bool) -> str:
    """The output as a model should read it: the same failure gives the same text on every
    run (no seconds, no addresses, no numbered temp folders), and, when the failures are
    already listed from the report, pytest's account of them without the start-up noise
    before it."""
    text = output.strip()
    start = _REPORT.search(text) if structured else None
    if start is not None:
        text = text[start.start() :]
    return _plain(_TOOK.sub(r"\1", text))


def _plain(text: str) -> str:
    """Without what changes from run to run of the same failure: addresses, temp folders."""
    return _PYTEST_TMP.sub("<tmp>/pytest-N", _ADDRESS.sub("", text))


def clip(text: str, head: int = HEAD_CHARS, tail: int = TAIL_CHARS) -> str:
    """Keep the head and the tail of long output: errors show at both ends."""
    if len(text) <= head + tail:
        return text
    cut = len(text) - head - tail
    return f"{text[:head]}\n... [{cut} characters cut] ...\n{text[-tail:]}"
