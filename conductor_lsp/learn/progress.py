"""Training as a user sees it: a progress bar with the mean reward, ``metrics.jsonl``, a
time budget, and what is written when it ends (adapter, merged model, curve, report)."""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

from transformers import TrainerCallback

from .rollout import Rollout


class TrainingProgress(TrainerCallback):
    """Logs each step's rollouts, shows them, and stops at the time budget."""

    def __init__(
        self, metrics: Path, options: Any, batches: list[list[Rollout]], started: float
    ) -> None:
        from tqdm.auto import tqdm

        self.metrics = metrics
        self.options = options
        self.batches = batches
        self.started = started
        self.history: list[dict[str, Any]] = []
        self.bar = tqdm(total=options.steps, desc="train", unit="step", dynamic_ncols=True)

    def on_log(
        self, args: Any, state: Any, control: Any, logs: dict[str, Any] | None = None, **kw: Any
    ) -> None:
        if not logs or "loss" not in logs or not self.batches:
            return
        batch = self.batches[-1]
        n = len(batch) or 1
        entry = {
            "step": state.global_step,
            "seconds": round(time.monotonic() - self.started, 1),
            "reward": sum(r.reward for r in batch) / n,
            "valid": sum(r.valid for r in batch) / n,
            "green": sum(r.green for r in batch) / n,
            "cost": sum(r.cost for r in batch) / n,
            "loss": logs.get("loss"),
            "reward_std": logs.get("reward_std"),
            "kl": logs.get("kl"),  # from the base model; logged when --beta is above 0
        }
        self.history.append(entry)
        with self.metrics.open("a", encoding="utf-8") as f:
            f.write(json.dumps(entry) + "\n")
        recent = self.history[-10:]
        mean = sum(e["reward"] for e in recent) / len(recent)
        self.bar.n = state.global_step
        self.bar.set_postfix(reward=f"{entry['reward']:+.3f}", mean10=f"{mean:+.3f}")

    def on_step_end(self, args: Any, state: Any, control: Any, **kw: Any) -> None:
        limit = self.options.seconds
        if limit and time.monotonic() - self.started > limit:
            control.should_training_stop = True
            control.should_save = True

    def on_train_end(self, args: Any, state: Any, control: Any, **kw: Any) -> None:
        self.bar.close()


def save_outputs(
    policy: Any, tokenizer: Any, out: Path, report: dict[str, Any], history: list[dict[str, Any]]
) -> None:
    """The adapter, the merged model beside it (loadable as ``[conductor] model = out``),
    the tokenizer, ``train.json`` and ``reward.png``."""
    policy.save_pretrained(str(out / "adapter"))
    merged = policy.merge_and_unload() if hasattr(policy, "merge_and_unload") else policy
    merged.save_pretrained(str(out), safe_serialization=True)
    tokenizer.save_pretrained(str(out))
    (out / "train.json").write_text(json.dumps(report, indent=2, default=str), encoding="utf-8")
    plot(history, report, out / "reward.png")


def plot(history: list[dict[str, Any]], report: dict[str, Any], path: Path) -> None:
    """The reward curve: each step's mean, a moving average, held-out before and after."""
    try:
        import matplotlib
    except ImportError:
        return  # the figure is a courtesy: metrics.jsonl has the numbers
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    steps = [e["step"] for e in history]
    rewards = [e["reward"] for e in history]
    window = [
        sum(rewards[max(0, i - 9) : i + 1]) / len(rewards[max(0, i - 9) : i + 1])
        for i in range(len(rewards))
    ]
    fig, ax = plt.subplots(figsize=(7, 4), dpi=100)
    ax.plot(steps, rewards, ".", alpha=0.4, label="batch mean reward")
    ax.plot(steps, window, "-", label="moving average (10 steps)")
    for name, style in (("before", ":"), ("after", "--")):
        held = report.get(name) or {}
        if held.get("rows"):
            ax.axhline(held["reward"], linestyle=style, color="gray", label=f"held-out {name}")
    ax.set_xlabel("step")
    ax.set_ylabel("reward")
    ax.set_title("conductor training")
    ax.legend(loc="lower right")
    fig.tight_layout()
    fig.savefig(path)
    plt.close(fig)
