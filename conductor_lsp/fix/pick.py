"""Another of a finished job's candidates, in place of the one the job chose.

The user compares the candidates (worker, verdict, cost, diff) and applies one. Like the
job's own write it is all or nothing, refused when a file it touches changed since the
job left it (on disk, or in an unsaved buffer), and undoable: it begins and ends with a
checkpoint, as a job does, so a plain ``undo`` brings back what the job left.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

from ..checkpoints import store as cp
from ..edits.paths import check_path
from ..errors import EditError
from .candidates import Candidate
from .finish import changed_since, files_diff, write_verified
from .report import FixReport


@dataclass(frozen=True)
class Shown:
    """One candidate as the user compares them."""

    index: int
    label: str
    worker: str
    verdict: str
    tokens: int
    cost: float
    diff: str
    #: Whether it has a verified state to apply (an answer that applied and was judged).
    applicable: bool
    #: Whether the job ended with it.
    chosen: bool


def _before(root: Path, report: FixReport, rels: Sequence[str]) -> dict[str, bytes | None]:
    return {rel: cp.read_file(report.checkpoint, rel, root) for rel in rels}


def show(root: Path, report: FixReport) -> list[Shown]:
    """Every candidate of the job, in the order they were made."""
    out = []
    for i, c in enumerate(report.candidates):
        files = dict(c.state.files) if c.state else {}
        diff = files_diff(_before(root, report, sorted(files)), files) if files else ""
        usage = c.step.usage
        out.append(
            Shown(
                i,
                c.label,
                c.worker,
                c.verdict.text() if c.verdict else "not judged (another candidate was first)",
                usage.input_tokens + usage.output_tokens,
                c.step.cost,
                diff,
                c.state is not None,
                bool(report.best) and c.label == report.best,
            )
        )
    return out


@dataclass(frozen=True)
class Picked:
    candidate: Candidate
    written: list[str]
    #: Taken before the write: undo restores it.
    start: cp.Checkpoint


def pick(
    root: Path,
    report: FixReport,
    index: int,
    deny: Sequence[str],
    busy: Callable[[str], bool] = lambda rel: False,
) -> Picked:
    """Write candidate ``index``'s state over what the job left; ``EditError`` says why not."""
    root = root.resolve()
    cands = report.candidates
    if not 0 <= index < len(cands):
        raise EditError(f"no candidate {index}: the job had {len(cands)} (0-{len(cands) - 1})")
    cand = cands[index]
    if cand.state is None:
        why = cand.verdict.text() if cand.verdict else "never judged"
        raise EditError(f"candidate {index} ({cand.label}) has nothing verified to apply: {why}")
    left = report.end_checkpoint or report.checkpoint
    touched = sorted(set(cand.state.files) | set(report.written))
    for rel in touched:
        check_path(root, rel, deny)
    changed = [
        rel for rel in touched if changed_since(root, rel, cp.read_file(left, rel, root), busy)
    ]
    if changed:
        raise EditError(
            f"changed since the job ended: {', '.join(changed)}; nothing was written "
            "(save or undo your changes first)"
        )
    start = _before(root, report, touched)
    target = {rel: cand.state.files.get(rel, start[rel]) for rel in touched}
    before_cp = cp.create(root, f"{cp.JOB_START}: candidate {index} of {report.checkpoint.ref}")
    write_verified(root, target, deny)  # None: the job created it; this candidate did not
    cp.create(root, f"{cp.JOB_END}: candidate {index} ({cand.label})")
    return Picked(cand, touched, before_cp)
