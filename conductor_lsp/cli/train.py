"""``conductor-lsp train``: a conductor that learns, from rollouts or from your episodes."""

from __future__ import annotations

import argparse
from dataclasses import asdict
from pathlib import Path
from typing import Any

from rich.console import Console

from ..conductor.registry import make_conductor
from ..configure.load import load_config
from ..episodes.log import read_episodes
from ..errors import ConfigError
from ..eval.suite import load_suite
from ..learn.grpo import TaskPool, TrainOptions, held_out_split, train_grpo
from ..learn.reward import Weights
from ..learn.rollout import Pool, Rollouts
from ..learn.sft import train_from_episodes
from ..models.transformers import find_smollm2
from ..policy.offline import FEATURES, train_policy
from ..protocols import Conductor, Embedder

#: What to write so a fitted policy is used, and keeps learning.
USE_IT = 'use it: [conductor] policy = "{}"; [learn] online = true keeps it learning from every fix'


def model_reader(conductor: Conductor) -> Embedder:
    """The configured conductor, when it runs a model here that can read a task."""
    if not isinstance(conductor, Embedder):
        raise ConfigError(
            f"--features hidden reads tasks with the conductor model; conductor backend "
            f"{conductor.name!r} runs none in this process (transformers, llama-cpp and mlx do)"
        )
    return conductor


def add_parser(sub: Any, parents: list[argparse.ArgumentParser]) -> argparse.ArgumentParser:
    """The ``train`` command; ``parents`` carry the options every command shares."""
    t: argparse.ArgumentParser = sub.add_parser(
        "train", help="train the conductor (GRPO on a suite, or from episodes)", parents=parents
    )
    t.add_argument("suite", type=Path, nargs="?", help="a task suite (not with --from-episodes)")
    t.add_argument(
        "--out", type=Path, required=True, help="folder for the trained conductor (or policy file)"
    )
    t.add_argument(
        "--from-episodes",
        type=Path,
        action="append",
        default=[],
        help="an episodes file: fine-tune on recorded plans that beat static (or, with "
        "--policy, learn from its verdicts); may repeat",
    )
    t.add_argument(
        "--policy",
        action="store_true",
        help="fit a routing policy (seconds, no GPU) instead of training the model",
    )
    t.add_argument(
        "--from-eval",
        type=Path,
        action="append",
        default=[],
        help="with --policy: an eval run's results (JSONL); its episodes are read; may repeat",
    )
    t.add_argument(
        "--target", type=float, default=0.8, help="with --policy: wanted chance of a green round"
    )
    t.add_argument(
        "--features",
        choices=FEATURES,
        default="words",
        help="with --policy: how a task is read: its words and shape (default), or the "
        "conductor model's hidden state of it with the shape (hidden), or all (both); "
        "hidden and both need a local conductor model, and the policy then needs it too",
    )
    add_training_options(t)
    t.add_argument("--cost-weight", type=float, help="reward lost per $ (default: [learn])")
    t.add_argument("--held-out", type=float, default=0.25, help="share of tasks held out")
    t.add_argument("--jobs", type=int, default=2, help="rollouts run at once (default: 2)")
    return t


def add_training_options(
    p: argparse.ArgumentParser,
    *,
    steps: int = TrainOptions.steps,
    lr: float = TrainOptions.learning_rate,
    seconds: float = TrainOptions.seconds,
) -> None:
    """The options of one training run, shared with bench/train_conductor.py (which only
    changes their defaults), so that both front ends offer the same ones. The defaults
    are TrainOptions' own, except ``--beta``: the command line anchors to the base model
    (0.04) where the API's default is no penalty."""
    o = TrainOptions
    p.add_argument("--steps", type=int, default=steps, help=f"optimizer steps (default: {steps})")
    p.add_argument(
        "--group", type=int, default=o.group, help=f"plans sampled per prompt (default: {o.group})"
    )
    p.add_argument(
        "--batch", type=int, default=o.batch, help=f"prompts per step (default: {o.batch})"
    )
    p.add_argument("--lr", type=float, default=lr, help=f"learning rate (default: {lr:g})")
    p.add_argument(
        "--lora-rank", type=int, default=o.lora_rank, help=f"LoRA rank (default: {o.lora_rank})"
    )
    p.add_argument(
        "--beta", type=float, default=0.04, help="KL penalty towards the base model (default: 0.04)"
    )
    p.add_argument(
        "--seconds", type=float, default=seconds, help="stop training after this long (0: never)"
    )
    p.add_argument("--seed", type=int, default=o.seed)


def training_options(args: argparse.Namespace, **more: Any) -> TrainOptions:
    """The options ``add_training_options`` declared, as the trainers take them."""
    return TrainOptions(
        steps=args.steps,
        group=args.group,
        batch=args.batch,
        learning_rate=args.lr,
        lora_rank=args.lora_rank,
        beta=args.beta,
        seconds=args.seconds,
        seed=args.seed,
        **more,
    )


def run_train(root: Path, args: argparse.Namespace, console: Console) -> int:
    log = lambda line: console.print(line, markup=False, highlight=False)  # noqa: E731
    if args.policy:
        if not (args.from_eval or args.from_episodes):
            raise ConfigError("train --policy needs --from-eval FILE or --from-episodes FILE")
        reader = None
        if args.features != "words":
            reader = model_reader(make_conductor(load_config(root, args.config).conductor))
        train_policy(
            args.from_eval,
            args.from_episodes,
            args.out,
            target=args.target,
            features=args.features,
            reader=reader,
            log=log,
        )
        log(USE_IT.format(args.out))
        return 0
    config = load_config(root, args.config)
    model = config.conductor.model or str(find_smollm2() or "")
    if not model:
        raise ConfigError(
            "train needs a conductor model: set [conductor] model (a GGUF file or an HF folder)"
        )
    learn = config.learn
    weights = Weights(
        args.cost_weight if args.cost_weight is not None else learn.cost_weight,
        learn.seconds_weight,
        learn.format_penalty,
    )
    options = training_options(args)
    if args.from_episodes:
        episodes = [e for path in args.from_episodes for e in read_episodes(path)]
        report = train_from_episodes(model, episodes, args.out, options, weights, log)
        log(f"trained on {report['examples']} plans in {report['seconds']:.0f}s: {args.out}")
        return 0
    if args.suite is None:
        raise ConfigError("train needs a SUITE (or --from-episodes FILE)")
    tasks = load_suite(args.suite)
    # Rollouts run in copies of the tasks: the workspace's configuration goes with them.
    pool = Pool("config", {n: asdict(w) for n, w in config.workers.items()})
    rollouts = Rollouts(config, weights, config.conductor.max_steps, args.jobs)
    train_tasks, held_tasks = held_out_split(tasks, args.held_out, args.seed, lambda t: t.kind)
    report = train_grpo(
        model,
        [TaskPool(t, pool) for t in train_tasks],
        [TaskPool(t, pool) for t in held_tasks],
        rollouts,
        options,
        args.out,
        log,
    )
    before, after = report["before"], report["after"]
    log(
        f"held-out mean reward {before['reward']:+.3f} -> {after['reward']:+.3f}, solved "
        f"{before['solved']} -> {after['solved']} of {after['rows']}; {args.out} "
        f'(use it: [conductor] backend = "transformers", model = "{args.out}")'
    )
    return 0
