"""``mine``: walk the history, check each candidate in its sandbox, write each task that
qualifies, and log every commit's verdict (``mined.jsonl``) so a stopped run resumes where
it stopped. Progress is one line per commit; the report counts the skips by reason."""

from __future__ import annotations

import asyncio
import json
import re
import shlex
import shutil
import subprocess
import tarfile
import tempfile
from collections import Counter
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from pathlib import Path

from ..errors import ConductorError
from .history import Candidate, candidates
from .sandbox import Bundle, Checked, gather, judge

#: Runs a commit's tests from its bundle: ``sandbox.judge`` here, ``RayChecker`` on Ray.
Checker = Callable[[Bundle, Path], Awaitable[Checked]]

LOG = "mined.jsonl"
BARE = "Make the failing tests pass."


@dataclass
class MineReport:
    tasks: list[str] = field(default_factory=list)
    skipped: Counter[str] = field(default_factory=Counter)
    commits: int = 0
    resumed: int = 0
    seconds: float = 0.0

    def lines(self) -> list[str]:
        out = [f"{len(self.tasks)} task(s) from {self.commits} commit(s) in {self.seconds:.0f} s"]
        if self.resumed:
            out[0] += f" ({self.resumed} already mined, skipped)"
        out += [f"  skipped {n}: {why}" for why, n in self.skipped.most_common()]
        return out


def _toml(value: str) -> str:
    """A TOML basic string (JSON's escapes are TOML's; DEL must be escaped too)."""
    return json.dumps(value, ensure_ascii=False).replace("\x7f", "\\u007f")


def task_name(cand: Candidate) -> str:
    slug = re.sub(r"[^a-z0-9]+", "-", cand.subject.lower()).strip("-")[:40] or "commit"
    return f"{cand.short}-{slug}"


def write_task(out: Path, cand: Candidate, found: Checked) -> str:
    """The task folder: the box's files and ``task.toml`` (the fix kept, never shown)."""
    name = task_name(cand)
    dest = out / name
    shutil.rmtree(dest, ignore_errors=True)
    shutil.copytree(found.box, dest)
    ids = " ".join(shlex.quote(i) for i in (*found.options, *found.failing))
    lines = [
        f"instruction = {_toml(cand.subject)}",
        f"test = {_toml(f'python -m pytest -q {ids}')}",
        'kind = "bugfix"',
        "",
        "[mined]",
        f"commit = {_toml(cand.commit)}",
        f"parent = {_toml(cand.parent)}",
        f"date = {_toml(cand.date)}",
        f"bare = {_toml(BARE)}",
        f"files = [{', '.join(_toml(p) for p in cand.code)}]",
        f"tests = [{', '.join(_toml(p) for p in cand.tests)}]",
        f"solution_applies = {'true' if found.applies else 'false'}",
        "",
        "[solution]",
        "# The commit's own change to the code: checks the task, never shown to a worker.",
        f"edit = {_toml(found.solution)}",
    ]
    (dest / "task.toml").write_text("\n".join(lines) + "\n", encoding="utf-8")
    return name


def _done(out: Path) -> dict[str, dict[str, str]]:
    rows: dict[str, dict[str, str]] = {}
    log = out / LOG
    if log.is_file():
        for line in log.read_text(encoding="utf-8").splitlines():
            try:
                row = json.loads(line)
            except json.JSONDecodeError:
                continue  # a line cut by a stop: that commit runs again
            rows[row["commit"]] = row
    return rows


async def mine(
    root: Path,
    out: Path,
    *,
    max_tasks: int = 0,
    since: str = "",
    jobs: int = 1,
    merges: bool = False,
    checker: Checker = judge,
    on_line: Callable[[str], None] = lambda line: None,
) -> MineReport:
    """Mine ``root``'s history into the suite ``out`` (see the package docstring)."""
    root, out = root.resolve(), out.resolve()
    if out == root or root in out.parents:
        raise ConductorError(f"{out} is inside the workspace; mine into a folder outside it")
    out.mkdir(parents=True, exist_ok=True)
    done = _done(out)
    report = MineReport(tasks=[r["task"] for r in done.values() if r.get("task")])
    started = asyncio.get_running_loop().time()
    gate = asyncio.Semaphore(max(jobs, 1))
    with (
        tempfile.TemporaryDirectory(prefix="conductor-mine-") as work,
        (out / LOG).open("a") as log,
    ):

        def enough() -> bool:
            return bool(max_tasks) and len(report.tasks) >= max_tasks

        async def one(cand: Candidate) -> None:
            async with gate:
                if enough():  # not logged: a later run with a higher --max checks it
                    return
                row = await _verdict(root, cand, Path(work), out, report, max_tasks, checker)
                if row is None:
                    return
            report.commits += 1
            log.write(json.dumps(row) + "\n")
            log.flush()
            on_line(f"{cand.short} {row.get('task') or 'skipped: ' + row['reason']}")

        todo = []
        for cand in candidates(root, since, merges=merges):
            if cand.commit in done:
                report.resumed += 1
                continue
            todo.append(one(cand))
        await asyncio.gather(*todo)
    report.seconds = asyncio.get_running_loop().time() - started
    for row in done.values():
        if not row.get("task"):
            report.skipped[row["reason"]] += 1
    return report


async def _verdict(
    root: Path,
    cand: Candidate,
    work: Path,
    out: Path,
    report: MineReport,
    most: int,
    checker: Checker,
) -> dict[str, str] | None:
    """The commit's row for the log, or None when the suite filled up while it was
    checked (it is left for a later run)."""
    row = {"commit": cand.commit, "subject": cand.subject, "task": "", "reason": cand.skip}
    if not cand.skip:
        try:
            found = await checker(gather(root, cand), work)
        except (OSError, ValueError, subprocess.SubprocessError, tarfile.TarError) as e:
            # git or the archive failed
            box = Path(tempfile.mkdtemp(dir=work))
            found = Checked(box, skip=f"cannot check it out ({type(e).__name__})")
        except (ConductorError, LookupError, RuntimeError) as e:
            # whatever else one commit holds (an edit our edits refuse, a file git cannot
            # give): that commit is skipped with its reason, and the log lets a resume
            # move on past it
            box = Path(tempfile.mkdtemp(dir=work))
            found = Checked(box, skip=f"cannot judge it ({type(e).__name__})")
        row["reason"] = found.skip
        if not found.skip and most and len(report.tasks) >= most:
            shutil.rmtree(found.box, ignore_errors=True)
            return None
        if not found.skip:
            row["task"] = write_task(out, cand, found)
            report.tasks.append(row["task"])
        shutil.rmtree(found.box, ignore_errors=True)
    if row["reason"]:
        report.skipped[row["reason"]] += 1
    return row
