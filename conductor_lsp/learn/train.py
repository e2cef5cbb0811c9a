"""``train``'s two jobs: fit a routing policy from recorded verdicts (seconds, no GPU),
or train the conductor model (GRPO on a suite's rollouts, or fine-tuning on recorded
plans that beat static)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path

from ..conductor.registry import make_conductor
from ..config.schema import Config
from ..episodes.log import read_episodes
from ..errors import ConfigError
from ..eval.suite import load_suite
from ..models.transformers import find_smollm2
from ..policy.offline import FEATURES, train_policy
from ..protocols import Conductor, Embedder
from .grpo import TaskPool, TrainOptions, held_out_split, train_grpo
from .reward import Weights
from .rollout import Pool, Rollouts
from .sft import train_from_episodes

#: What to write so a fitted policy is used, and keeps learning.
USE_IT = 'use it: [conductor] policy = "{}"; [learn] online = true keeps it learning from every fix'
Log = Callable[[str], None]

__all__ = ["FEATURES", "USE_IT", "PolicyRun", "TrainRun", "fit_policy", "train_conductor"]


def model_reader(conductor: Conductor) -> Embedder:
    """The configured conductor, when it runs a model here that can read a task."""
    if not isinstance(conductor, Embedder):
        raise ConfigError(
            f"--features hidden reads tasks with the conductor model; conductor backend "
            f"{conductor.name!r} runs none in this process (transformers, llama-cpp and mlx do)"
        )
    return conductor


@dataclass(frozen=True)
class PolicyRun:
    out: Path
    from_eval: Sequence[Path] = ()
    from_episodes: Sequence[Path] = ()
    #: The wanted chance of a green round.
    target: float = 0.8
    #: How a task is read: words, hidden or all (``FEATURES``).
    features: str = "words"


def fit_policy(load: Callable[[], Config], run: PolicyRun, log: Log) -> None:
    """Fit a routing policy from eval results and episodes; ``load`` gives the
    configuration only when the task is read with the conductor model."""
    if not (run.from_eval or run.from_episodes):
        raise ConfigError("train --policy needs --from-eval FILE or --from-episodes FILE")
    reader = None
    if run.features != "words":
        reader = model_reader(make_conductor(load().conductor))
    train_policy(
        list(run.from_eval),
        list(run.from_episodes),
        run.out,
        target=run.target,
        features=run.features,
        reader=reader,
        log=log,
    )
    log(USE_IT.format(run.out))


@dataclass(frozen=True)
class TrainRun:
    out: Path
    suite: Path | None = None
    from_episodes: Sequence[Path] = ()
    #: Reward lost per $ (None: ``[learn] cost_weight``).
    cost_weight: float | None = None
    #: The share of the suite's tasks held out.
    held_out: float = 0.25
    #: Rollouts run at once.
    jobs: int = 2


def train_conductor(config: Config, run: TrainRun, options: TrainOptions, log: Log) -> None:
    """Train the conductor model: on recorded plans (``from_episodes``) or by GRPO on the
    suite's rollouts, in copies of its tasks with the workspace's workers."""
    model = config.conductor.model or str(find_smollm2() or "")
    if not model:
        raise ConfigError(
            "train needs a conductor model: set [conductor] model (a GGUF file or an HF folder)"
        )
    learn = config.learn
    weight = run.cost_weight if run.cost_weight is not None else learn.cost_weight
    weights = Weights(weight, learn.seconds_weight, learn.format_penalty)
    if run.from_episodes:
        episodes = [e for path in run.from_episodes for e in read_episodes(path)]
        report = train_from_episodes(model, episodes, run.out, options, weights, log)
        log(f"trained on {report['examples']} plans in {report['seconds']:.0f}s: {run.out}")
        return
    if run.suite is None:
        raise ConfigError("train needs a SUITE (or --from-episodes FILE)")
    tasks = load_suite(run.suite)
    pool = Pool("config", {n: asdict(w) for n, w in config.workers.items()})
    rollouts = Rollouts(config, weights, config.conductor.max_steps, run.jobs)
    train, held = held_out_split(tasks, run.held_out, options.seed, lambda t: t.kind)
    report = train_grpo(
        model,
        [TaskPool(t, pool) for t in train],
        [TaskPool(t, pool) for t in held],
        rollouts,
        options,
        run.out,
        log,
    )
    before, after = report["before"], report["after"]
    log(
        f"held-out mean reward {before['reward']:+.3f} -> {after['reward']:+.3f}, solved "
        f"{before['solved']} -> {after['solved']} of {after['rows']}; {run.out} "
        f'(use it: [conductor] backend = "transformers", model = "{run.out}")'
    )
