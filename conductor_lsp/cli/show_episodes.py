"""``conductor-lsp episodes``: what was recorded, one line a plan, or a summary."""

from __future__ import annotations

import argparse
import time
from pathlib import Path

from rich.console import Console
from rich.table import Table

from ..configure.load import load_config
from ..errors import ConfigError
from ..learn import (
    CalibrationRow,
    Episode,
    Weights,
    by_shape,
    calibration,
    policy_reading,
    read_episodes,
    reward,
)


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
        found = policy_reading(config, episodes)
        if found is not None:
            policy, loaded = found
            console.print(calibration_table(calibration(loaded, episodes), str(policy)))
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


def calibration_table(rows: list[CalibrationRow], title: str) -> Table:
    """The policy's predictions against the verdicts, by predicted chance."""
    table = Table(title="the policy: predicted against judged candidates", caption=title)
    for col in ("predicted", "candidates", "green", "green rate"):
        table.add_column(col, justify="right")
    for r in rows:
        rate = f"{r.green / r.candidates:.0%}" if r.candidates else "-"
        table.add_row(f"{r.low}-{r.low + 20}%", str(r.candidates), str(r.green), rate)
    return table
