"""``train --policy``: a routing policy fitted from recorded verdicts and bills.

Every judged candidate is an example: the task's brief, the pool, the (worker, wording)
that answered, green or not, and what its call cost. Episodes give them (with search,
every leaf is one), and so does an ``eval`` run, through the episodes file beside its
results (``single:*`` strategies: every worker on every task). A fifth of the tasks is
held out to measure the fit (log loss, accuracy, and how often the pick was green), then
the policy is fitted on all of them and saved as JSON.

With ``features`` "hidden" or "both", each task is also read by the conductor model
(``protocols.Embedder``): its hidden state of the brief, centred on the fitting tasks'
mean, cut into bits. "hidden" reads the task's shape and those bits; "both" the words too.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from ..episodes.log import read_episodes
from ..episodes.records import Episode
from ..errors import ConfigError
from ..protocols import Embedder
from .features import seen_brief
from .fit import Example, examples_from, fit, held_out, scores, stamp
from .model import Policy
from .reading import read_with

FEATURES = ("words", "hidden", "both")


def eval_episodes(results: Path) -> Path:
    """The episodes file an ``eval`` run wrote beside its results."""
    return results.parent / f"{results.stem}-traces-episodes.jsonl"


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
    episodes: list[Episode] = []
    for path in sources:
        if not path.is_file():
            raise ConfigError(f"no episodes at {path}")
        episodes += read_episodes(path)
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
    seconds = time.monotonic() - started
    stamp(
        policy,
        [str(p) for p in sources],
        len(examples),
        held_out=figures,
        seconds=round(seconds, 2),
        features=features,
    )
    policy.save(out)
    log(
        f"policy fitted on {len(examples)} judged candidates from {len(episodes)} episodes in "
        f"{seconds:.1f}s; held-out {figures}: {out}"
    )
    return dict(policy.about)
