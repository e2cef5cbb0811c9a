"""What a routing policy sees of a (task, worker, wording): named features, hashed.

Features are what the conductor sees, so a policy carries over to pools it has not seen:
the task (instruction words, error types of the failures, how many tests fail and files
may change, their size), the worker (its price rank in the pool, its strength rank, its
description's words, its name) and the wording, and the task's features crossed with the
worker's rank and the wording (which tasks a cheap worker fixes).
"""

from __future__ import annotations

import functools
import hashlib
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from ..protocols import WorkerInfo

DIM = 1 << 18
_WORD = re.compile(r"[a-z][a-z_]{2,}")
_ERROR = re.compile(r"\b([A-Z]\w*(?:Error|Exception|Failure))\b")
_FILE = re.compile(r"^- `([^`]+)` \((\d+) lines, (may change|read only)\)", re.M)
_FAIL = re.compile(r"^- \S+ at \S+: (.*)$", re.M)
_STOP = frozenset(
    {"the", "and", "for", "that", "this", "with", "from", "are", "was", "not", "but", "its",
     "into", "when", "make", "change", "task", "tests", "test", "failing", "fix", "code", "pass"}
)  # fmt: skip


@dataclass(frozen=True)
class Action:
    worker: str
    wording: str


def _bucket(n: int, edges: Sequence[int]) -> str:
    for edge in edges:
        if n <= edge:
            return f"<={edge}"
    return f">{edges[-1]}"


def task_features(brief: str) -> list[str]:
    """What the conductor is told about a task, as named features."""
    brief = brief.split("## What worked on similar tasks")[0]  # never its own advice
    text = brief.lower()
    head = text.split("## files")[0]
    out = ["bias"]
    out += sorted({f"w:{w}" for w in _WORD.findall(head) if w not in _STOP})
    out += sorted({f"e:{e}" for e in _ERROR.findall(brief)})
    files = _FILE.findall(brief)
    editable = [int(n) for _, n, state in files if state == "may change"]
    out.append(f"files:{_bucket(len(editable), (0, 1, 2))}")
    out.append(f"lines:{_bucket(sum(editable), (30, 100, 300))}")
    out.append(f"failing:{_bucket(len(_FAIL.findall(brief)), (1, 3))}")
    out.append("round:later" if "## previous attempt" in text else "round:first")
    return out


def worker_features(w: WorkerInfo, pool: Sequence[WorkerInfo]) -> tuple[list[str], list[str]]:
    """(the worker's features, the few that cross with the task's: its ranks)."""
    models = [m for m in pool if not m.is_tool] or [w]
    prices = sorted({m.price_in + m.price_out for m in models})
    strengths = sorted({m.strength for m in models})
    mine = w.price_in + w.price_out
    price = (
        "price:only"
        if len(prices) == 1
        else "price:cheapest"
        if mine == prices[0]
        else "price:priciest"
        if mine == prices[-1]
        else "price:mid"
    )
    strength = (
        "strength:only"
        if len(strengths) == 1
        else "strength:top"
        if w.strength == strengths[-1]
        else "strength:low"
    )
    ranks = [price, strength, "free" if mine == 0 else "paid"]
    words = sorted({f"d:{x}" for x in _WORD.findall(w.description.lower()) if x not in _STOP})
    return [*ranks, *words, f"name:{w.name}"], ranks


def features(
    brief_features: Sequence[str],
    action: Action,
    pool: Sequence[WorkerInfo],
    drop: Callable[[], bool] | None = None,
) -> list[int]:
    """The hashed features of one (task, action) pair; in fitting, ``drop`` says when to
    leave out an instruction word (with its crosses)."""
    info = next((w for w in pool if w.name == action.worker), None)
    if info is None:
        return []
    own, ranks = worker_features(info, pool)
    wording = f"i:{action.wording}"
    names = [*own, wording, *(f"{r}|{wording}" for r in ranks)]
    for t in brief_features:
        if drop is not None and t.startswith("w:") and drop():
            continue
        names.append(t)
        names += [f"{t}|{r}" for r in ranks]
        names.append(f"{t}|{wording}")
    return sorted({_hash(n) for n in names})


@functools.lru_cache(maxsize=1 << 16)
def _hash(name: str) -> int:
    return int.from_bytes(hashlib.blake2b(name.encode(), digest_size=8).digest(), "big") % DIM
