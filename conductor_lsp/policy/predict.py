"""The routing policy as it predicts: for a task and a pool, per action (a model worker
asked in one wording of a small library: static's "direct", "find the cause", and
subtasks that won in episodes), the chance the answer turns the tests green and what it
costs; and the cheapest set of actions whose chance of a green round reaches ``target``.

How it is fitted is ``fit``; the plans it writes are ``plans``. Features (``features``)
are what the conductor sees, so a policy carries over to pools it has not seen. A
policy fitted with ``hidden`` also reads the conductor model's hidden state of the
brief (``see`` gives it, per brief); it names the model it was fitted with, and only
that model's states mean anything to it.

Saved as JSON (no pickle): weights by hashed feature, the wordings, per-worker bills,
the base rates per action kind and how far the weights are trusted against them, what
it was trained on and its held-out figures. A file that is not a policy is a
``ConfigError``.
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..conductor.shapes import Shape, ShapeName, calls
from ..conductor.static import CAUSE, DIRECT
from ..errors import ConfigError
from ..protocols import WorkerInfo
from ..storage.records import as_data, read, without
from ..storage.state import write_json
from . import rates
from .features import (
    Action,
    Hidden,
    features,
    hidden_bits,
    seen_brief,
    sigmoid,
    task_features,
)
from .rates import Bill, Rate
from .sets import choose_set
from .stop import StopRule

FORMAT = "conductor-lsp-policy"
VERSION = 3
#: Older files are read too: version 1 has no hidden-state features, versions 1 and 2
#: write bills and rates as positional lists.
READS = (1, 2, 3)
WORDINGS = {"direct": DIRECT, "cause": CAUSE}
#: The shapes beyond a solo call the policy chooses among (``shapes``).
CHOSEN = (ShapeName.ARCHITECT, ShapeName.REVIEW, ShapeName.PIPELINE)
#: Answers a worker new to a known pool is tried for at the policy's target chance.
TRIALS = 2
#: Answer tokens a worker's price is applied to when it has no bill yet.
ANSWER_TOKENS = 600


def _keep(memo: dict[str, list[str]], key: str, value: list[str], most: int = 4096) -> None:
    """Remember ``value``, forgetting the oldest entry past ``most`` (a long-lived server
    reads a brief per round)."""
    memo[key] = value
    if len(memo) > most:
        del memo[next(iter(memo))]


@dataclass
class Policy:
    weights: dict[int, float] = field(default_factory=dict)
    wordings: dict[str, str] = field(default_factory=lambda: dict(WORDINGS))
    #: Per worker name: what its answers were billed.
    bills: dict[str, Bill] = field(default_factory=dict)
    #: What it was fitted on, when, and its held-out figures (for doctor).
    about: dict[str, Any] = field(default_factory=dict)
    target: float = 0.8
    #: Set when fitted on a conductor model's hidden states (``train --policy --features``).
    hidden: Hidden | None = None
    #: When to give up on a lane (``stop``); None: never early.
    stop: StopRule | None = None
    #: The bonus a worker with no answers billed gets on its chance (see ``hopeful``).
    explore: float = 0.3
    #: Verdicts per worker within an action kind (``rates.keys``; a key without a
    #: worker, from older files, counts for the kind): the base rate the fitted weights'
    #: chance is shrunk toward (see ``p_green`` and ``base_rate``).
    prior: dict[str, Rate] = field(default_factory=dict)
    #: How far the fitted weights are trusted against ``prior`` (1: the weights alone),
    #: as ``fit`` measured it on verdicts of tasks it had left out.
    trust: float = 1.0
    #: Per worker, the log-chance of its current run of red verdicts online, at the
    #: chance its base rate gave each (``rates.watch``; absent: its last was green).
    reds: dict[str, float] = field(default_factory=dict)
    _bits: dict[str, list[str]] = field(default_factory=dict, repr=False, compare=False)
    _views: dict[str, list[str]] = field(default_factory=dict, repr=False, compare=False)

    def see(self, brief: str, vector: Sequence[float]) -> None:
        """Give the conductor model's hidden state of ``brief`` (of ``seen_brief(brief)``:
        the brief without the policy's own advice). Only its bits are kept."""
        h = self.hidden
        if h is None:
            raise ValueError("this policy reads no hidden state")
        key = seen_brief(brief)
        _keep(self._bits, key, hidden_bits(vector, h.mean, h.bits, h.seed))
        self._views.pop(key, None)

    def unread(self, briefs: Iterable[str]) -> list[str]:
        """Which of ``briefs`` still need the model's reading (none without ``hidden``)."""
        if self.hidden is None:
            return []
        return sorted({seen_brief(b) for b in briefs} - self._bits.keys())

    def task_view(self, brief: str) -> list[str]:
        """The task's features as this policy reads them (words, shape, hidden bits)."""
        key = seen_brief(brief)
        view = self._views.get(key)
        if view is not None:
            return view
        view = task_features(brief)
        h = self.hidden
        if h is not None:
            bits = self._bits.get(key)
            if bits is None:
                raise ConfigError(
                    f"this policy reads the hidden state of {h.model} and none was computed "
                    "for this task: the conductor must be that model"
                )
            if not h.words:
                view = [t for t in view if not t.startswith("w:")]
            view = view + bits
        _keep(self._views, key, view)
        return view

    def learn_wording(self, subtask: str) -> str:
        """The library key of a subtask that won (added when new)."""
        for key, text in self.wordings.items():
            if text == subtask:
                return key
        key = f"learned-{len(self.wordings)}"
        self.wordings[key] = subtask
        return key

    def p_green(self, brief: str, action: Action, pool: Sequence[WorkerInfo]) -> float:
        """The weights' chance, shrunk toward the action kind's base rate by ``trust``
        (in log-odds). Why: fitted on a few dozen tasks, the weights' chances are far too
        sure on tasks they have not seen (held-out log loss 0.60-1.28 per fold on
        bench/tasks and the HumanEval-fix sample, where the base rates alone score
        0.47-0.62; bench/README.md, "How sure the policy is"), and a cheap worker put at
        5% where it was green is never asked."""
        view = self.task_view(brief)
        x = features(view, action, pool)
        if not x:
            return 0.0
        z = sum(self.weights.get(i, 0.0) for i in x)
        rate = self.base_rate(view, action, pool) if self.trust < 1 else None
        return sigmoid(shrunk(z, rate, self.trust))

    def base_rate(
        self, view: Sequence[str], action: Action, pool: Sequence[WorkerInfo]
    ) -> float | None:
        """How often this worker was green in this kind of action (``rates.base_rate``;
        None: none judged)."""
        return rates.base_rate(self.prior, view, action, pool)

    def hopeful(self, brief: str, action: Action, pool: Sequence[WorkerInfo]) -> float:
        """The chance to act on. In a pool the policy has billed before, a worker it has
        billed less often gets a bonus (``explore / (1 + answers)``), and one it never
        billed gets at least ``target`` for its first ``TRIALS`` answers: a worker new to
        the pool gets tried (its name has no weight yet, and its ranks may carry another's
        failures). A pool it never billed is read by ranks alone, as fitted."""
        known = [w.name for w in pool if self._answers(w.name) > 0]
        chance = self.p_green(brief, action, pool)
        if not known or self.explore <= 0:
            return chance
        answers = self._answers(action.bill_key)
        if not action.solo and not answers:
            return chance  # a pair never tried is not explored blindly: its shape's rate speaks
        chance += self.explore / (1 + answers)
        if answers < TRIALS and action.solo:
            chance = max(chance, self.target)
        return min(0.99, chance)

    def cost(self, action: Action, pool: Sequence[WorkerInfo], prompt_tokens: int) -> float:
        """$ for one answer: the mean of what this action was billed; a shape not billed
        yet, what its workers' calls cost alone; a worker not billed yet, from its prices,
        scaled as the billed workers' bills compare with theirs (a nominal prompt and
        answer would make it look dearer or cheaper than the pool's real answers, and a
        new cheap worker was never tried)."""
        bill = self.bills.get(action.bill_key)
        if bill and bill.answers:
            return bill.cost / bill.answers
        if action.shape == ShapeName.REVIEW:  # the review's own call (``figures`` adds the first)
            return self.cost(Action(action.worker, action.wording), pool, prompt_tokens)
        if not action.solo:
            return sum(self.cost(Action(w, action.wording), pool, prompt_tokens)
                       for w in calls(_shape(action)))  # fmt: skip
        info = next((w for w in pool if w.name == action.worker), None)
        if info is None:
            return math.inf
        nominal = nominal_cost(info, prompt_tokens)
        billed = [(self.bills[w.name], nominal_cost(w, prompt_tokens)) for w in pool
                  if self._answers(w.name) > 0]  # fmt: skip
        scales = [b.cost / b.answers / price for b, price in billed if price > 0]
        return nominal * sum(scales) / len(scales) if scales else nominal

    def seconds(self, action: Action) -> float:
        """Seconds for one answer, as billed so far (0 when unknown)."""
        bill = self.bills.get(action.bill_key)
        if bill and bill.answers:
            return bill.seconds / bill.answers
        if not action.solo:
            return sum(self.seconds(Action(w, action.wording)) for w in calls(_shape(action)))
        return 0.0

    def _answers(self, key: str) -> float:
        bill = self.bills.get(key)
        return bill.answers if bill is not None else 0.0

    def shapes(self) -> list[str]:
        """The shapes beyond a solo call this policy has verdicts of (it chooses only
        among what it has seen: a policy fitted before shapes chooses as it did)."""
        seen = {rates.shape_of(k) for k in self.prior}
        return sorted(s for s in CHOSEN if s in seen)

    def actions(self, pool: Sequence[WorkerInfo]) -> list[Action]:
        """Each model worker in each wording; each pair of them in each known shape."""
        models = [w.name for w in pool if not w.is_tool]
        out = [Action(w, k) for w in models for k in self.wordings]
        direct = index(self.wordings, DIRECT)
        if direct is not None:
            out += [Action(b, direct, s, a) for s in self.shapes() for a in models for b in models]
        return out

    def rank(
        self, brief: str, pool: Sequence[WorkerInfo], prompt_tokens: int = 2000
    ) -> list[tuple[Action, float, float]]:
        """Every action with its chance and its cost, most likely first."""
        out = [(a, *self.figures(brief, a, pool, prompt_tokens)) for a in self.actions(pool)]
        return sorted(out, key=lambda t: (-t[1], t[2]))

    def figures(
        self, brief: str, action: Action, pool: Sequence[WorkerInfo], prompt_tokens: int
    ) -> tuple[float, float]:
        """The chance to act on and the expected $ of an action as a round runs it: a
        review is the helper's call, then the review only when that was red."""
        chance, cost = self.hopeful(brief, action, pool), self.cost(action, pool, prompt_tokens)
        if action.shape != ShapeName.REVIEW:
            return chance, cost
        first = Action(action.helper, action.wording)
        p = self.hopeful(brief, first, pool)
        return p + (1 - p) * chance, self.cost(first, pool, prompt_tokens) + (1 - p) * cost

    def choose(
        self,
        brief: str,
        pool: Sequence[WorkerInfo],
        max_steps: int,
        budget: float = math.inf,
        prompt_tokens: int = 2000,
        prefer: str = "latency",
    ) -> list[tuple[Action, float, float]]:
        """The set of actions to run (``sets.choose_set``), most likely first."""
        ranked = self.rank(brief, pool, prompt_tokens)
        return choose_set(
            ranked, pool, self.wordings, self.target, self.seconds, max_steps, budget, prefer
        )

    def to_json(self) -> dict[str, Any]:
        """The policy file: its fields under their own names (weights rounded, those at
        zero left out), tagged with the format and its version."""
        data = as_data(self)
        data["weights"] = {str(k): round(v, 6) for k, v in self.weights.items() if abs(v) > 1e-9}
        return {"format": FORMAT, "version": VERSION, **data}

    @classmethod
    def from_json(cls, data: Any, where: str = "policy") -> Policy:
        if not isinstance(data, dict) or data.get("format") != FORMAT:
            raise ConfigError(
                f"{where} is not a conductor-lsp policy (train one with train --policy)"
            )
        if data.get("version") not in READS:
            raise ConfigError(
                f"{where} is a policy of version {data.get('version')!r}; "
                f"this version reads {' and '.join(map(str, READS))}"
            )
        if data["version"] < 3:
            data = _before_3(data)
        what = "the policy" if where == "policy" else f"the policy {where}"
        return read(data, cls, what, ConfigError)

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
        write_json(path, self.to_json())


without(Policy, "_bits", "_views")


def _before_3(data: dict[str, Any]) -> dict[str, Any]:
    """A policy as versions 1 and 2 wrote it: bills as [answers, $, seconds] and rates as
    [green, judged], positional lists; read as the records they are."""

    def named(value: Any, names: tuple[str, ...]) -> Any:
        return dict(zip(names, value, strict=False)) if isinstance(value, list) else value

    bills, prior = data.get("bills"), data.get("prior")
    out = dict(data)
    if isinstance(bills, dict):
        out["bills"] = {k: named(v, ("answers", "cost", "seconds")) for k, v in bills.items()}
    if isinstance(prior, dict):
        out["prior"] = {k: named(v, ("green", "judged")) for k, v in prior.items()}
    return out


def shrunk(z: float, rate: float | None, trust: float) -> float:
    """The weights' log-odds ``z`` shrunk toward a base rate by ``trust`` (None: no rate)."""
    return z if rate is None else trust * z + (1 - trust) * math.log(rate / (1 - rate))


def nominal_cost(info: WorkerInfo, prompt_tokens: int) -> float:
    """$ for one answer of ``ANSWER_TOKENS`` to a prompt of ``prompt_tokens``."""
    return (prompt_tokens * info.price_in + ANSWER_TOKENS * info.price_out) / 1_000_000


def index(wordings: dict[str, str], text: str) -> str | None:
    """The library key of a wording's text, if it is in the library."""
    return next((k for k, v in wordings.items() if v == text), None)


def _shape(action: Action) -> Shape:
    return Shape(ShapeName(action.shape), action.worker, action.helper)
