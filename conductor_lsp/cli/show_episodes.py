"""``conductor-lsp episodes``: what was recorded, one line a plan, or a summary."""

from __future__ import annotations

import argparse
import time
from pathlib import Path

from rich.console import Console
from rich.table import Table

from ..conductor.registry import make_conductor
from ..configure.load import load_config
from ..episodes.log import read_episodes
from ..episodes.records import Episode
from ..errors import ConfigError
from ..learn import Weights, by_shape, reward
from ..policy.fit import examples_from
from ..policy.predict import Policy
from ..policy.reading import read_briefs
from ..runtime.session import embedder


def show_episodes(root: Path, args: argparse.Namespace, console: Console) -> int:
    config = load_config(root, args.config)
    path = args.file or root / config.learn.episodes
    episodes = read_episodes(path)
    if not episodes:
        if not path.is_file():
            raise ConfigError(f"no episodes at {path} (jobs record them; see [learn] record)")
        console.print(f"{path}: no episodes", markup=False)
        return 0
    weights = Weights.of(config.learn)
    if args.summary:
        console.print(summary_table(episodes, weights, str(path)))
        policy = root / config.conductor.policy if config.conductor.policy else None
        if policy is not None and policy.is_file():
            loaded = Policy.load(policy)
            if loaded.hidden is not None:  # its features need the conductor model's reading
                reader = embedder(loaded, make_conductor(config.conductor))
                read_briefs(loaded, (e.task for e in episodes), reader.embed)
            console.print(calibration_table(loaded, episodes, str(policy)))
        return 0
    for e in episodes:
        when = time.strftime("%Y-%m-%d %H:%M", time.localtime(e.time))
        outcome = e.outcome
        state = "green" if outcome and outcome.green else ("tested" if outcome else "untested")
        state += ", undone" if e.undone else ""
        state += f", {len(e.rejected)} rejected" if e.rejected else ""
        console.print(
            f"{when}  round {e.round}  {e.shape:<40}  {state:<16} "
            f"${e.cost:.4f}  reward {reward(e, weights):+.3f}",
            markup=False,
            highlight=False,
        )
    return 0


def summary_table(episodes: list[Episode], weights: Weights, title: str) -> Table:
    rows = by_shape(episodes, weights)
    table = Table(title=f"episodes ({title})")
    for col in (
        "plan shape",
        "episodes",
        "tested",
        "green",
        "green rate",
        "$",
        "$ per green",
        "mean reward",
    ):
        table.add_column(col, justify="left" if col == "plan shape" else "right")
    for r in rows:
        per_green = "-" if r.cost_per_green is None else f"{r.cost_per_green:.4f}"
        table.add_row(
            r.shape,
            str(r.episodes),
            str(r.tested),
            str(r.green),
            f"{r.green_rate:.0%}",
            f"{r.cost:.4f}",
            per_green,
            f"{r.reward / r.episodes:+.3f}",
            style="bold" if r.shape == "all" else None,
        )
    return table


def calibration_table(policy: Policy, episodes: list[Episode], title: str) -> Table:
    """The policy's predictions against the verdicts, by predicted chance: a calibrated
    policy's leaves predicted at 70-80% turn green about 75% of the time."""
    examples = examples_from(episodes, Policy(wordings=dict(policy.wordings)))
    bins: list[list[int]] = [[0, 0] for _ in range(5)]
    for e in examples:
        p = policy.p_green(e.brief, e.action, e.workers)
        b = bins[min(4, int(p * 5))]
        b[0] += 1
        b[1] += e.green
    table = Table(title="the policy: predicted against judged candidates", caption=title)
    for col in ("predicted", "candidates", "green", "green rate"):
        table.add_column(col, justify="right")
    for i, (n, green) in enumerate(bins):
        rate = f"{green / n:.0%}" if n else "-"
        table.add_row(f"{i * 20}-{i * 20 + 20}%", str(n), str(green), rate)
    return table
