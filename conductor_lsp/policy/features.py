"""What a routing policy sees of a (task, worker, wording): named features, hashed.

Features are what the conductor sees, so a policy carries over to pools it has not seen:
the task (instruction words, error types of the failures, how many tests fail and files
may change, their size), the worker (its price rank in the pool, its strength rank, its
description's words, its name) and the wording, and the task's features crossed with the
worker's rank and the wording (which tasks a cheap worker fixes).

With a local conductor model, the task can also be read through the model: its hidden
state of the brief, centred and cut by random hyperplanes into bits (``hidden_bits``),
which join the task's features and cross like them. A linear policy over those bits
can tell apart tasks that share no word.
"""

from __future__ import annotations

import functools
import hashlib
import math
import random
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
    """What the policy may choose: a worker asked in a wording, alone (``solo``) or as the
    last step of a shape whose other step is the ``helper``'s (``shapes``)."""

    worker: str
    wording: str
    shape: str = "solo"
    helper: str = ""

    @property
    def solo(self) -> bool:
        return self.shape == "solo"

    @property
    def bill_key(self) -> str:
        """Where its bills are kept: the worker's for one call, the shape's otherwise."""
        return self.worker if self.solo else f"{self.shape}:{self.helper}>{self.worker}"


@dataclass
class Hidden:
    """How a policy reads a conductor model's hidden state of the brief: whose state
    (``model``, as ``model_identity`` names it), the centre, how many hyperplane bits,
    and whether the instruction's words are read beside it."""

    model: str
    mean: list[float]
    bits: int = 64
    seed: int = 0
    words: bool = True


def _bucket(n: int, edges: Sequence[int]) -> str:
    for edge in edges:
        if n <= edge:
            return f"<={edge}"
    return f">{edges[-1]}"


def seen_brief(brief: str) -> str:
    """The brief without what a policy told the conductor (never read its own advice)."""
    return brief.split("\n\n## What worked on similar tasks")[0]


#: The sections a brief adds after the task's own words (``Task.brief``).
_AFTER_TASK = ("Files", "Diagnostics", "Failing tests", "Previous attempt", "What worked")


def task_head(brief: str) -> str:
    """What a brief says the task is, before its files, failures and attempts: the same
    for every round of one task (its words are features)."""
    cuts = [brief.find(f"\n## {name}") for name in _AFTER_TASK]
    return brief[: min([c for c in cuts if c >= 0], default=len(brief))]


def task_key(brief: str) -> str:
    """Which task a brief is of: its head and the files it may change, the same for every
    round (the trust folds group by it). Why the files: a fix with no words of the
    user's has the standing instruction as its whole head, so one workspace's tasks
    would all be one task, and the trust would never be measured on them."""
    brief = seen_brief(brief)
    mine = sorted({path for path, _, state in _FILE.findall(brief) if state == "may change"})
    return "\n".join([task_head(brief), *mine])


def task_features(brief: str) -> list[str]:
    """What the conductor is told about a task, as named features."""
    brief = seen_brief(brief)
    text = brief.lower()
    head = task_head(brief).lower()
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


def hidden_bits(
    vector: Sequence[float], mean: Sequence[float], bits: int, seed: int = 0
) -> list[str]:
    """The signs of the centred hidden state against ``bits`` random hyperplanes (SimHash),
    each as a named feature, both polarities (so a bit's weight never hides in the bias).

    Centring matters: a model's hidden states share a large common direction, and without
    subtracting the mean most hyperplanes would cut every brief the same way."""
    if len(vector) != len(mean):
        raise ValueError(f"a hidden state of size {len(vector)}; the policy expects {len(mean)}")
    centred = [v - m for v, m in zip(vector, mean, strict=True)]
    out = []
    for i, plane in enumerate(_planes(len(mean), bits, seed)):
        side = sum(a * b for a, b in zip(plane, centred, strict=True)) >= 0
        out.append(f"h:{i}{'+' if side else '-'}")
    return out


@functools.lru_cache(maxsize=8)
def _planes(dim: int, bits: int, seed: int) -> tuple[tuple[float, ...], ...]:
    rng = random.Random(f"conductor-lsp-planes:{seed}:{dim}")
    return tuple(tuple(rng.gauss(0.0, 1.0) for _ in range(dim)) for _ in range(bits))


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
    leave out an instruction word or a hidden-state bit (with its crosses)."""
    parts = feature_parts(brief_features, action, pool)
    if parts is None:
        return []
    return parts.pick(drop)


@dataclass(frozen=True)
class Parts:
    """One (task, action)'s hashed features, hashed once: those always there, and per task
    feature its group (itself and its crosses), marked when fitting may drop it."""

    fixed: tuple[int, ...]
    groups: tuple[tuple[bool, tuple[int, ...]], ...]

    def pick(self, drop: Callable[[], bool] | None = None, *, ordered: bool = True) -> list[int]:
        """The features of one pass: every group but those ``drop`` leaves out (asked
        once per droppable group, in order); ``ordered``: sorted and each once (fitting
        takes them as they come: names are distinct, so only a hash collision repeats)."""
        out = list(self.fixed)
        for droppable, group in self.groups:
            if drop is not None and droppable and drop():
                continue
            out += group
        return sorted(set(out)) if ordered else out


def feature_parts(
    brief_features: Sequence[str], action: Action, pool: Sequence[WorkerInfo]
) -> Parts | None:
    """The parts of ``features`` (None: the action's worker is not in the pool)."""
    info = next((w for w in pool if w.name == action.worker), None)
    if info is None:
        return None
    own, ranks = worker_features(info, pool)
    wording = f"i:{action.wording}"
    names = [*own, wording, *(f"{r}|{wording}" for r in ranks)]
    shape = _shape_features(action, pool, ranks)
    if shape is None:
        return None
    names += shape
    crosses = [*ranks, wording, *shape[:1]]  # a shape's name crosses the task's features
    groups = tuple(
        (t.startswith(("w:", "h:")), tuple(_hash(n) for n in [t, *(f"{t}|{c}" for c in crosses)]))
        for t in brief_features
    )
    return Parts(tuple(_hash(n) for n in names), groups)


def _shape_features(
    action: Action, pool: Sequence[WorkerInfo], mine: Sequence[str]
) -> list[str] | None:
    """A shape's own features: its name, crossed with the helper's and the worker's ranks
    (``mine``); none for a solo call, whose features are what they were before shapes
    (None: the helper is not in the pool)."""
    if action.solo:
        return []
    theirs = _helper_ranks(action, pool)
    if theirs is None:
        return None
    s = f"s:{action.shape}"
    return [
        s,
        f"{s}|hname:{action.helper}",
        *(f"{s}|h{h}" for h in theirs),
        *(f"{s}|h{h}|{m}" for h in theirs for m in mine),
    ]


def kind(brief_features: Sequence[str], action: Action, pool: Sequence[WorkerInfo]) -> str | None:
    """What a base rate is kept per: the worker's ranks in its pool, the wording and the
    round (a retry after a failed round is greener far less often). Ranks, not names, so
    a base rate carries over to a pool the policy has not seen (None: not in the pool)."""
    info = next((w for w in pool if w.name == action.worker), None)
    if info is None:
        return None
    _, ranks = worker_features(info, pool)
    later = "round:later" in brief_features
    parts = [*ranks, f"i:{action.wording}", "round:later" if later else "round:first"]
    if not action.solo:
        theirs = _helper_ranks(action, pool)
        if theirs is None:
            return None
        parts += [f"s:{action.shape}", *(f"h{r}" for r in theirs)]
    return "|".join(parts)


def _helper_ranks(action: Action, pool: Sequence[WorkerInfo]) -> list[str] | None:
    """The ranks of a shape's helper in the pool (None: it is not in the pool)."""
    helper = next((w for w in pool if w.name == action.helper), None)
    return None if helper is None else worker_features(helper, pool)[1]


@functools.lru_cache(maxsize=1 << 16)
def _hash(name: str) -> int:
    return int.from_bytes(hashlib.blake2b(name.encode(), digest_size=8).digest(), "big") % DIM


def sigmoid(z: float) -> float:
    return 1 / (1 + math.exp(-max(-30.0, min(30.0, z))))
