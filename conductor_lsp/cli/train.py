"""``conductor-lsp train``: a conductor that learns, from rollouts or from your episodes."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from rich.console import Console

from ..configure.load import load_config
from ..learn.grpo import TrainOptions
from ..learn.train import FEATURES, PolicyRun, TrainRun, fit_policy, train_conductor


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
        run = PolicyRun(args.out, args.from_eval, args.from_episodes, args.target, args.features)
        fit_policy(lambda: load_config(root, args.config), run, log)
        return 0
    config = load_config(root, args.config)
    train = TrainRun(
        args.out, args.suite, args.from_episodes, args.cost_weight, args.held_out, args.jobs
    )
    train_conductor(config, train, training_options(args), log)
    return 0
