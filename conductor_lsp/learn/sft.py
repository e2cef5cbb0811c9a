"""``train --from-episodes``: learn from your own recorded plans, with no rollouts to pay for.

Rejection-sampling fine-tuning: of the plans a model wrote in real use, keep those whose
reward beat static's on the same task, and fine-tune a LoRA adapter to write
them (in the grammar's own form) for the prompt they answered. Static's reward is
that of the floor's attempt in the same round when the floor ran one, else the mean of
the static plans recorded for the same task; with neither, only green plans are kept.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import asdict
from pathlib import Path
from typing import Any

from ..conductor.grammar import render_lists
from ..conductor.prompt import prompt_for
from ..episodes.records import Episode
from ..plan import Lane
from .grpo import TrainOptions, _import_training, checkpointing, load_for_training, lora, quiet
from .reward import Weights, reward


def _is_conductor(e: Episode) -> bool:
    return e.asked_model and not e.fallback and bool(e.steps)


def _statics(
    episodes: Sequence[Episode], weights: Weights
) -> tuple[dict[tuple[str, int], float], dict[str, list[float]]]:
    by_round: dict[tuple[str, int], float] = {}
    by_task: dict[str, list[float]] = {}
    for e in episodes:
        if _is_conductor(e) or e.outcome is None:
            continue
        value = reward(e, weights)
        if e.lane is Lane.FLOOR:
            by_round[(e.job, e.round)] = value
        by_task.setdefault(e.task, []).append(value)
    return by_round, by_task


def accepted(
    episodes: Sequence[Episode], weights: Weights
) -> list[tuple[Episode, float, float | None]]:
    """(episode, its reward, static's reward or None) for the plans worth learning."""
    by_round, by_task = _statics(episodes, weights)
    out = []
    for e in episodes:
        if not _is_conductor(e) or e.outcome is None or e.undone or e.rejected:
            continue
        value = reward(e, weights)
        base = by_round.get((e.job, e.round))
        if base is None:
            same = by_task.get(e.task)
            base = sum(same) / len(same) if same else None
        good = value > base if base is not None else e.outcome.green
        if good:
            out.append((e, value, base))
    return out


def example(e: Episode) -> dict[str, Any]:
    """The prompt the episode's conductor saw, and its plan in the grammar's form."""
    names = [w.name for w in e.workers]
    prompt = prompt_for(e.task, e.workers, e.max_steps)
    text = render_lists(
        [names.index(s.worker) for s in e.steps],
        [s.subtask for s in e.steps],
        [s.access if s.access == "all" else list(s.access) for s in e.steps],
    )
    return {
        "prompt": [
            {"role": "system", "content": prompt.system},
            {"role": "user", "content": prompt.user},
        ],
        "completion": [{"role": "assistant", "content": text}],
    }


def train_from_episodes(
    model_path: str,
    episodes: Sequence[Episode],
    out: Path,
    options: TrainOptions,
    weights: Weights,
    log: Callable[[str], None] = print,
) -> dict[str, Any]:
    """Fine-tune on the accepted plans; writes the same folder as GRPO does."""
    trl = _import_training()
    import torch
    from datasets import Dataset

    from .progress import save_outputs

    chosen = accepted(episodes, weights)
    log(f"{len(chosen)} of {len(episodes)} recorded plans beat static's call")
    if not chosen:
        raise ValueError("no recorded plan beat static's call: nothing to learn from yet")
    started = time.monotonic()
    out.mkdir(parents=True, exist_ok=True)
    model, tokenizer = load_for_training(model_path)
    dataset = Dataset.from_list([example(e) for e, _, _ in chosen])
    args = trl.SFTConfig(
        output_dir=str(out / "checkpoints"),
        max_steps=options.steps,
        per_device_train_batch_size=options.batch,
        max_length=None,  # prompts are long (the pool, the rules); the plan must not be cut
        learning_rate=options.learning_rate,
        logging_steps=1,
        save_strategy="no",
        report_to=[],
        disable_tqdm=True,
        seed=options.seed,
        use_cpu=not torch.cuda.is_available(),
        **checkpointing(trl.SFTConfig, True),  # TRL's default, named as transformers now reads it
    )
    trainer = trl.SFTTrainer(
        model=model,
        args=args,
        train_dataset=dataset,
        processing_class=tokenizer,
        peft_config=lora(options),
    )
    quiet(trainer)
    trainer.train()
    history = [{"step": h["step"], "reward": -float(h["loss"])} for h in _losses(trainer)]
    report = {
        "model": model_path,
        "mode": "from-episodes (rejection-sampling fine-tuning)",
        "options": asdict(options),
        "examples": len(chosen),
        "rewards": [{"reward": r, "static": b} for _, r, b in chosen],
        "seconds": time.monotonic() - started,
        "steps": trainer.state.global_step,
    }
    save_outputs(trainer.accelerator.unwrap_model(trainer.model), tokenizer, out, report, history)
    return report


def _losses(trainer: Any) -> list[dict[str, Any]]:
    """The trainer's log lines that carry a loss (progress plots them as a reward)."""
    return [h for h in trainer.state.log_history if "loss" in h and "step" in h]
