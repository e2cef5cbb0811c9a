"""Judging candidates: each answer applied and tested in a sandbox of its own, several at once.

The tests that failed at the round's start run first; a candidate that leaves exactly
those failures as they were is judged on them alone (it changed nothing that matters).
Any other candidate gets a whole-suite run, so every state the loop may keep or
write has a true count. The same edit on the same state is judged once. Test-file
edits are refused inside the sandbox as they always were (``guard``).
"""

from __future__ import annotations

import asyncio
import dataclasses
import hashlib
from collections.abc import Mapping
from pathlib import Path

from ..edits.model import EditsConfig
from ..edits.parse import parse_edits
from ..edits.workspace import apply_output_to_disk
from ..task import Task
from ..testrun import Confinement, TestRun, run_tests
from .candidates import Candidate, State, Verdict
from .guard import both, partial_guard, test_guard
from .sandbox import Workbench


def edit_signature(output: str) -> str:
    """The answer's edits, as a key: the same edits in other words are the same candidate."""
    edits, _ = parse_edits(output)
    return hashlib.sha256(
        repr(sorted((e.path, e.search, e.replace) for e in edits)).encode()
    ).hexdigest()


class Verifier:
    """Applies and tests candidates in sandboxes, at most ``jobs`` at once."""

    def __init__(
        self,
        bench: Workbench,
        command: str,
        timeout: float,
        edits: EditsConfig,
        *,
        allow_test_edits: bool = False,
        jobs: int = 2,
        confine: Confinement | None = None,
        env: Mapping[str, str] | None = None,
    ) -> None:
        """``confine``: how a candidate's tests run (code we did not write); ``env``: the
        variables every test run gets (``[test] env``)."""
        self.confine = confine or Confinement()
        self.env = dict(env or {})
        self.bench = bench
        self.command = command
        self.timeout = timeout
        self.edits = edits
        self.allow_test_edits = allow_test_edits
        self._slots = asyncio.Semaphore(max(1, jobs))
        self._judged: dict[tuple[str, str], tuple[Verdict, State | None]] = {}

    async def judge(self, cand: Candidate, base: State, task: Task) -> None:
        """Set ``cand.verdict`` (and ``cand.state`` when a whole run judged its edit)."""
        key = (base.label, await asyncio.to_thread(edit_signature, cand.step.text))
        if key in self._judged:
            verdict, state = self._judged[key]
            cand.verdict = dataclasses.replace(verdict, repeated=True)
            cand.state = state and dataclasses.replace(state, label=cand.label)
            return
        async with self._slots:
            box = await self.bench.open(base.files, f"r{cand.round}-s{cand.step.index}")
            try:
                await self._judge_in(box.path, cand, base, task)
            finally:
                await self.bench.discard(box)
        assert cand.verdict is not None
        self._judged[key] = (cand.verdict, cand.state)

    async def _judge_in(self, path: Path, cand: Candidate, base: State, task: Task) -> None:
        tests = None if self.allow_test_edits else test_guard(base.run)
        guard = both(tests, partial_guard(cand.step.partial))
        disk = await asyncio.to_thread(
            apply_output_to_disk,
            path,
            cand.step.text,
            self.edits,
            targets=task.editable(),
            guard=guard,
        )
        errors = disk.result.report()
        how = f"edited {', '.join(disk.written)} ({', '.join(disk.result.matches)})"
        notes = (how, *disk.result.notes) if disk.written else tuple(disk.result.notes)
        if not disk.written:  # the edits API drops a change that changes nothing, too
            cand.verdict = Verdict([], errors or "the answer held no edit", None, notes)
            return
        run = await self.tests(path, base.run)
        cand.verdict = Verdict(disk.written, errors, run, notes)
        if not run.selected:
            changed = {rel: (path / rel).read_bytes() for rel in disk.written}
            cand.state = State({**base.files, **changed}, run, cand.label)

    async def tests(self, path: Path, before: TestRun) -> TestRun:
        """The failing tests first; the whole suite unless they failed exactly as before."""
        if before.structured and before.failures:
            ids = [f.test_id for f in before.failures]
            first = await run_tests(
                self.command, path, self.timeout, select=ids, confine=self.confine, env=self.env
            )
            if not first.passed and first.signature() == before.signature():
                return first
        # Its paths read relative to the sandbox, as the workspace's read relative to it.
        return await run_tests(self.command, path, self.timeout, confine=self.confine, env=self.env)
