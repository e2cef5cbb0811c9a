"""``train --policy``: a routing policy (and its stop rule) fitted from recorded runs.

Episodes give the examples (every judged candidate) and the turns (every lane's round
that followed a failed one); an ``eval`` run's episodes file sits beside its results. A
fifth of the tasks is held out to measure the fit (log loss, accuracy, and how often the
pick was green), then the policy is fitted on all of them and saved as JSON.

With ``features`` "hidden" or "both", each task is also read by the conductor model
(``protocols.Embedder``): its hidden state of the brief, centred on the fitting tasks'
mean, cut into bits. "hidden" reads the task's shape and those bits; "both" the words too.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from ..conductor.static import DIRECT, RETRY
from ..episodes.log import read_episodes
from ..episodes.records import Episode
from ..errors import ConfigError
from ..plan import Lane
from ..protocols import Embedder
from .features import Action, seen_brief
from .fit import Example, examples_from, fit, held_out, scores, stamp
from .predict import Policy, index
from .reading import read_with
from .stop import StopRule, Turn, fit_stop_rule

FEATURES = ("words", "hidden", "both")


def eval_episodes(results: Path) -> Path:
    """The episodes file an ``eval`` run wrote beside its results."""
    return results.parent / f"{results.stem}-traces-episodes.jsonl"


def recorded(sources: Sequence[Path]) -> list[Episode]:
    """Every episode of the files; a missing file is a configuration error."""
    episodes: list[Episode] = []
    for path in sources:
        if not path.is_file():
            raise ConfigError(f"no episodes at {path}")
        episodes += read_episodes(path)
    return episodes


def train_policy(
    from_eval: Sequence[Path],
    from_episodes: Sequence[Path],
    out: Path,
    *,
    target: float = 0.8,
    seed: int = 0,
    features: str = "words",
    reader: Embedder | None = None,
    bits: int = 64,
    log: Callable[[str], None] = print,
) -> dict[str, Any]:
    """Fit, measure on held-out tasks, refit on everything, save; returns the report."""
    if features not in FEATURES:
        raise ConfigError(f"--features is one of {', '.join(FEATURES)}, not {features!r}")
    if features != "words" and reader is None:
        raise ConfigError(f"--features {features} needs a conductor model to read the tasks")
    started = time.monotonic()
    sources = [eval_episodes(p) for p in from_eval] + list(from_episodes)
    episodes = recorded(sources)
    probe = Policy(target=target)
    examples = examples_from(episodes, probe)
    if not examples:
        raise ConfigError("the episodes hold no judged candidate to learn from")
    vectors: dict[str, list[float]] = {}
    if reader is not None and features != "words":
        briefs = sorted({seen_brief(e.brief) for e in examples})
        log(f"reading {len(briefs)} tasks with the conductor model ({reader.model_identity()})")
        vectors = {b: reader.embed(b) for b in briefs}

    def fitted(rows: Sequence[Example]) -> Policy:
        policy = Policy(wordings=dict(probe.wordings), target=target)
        if vectors and reader is not None:
            fitted_on = (e.brief for e in rows)
            model = reader.model_identity()
            read_with(policy, vectors, fitted_on, model, words=features == "both", bits=bits)
        fit(policy, rows)
        return policy

    train, held = held_out(examples, 0.2, seed)
    figures = scores(fitted(train), held)
    policy = fitted(examples)
    policy.stop = stop_rule(episodes, policy)
    seconds = time.monotonic() - started
    turns = policy.stop.turns if policy.stop is not None else 0
    stamp(policy, [str(p) for p in sources], len(examples), held_out=figures,
          seconds=round(seconds, 2), features=features, stop_turns=turns)  # fmt: skip
    policy.save(out)
    log(
        f"policy fitted on {len(examples)} judged candidates from {len(episodes)} episodes in "
        f"{seconds:.1f}s; held-out {figures}; stop rule: "
        f"{f'{turns} recorded rounds' if turns else 'none (too few failed rounds)'}: {out}"
    )
    return dict(policy.about)


#: Fewest recorded turns (a lane's round after a failed one) a stop rule is fitted on.
MIN_TURNS = 8


def stop_rule(episodes: Sequence[Episode], policy: Policy) -> StopRule | None:
    """The stop rule the recorded rounds support: None with too few of them, or when none
    (or every one) was green, for then they say nothing about when to give up."""
    turns = recorded_turns(episodes, policy)
    greens = sum(t.green for t in turns)
    if len(turns) < MIN_TURNS or greens in (0, len(turns)):
        return None
    return fit_stop_rule(turns)


def recorded_turns(episodes: Sequence[Episode], policy: Policy) -> list[Turn]:
    """Every lane's round that followed a failed round, from the episodes of fix jobs:
    the policy's chance for that round's candidates, and whether one was green."""
    jobs: dict[str, list[Episode]] = {}
    for e in episodes:
        if e.job and e.outcome is not None:
            jobs.setdefault(e.job, []).append(e)
    turns: list[Turn] = []
    for rounds in jobs.values():
        by_round: dict[int, list[Episode]] = {}
        for e in rounds:
            by_round.setdefault(e.round, []).append(e)
        for r in sorted(by_round):
            before = [e for k, es in by_round.items() if k < r for e in es]
            if not before or any(e.green for e in before):
                continue
            progress = any(_progressed(e) for e in by_round.get(r - 1, []))
            turns += [_turn(e, policy, r, progress) for e in by_round[r]]
    return turns


def _progressed(e: Episode) -> bool:
    o = e.outcome
    if o is None or o.failing_before is None:
        return False
    return any(
        leaf.failing_after is not None and leaf.failing_after < len(o.failing_before)
        for leaf in o.leaves
    )


def _turn(e: Episode, policy: Policy, round_index: int, progress: bool) -> Turn:
    chances = []
    for s in e.steps:
        key = index(policy.wordings, DIRECT if s.subtask == RETRY else s.subtask)
        if key is None or not any(w.name == s.worker and not w.is_tool for w in e.workers):
            continue
        chances.append(policy.p_green(e.task, Action(s.worker, key), e.workers))
    chance = 1 - math.prod(1 - p for p in chances) if chances else None
    green = bool(e.outcome and any(leaf.green for leaf in e.outcome.leaves))
    return Turn(chance, round_index, progress, e.lane is Lane.FLOOR, green)
