"""A routing policy fitted in seconds from verdicts and bills.

Its actions are (worker, wording) pairs: a model worker of the pool, asked in one of a
small library of subtask wordings (the baseline's "make the change", "find the cause"
first, and subtasks that won in episodes). For a task it predicts, per action, the
chance the answer turns the tests green (logistic regression on hashed features) and
what it costs (from the bills it has seen, else the worker's price), and picks a round's
leaves: the cheapest set whose chance of a green round reaches ``target``, most likely
first. Later rounds escalate: the strongest worker's retry always runs, beside the
policy's best remaining pick.

Features are what the conductor sees, so a policy carries over to pools it has not seen:
the task (instruction words, error types of the failures, how many tests fail and files
may change, their size), the worker (its price rank in the pool, its strength rank, its
description's words, its name) and the wording, and the task's features crossed with the
worker's rank and the wording (which tasks a cheap worker fixes).

Saved as JSON (no pickle): weights by hashed feature, the wordings, per-worker bills,
what it was trained on and its held-out figures. A file that is not a policy is a
``ConfigError``.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import math
import os
import re
import tempfile
import time
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..errors import ConfigError
from ..plan import Plan, Step, infer_role
from ..protocols import WorkerInfo
from .search import CAUSE
from .static import BASELINE, RETRY, strongest

FORMAT = "conductor-lsp-policy"
VERSION = 1
DIM = 1 << 18
WORDINGS = {"direct": BASELINE, "cause": CAUSE}
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


@dataclass
class Example:
    """One judged candidate: the task's brief, the pool, the action, and what came of it."""

    brief: str
    workers: Sequence[WorkerInfo]
    action: Action
    green: bool
    cost: float = 0.0
    seconds: float = 0.0


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
    brief_features: Sequence[str], action: Action, pool: Sequence[WorkerInfo]
) -> list[int]:
    """The hashed features of one (task, action) pair."""
    info = next((w for w in pool if w.name == action.worker), None)
    if info is None:
        return []
    own, ranks = worker_features(info, pool)
    wording = f"i:{action.wording}"
    names = [*own, wording, *(f"{r}|{wording}" for r in ranks)]
    for t in brief_features:
        names.append(t)
        names += [f"{t}|{r}" for r in ranks]
        names.append(f"{t}|{wording}")
    return sorted({_hash(n) for n in names})


def _hash(name: str) -> int:
    return int.from_bytes(hashlib.blake2b(name.encode(), digest_size=8).digest(), "big") % DIM


def _sigmoid(z: float) -> float:
    return 1 / (1 + math.exp(-max(-30.0, min(30.0, z))))


@dataclass
class Policy:
    weights: dict[int, float] = field(default_factory=dict)
    wordings: dict[str, str] = field(default_factory=lambda: dict(WORDINGS))
    #: Per worker name: [answers billed, total $, total seconds].
    bills: dict[str, list[float]] = field(default_factory=dict)
    #: What it was fitted on, when, and its held-out figures (for doctor).
    about: dict[str, Any] = field(default_factory=dict)
    target: float = 0.8

    # --- learning -----------------------------------------------------------------------

    def fit(self, examples: Sequence[Example], *, epochs: int = 30, l2: float = 1e-3) -> None:
        """Logistic regression by AdaGrad over the examples (seconds for thousands)."""
        rows = [(features(task_features(e.brief), e.action, e.workers), e.green) for e in examples]
        rows = [(x, y) for x, y in rows if x]
        w = self.weights
        g2: dict[int, float] = {}
        for _ in range(epochs):
            for x, y in rows:
                err = _sigmoid(sum(w.get(i, 0.0) for i in x)) - float(y)
                for i in x:
                    grad = err + l2 * w.get(i, 0.0)
                    g2[i] = g2.get(i, 0.0) + grad * grad
                    w[i] = w.get(i, 0.0) - 0.5 * grad / math.sqrt(g2[i] + 1e-8)
        for e in examples:
            bill = self.bills.setdefault(e.action.worker, [0.0, 0.0, 0.0])
            bill[0] += 1
            bill[1] += e.cost
            bill[2] += e.seconds

    def learn_wording(self, subtask: str) -> str:
        """The library key of a subtask that won (added when new)."""
        for key, text in self.wordings.items():
            if text == subtask:
                return key
        key = f"learned-{len(self.wordings)}"
        self.wordings[key] = subtask
        return key

    # --- predicting -----------------------------------------------------------------------

    def p_green(self, brief: str, action: Action, pool: Sequence[WorkerInfo]) -> float:
        x = features(task_features(brief), action, pool)
        return _sigmoid(sum(self.weights.get(i, 0.0) for i in x)) if x else 0.0

    def cost(self, action: Action, pool: Sequence[WorkerInfo], prompt_tokens: int) -> float:
        """$ for one answer: the mean of what this worker was billed, else from its price."""
        bill = self.bills.get(action.worker)
        if bill and bill[0]:
            return bill[1] / bill[0]
        info = next((w for w in pool if w.name == action.worker), None)
        if info is None:
            return math.inf
        return (prompt_tokens * info.price_in + 600 * info.price_out) / 1_000_000

    def seconds(self, action: Action) -> float:
        """Seconds for one answer, as billed so far (0 when unknown)."""
        bill = self.bills.get(action.worker)
        return bill[2] / bill[0] if bill and bill[0] else 0.0

    def actions(self, pool: Sequence[WorkerInfo]) -> list[Action]:
        return [Action(w.name, k) for w in pool if not w.is_tool for k in self.wordings]

    def rank(
        self, brief: str, pool: Sequence[WorkerInfo], prompt_tokens: int = 2000
    ) -> list[tuple[Action, float, float]]:
        """Every action with its chance and its cost, most likely first."""
        out = [
            (a, self.p_green(brief, a, pool), self.cost(a, pool, prompt_tokens))
            for a in self.actions(pool)
        ]
        return sorted(out, key=lambda t: (-t[1], t[2]))

    def choose(
        self,
        brief: str,
        pool: Sequence[WorkerInfo],
        max_steps: int,
        budget: float = math.inf,
        prompt_tokens: int = 2000,
    ) -> list[tuple[Action, float, float]]:
        """The cheapest set of actions whose chance of at least one green answer reaches
        ``target`` (as close as the budget allows), most likely first."""
        ranked = [r for r in self.rank(brief, pool, prompt_tokens) if r[2] <= budget]
        chosen: list[tuple[Action, float, float]] = []
        miss = 1.0
        # Cheapest first: by $, then (free local models) by the seconds an answer took.
        for r in sorted(ranked, key=lambda t: (t[2], self.seconds(t[0]), -t[1])):
            if 1 - miss >= self.target or len(chosen) >= max_steps:
                break
            if r[1] < 0.05 or sum(c[2] for c in chosen) + r[2] > budget:
                continue
            chosen.append(r)
            miss *= 1 - r[1]
        if not chosen and ranked:
            chosen = [ranked[0]]
        return sorted(chosen, key=lambda t: -t[1])

    def plan(
        self,
        brief: str,
        pool: Sequence[WorkerInfo],
        max_steps: int,
        *,
        later: bool,
        budget: float = math.inf,
    ) -> Plan:
        """A round's plan: the chosen leaves; in a later round the strongest worker's retry
        first (escalation), then the policy's best other pick."""
        if later:
            strong = strongest(pool)
            steps = [Step(strong.name, RETRY, (), "debugging")]
            for a, p, _ in self.rank(brief, pool):
                if a.worker != strong.name and len(steps) < max_steps and p >= 0.05:
                    steps.append(Step(a.worker, RETRY, (), "debugging"))
                    break
        else:
            steps = []
            for a, _, _ in self.choose(brief, pool, max_steps, budget):
                text = self.wordings[a.wording]
                steps.append(Step(a.worker, text, (), infer_role(text)))
        notes = tuple(self.figures(brief, pool).splitlines())
        return Plan(steps=tuple(steps), source="policy", notes=notes)

    def figures(self, brief: str, pool: Sequence[WorkerInfo]) -> str:
        """What a model conductor is told: per worker, its best wording's chance and $."""
        best: dict[str, tuple[float, float, str]] = {}
        for a, p, c in self.rank(brief, pool):
            if a.worker not in best:
                best[a.worker] = (p, c, a.wording)
        return "\n".join(
            f"{w}: fixes similar tasks {p:.0%} of the time (asked '{k}'), about ${c:.4f}"
            for w, (p, c, k) in best.items()
        )

    # --- files ------------------------------------------------------------------------------

    def to_json(self) -> dict[str, Any]:
        return {
            "format": FORMAT,
            "version": VERSION,
            "target": self.target,
            "wordings": self.wordings,
            "bills": self.bills,
            "about": self.about,
            "weights": {str(k): round(v, 6) for k, v in self.weights.items() if abs(v) > 1e-9},
        }

    @classmethod
    def from_json(cls, data: Any, where: str = "policy") -> Policy:
        if not isinstance(data, dict) or data.get("format") != FORMAT:
            raise ConfigError(
                f"{where} is not a conductor-lsp policy (train one with train --policy)"
            )
        if data.get("version") != VERSION:
            raise ConfigError(
                f"{where} is a policy of version {data.get('version')!r}; "
                f"this version reads {VERSION}"
            )
        try:
            return cls(
                weights={int(k): float(v) for k, v in data["weights"].items()},
                wordings={str(k): str(v) for k, v in data["wordings"].items()},
                bills={str(k): [float(x) for x in v][:3] for k, v in data["bills"].items()},
                about=dict(data.get("about") or {}),
                target=float(data.get("target", 0.8)),
            )
        except (KeyError, TypeError, ValueError, AttributeError) as e:
            raise ConfigError(f"{where} is a damaged policy: {e}") from e

    @classmethod
    def load(cls, path: Path) -> Policy:
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
        except OSError as e:
            raise ConfigError(f"cannot read the policy {path}: {e.strerror or e}") from e
        except ValueError as e:
            raise ConfigError(f"{path} is not a conductor-lsp policy: not JSON ({e})") from e
        return cls.from_json(data, str(path))

    def save(self, path: Path) -> None:
        """Atomically: a crash mid-write leaves the previous file whole."""
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", dir=path.parent)
        try:
            with os.fdopen(fd, "w", encoding="utf-8") as f:
                json.dump(self.to_json(), f)
                f.flush()
                os.fsync(f.fileno())
            os.replace(tmp, path)
        except BaseException:
            Path(tmp).unlink(missing_ok=True)
            raise


def steer(plan: Plan, policy: Policy, brief: str, pool: Sequence[WorkerInfo]) -> Plan:
    """The conductor's plan with each step's worker replaced by the policy's pick for that
    step's wording (the baseline's, for a wording it does not know): the cheapest worker
    whose chance reaches the target, else the likeliest."""
    steps = []
    for s in plan.steps:
        if _is_tool(s.worker, pool):
            steps.append(s)
            continue
        wording = index(policy.wordings, s.subtask) or "direct"
        ranked = [
            (policy.p_green(brief, Action(w.name, wording), pool), w.price_in + w.price_out, w.name)
            for w in pool
            if not w.is_tool
        ]
        sure = [r for r in ranked if r[0] >= policy.target]
        best = min(sure, key=lambda r: r[1])[2] if sure else max(ranked)[2]
        steps.append(dataclasses.replace(s, worker=best))
    note = "workers chosen by the routing policy"
    return dataclasses.replace(plan, steps=tuple(steps), notes=(*plan.notes, note))


def _is_tool(name: str, pool: Sequence[WorkerInfo]) -> bool:
    return any(w.name == name and w.is_tool for w in pool)


def stamp(policy: Policy, sources: Iterable[str], examples: int, **figures: Any) -> None:
    """Record what the policy was fitted on, and when (``doctor`` shows it)."""
    policy.about = {
        "trained_on": list(sources),
        "examples": examples,
        "when": time.strftime("%Y-%m-%d %H:%M"),
        **figures,
    }


def index(mapping: Mapping[str, str], text: str) -> str | None:
    """The library key of a wording's text, if it is in the library."""
    return next((k for k, v in mapping.items() if v == text), None)
