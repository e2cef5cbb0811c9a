"""What a lane's next round is told of this one: each plan, each candidate's edits and
errors, and the tests afterwards (the loop's recursion).

The floor's history is its own: its retry is told only of the floor's attempts, so it is
asked, word for word, what static's retry is asked.
"""

from __future__ import annotations

from collections.abc import Sequence

from ..conductor.static import DIRECT, RETRY
from ..plan import access_text
from .candidates import Attempt, Candidate, Round, Verdict


def describe(rnd: Round, attempts: Sequence[Attempt] | None = None) -> str:
    """What the next round is told about this one (its recursion): each plan, each
    candidate's edits and errors, and the tests afterwards."""
    parts = []
    for attempt in attempts if attempts is not None else rnd.attempts:
        job = attempt.run
        steps = "\n".join(
            f"  {i}. {s.worker} ({s.role}, sees {access_text(s.access)}): {s.subtask}"
            for i, s in enumerate(job.plan.steps)
        )
        lines = [
            f"Plan ({job.plan.source}):\n{steps}",
            f"Job outcome: {job.outcome} {job.reason}".rstrip(),
        ]
        candidates = rnd.of(attempt)
        if not candidates:
            lines.append("No edit was applied.")
        for c in candidates:
            lines += _candidate_lines(c, len(candidates) > 1)
        parts.append("\n".join(lines))
    return "\n\n".join(parts)


def describe_leaf(rnd: Round, cand: Candidate, source: str = "") -> str:
    """The next round's history when it debugs from one candidate: that leaf alone, as
    the one-step plan it was (``source``, else its plan's own). For the floor's own
    call (``source`` "static") this is the very text ``static`` would show, so search's
    first leaf retraces static's rounds."""
    attempt = next(a for a in rnd.attempts if a.lane is cand.lane and a.wave == cand.wave)
    step = cand.step.step
    job = attempt.run
    source = source or job.plan.source
    lines = [
        f"Plan ({source}):\n  0. {step.worker} ({step.role}, sees all): {step.subtask}",
        f"Job outcome: {job.outcome} {job.reason}".rstrip(),
        *_candidate_lines(cand, False),
    ]
    return "\n".join(lines)


def _candidate_lines(c: Candidate, named: bool) -> list[str]:
    v = c.verdict or Verdict()
    head = f"Answer of step {c.step.index} ({c.worker}): " if named else ""
    lines = [
        f"{head}Edits applied to: {', '.join(v.applied)}"
        if v.applied
        else f"{head}No edit was applied."
    ]
    if v.errors:
        lines.append(f"Edit errors:\n{v.errors}")
    if v.tests is not None:
        t = v.tests
        state = (
            "PASSED" if t.passed else t.state().upper() if t.timed_out else f"{t.failing} failing"
        )
        lines.append(f"Tests afterwards: {state}")
    return lines


def follow(rnd: Round, lead: Candidate) -> str:
    """Its history is that leaf alone: for static's own call, the very text static's
    retry sees (the floor, kept across rounds), not every sibling's failure."""
    static = lead.step.step.subtask in (DIRECT, RETRY)
    return describe_leaf(rnd, lead, "static" if static else "")
