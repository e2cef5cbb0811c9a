"""``conductor-lsp train``: GRPO with TRL, a LoRA adapter with PEFT, rewards from real runs.

For every prompt (a task, shown with a worker pool) the conductor samples a group of
plans, constrained by the plan grammar; each plan runs for real (``learn.rollout``:
the engine, the pool's workers, the task's tests in a throwaway copy) and earns the
reward of ``learn.reward``; GRPO moves the policy towards the plans that beat their
group. A held-out split is scored before and after, greedily, as in use.

The output folder holds the merged model (``[conductor] model = "DIR"`` loads it with
the transformers or the mlx backend, grammar-constrained as ever), the adapter in
``adapter/``, resumable checkpoints in ``checkpoints/``, ``metrics.jsonl``,
``reward.png`` and ``train.json`` (what was trained, on what, with which results).
"""

from __future__ import annotations

import asyncio
import os
import random
import time
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field, fields
from pathlib import Path
from typing import Any

from ..conductor.prompt import build_prompt
from ..errors import BackendUnavailable
from ..eval.suite import SuiteTask
from ..version import extra
from .rollout import Pool, Rollout, Rollouts
from .sampler import PlanSampler, grammar_key


@dataclass
class TrainOptions:
    steps: int = 100
    """Optimizer steps (each: ``batch`` prompts x ``group`` plans)."""
    group: int = 4
    batch: int = 2
    learning_rate: float = 2e-4
    lora_rank: int = 8
    temperature: float = 1.0
    beta: float = 0.0
    """KL penalty towards the base model (0: none): keeps the subtasks' language intact."""
    seconds: float = 0.0
    """Stop after this many seconds of training (0: no limit); the result is still saved."""
    save_steps: int = 10
    seed: int = 0


@dataclass
class TaskPool:
    task: SuiteTask
    pool: Pool


@dataclass
class Score:
    """A policy on a set of rows: what the held-out table shows."""

    rows: int = 0
    reward: float = 0.0
    solved: int = 0
    valid: int = 0
    cost: float = 0.0
    steps: int = 0
    plans: list[str] = field(default_factory=list)

    @classmethod
    def of(cls, rollouts: Sequence[Rollout], plans: Sequence[str]) -> Score:
        n = len(rollouts)
        return cls(
            n,
            sum(r.reward for r in rollouts) / n if n else 0.0,
            sum(r.green for r in rollouts),
            sum(r.valid for r in rollouts),
            sum(r.cost for r in rollouts),
            sum(r.steps for r in rollouts),
            list(plans),
        )

    @property
    def cost_per_solved(self) -> float | None:
        return self.cost / self.solved if self.solved else None

    @property
    def mean_steps(self) -> float:
        return self.steps / self.valid if self.valid else 0.0


def held_out_split(
    items: Sequence[Any], fraction: float, seed: int, key: Callable[[Any], str]
) -> tuple[list[Any], list[Any]]:
    """Train and held-out parts, stratified by ``key`` (task kind, say), reproducibly."""
    groups: dict[str, list[Any]] = {}
    for item in items:
        groups.setdefault(key(item), []).append(item)
    rng = random.Random(seed)
    train: list[Any] = []
    held: list[Any] = []
    for name in sorted(groups):
        members = list(groups[name])
        rng.shuffle(members)
        cut = round(len(members) * fraction)
        held += members[:cut]
        train += members[cut:]
    return train, held


class Prompts:
    """The conductor's prompt for each row, and the way back from a prompt to its row."""

    def __init__(self, rows: Sequence[TaskPool], rollouts: Rollouts) -> None:
        self.rows = list(rows)
        self.rollouts = rollouts
        self.messages: list[list[dict[str, str]]] = []
        self.keys: dict[str, tuple[int, int, frozenset[int]]] = {}
        for row in self.rows:
            view = asyncio.run(rollouts.task_view(row.task))
            prompt = build_prompt(view, rollouts.infos(row.task, row.pool), rollouts.max_steps)
            self.messages.append(
                [
                    {"role": "system", "content": prompt.system},
                    {"role": "user", "content": prompt.user},
                ]
            )
            self.keys[prompt.system] = grammar_key(prompt, rollouts.max_steps)


def lora(options: TrainOptions) -> Any:
    """The adapter trained: every attention projection, at the chosen rank."""
    from peft import LoraConfig

    return LoraConfig(
        r=options.lora_rank,
        lora_alpha=2 * options.lora_rank,
        target_modules=["q_proj", "k_proj", "v_proj", "o_proj"],
        task_type="CAUSAL_LM",
    )


def quiet(trainer: Any) -> None:
    """Our progress bar and metrics.jsonl say it all: no log dicts printed, no shard bars."""
    from transformers import PrinterCallback
    from transformers.utils import logging

    trainer.remove_callback(PrinterCallback)
    logging.disable_progress_bar()
    logging.set_verbosity_error()


def _import_training() -> Any:
    try:
        import trl
    except ImportError as e:
        raise BackendUnavailable(
            f"training needs TRL and PEFT: {extra('train')} (torch==2.13.0 first)"
        ) from e
    return trl


def score(
    model: Any, sampler: PlanSampler, prompts: Prompts, rows: Sequence[int] | None = None
) -> Score:
    """Greedy, constrained plans for the rows, each run for real."""
    chosen = list(range(len(prompts.rows))) if rows is None else list(rows)
    texts = []
    for i in chosen:
        system, user = (m["content"] for m in prompts.messages[i])
        (completion,) = sampler.sample(
            model, sampler.prompt_ids(system, user), prompts.keys[system], 1, 0.0
        )
        texts.append(sampler.text(completion))
    items = [
        (prompts.rows[i].task, prompts.rows[i].pool, t) for i, t in zip(chosen, texts, strict=True)
    ]
    return Score.of(asyncio.run(prompts.rollouts.many(items)), texts)


def train_grpo(
    model_path: str,
    train_rows: Sequence[TaskPool],
    held_rows: Sequence[TaskPool],
    rollouts: Rollouts,
    options: TrainOptions,
    out: Path,
    log: Callable[[str], None] = print,
) -> dict[str, Any]:
    """Train, score held-out before and after, save; returns what ``train.json`` holds."""
    os.environ.setdefault("TRL_EXPERIMENTAL_SILENCE", "1")  # rollout_func is experimental
    trl = _import_training()
    import torch
    from datasets import Dataset

    from .progress import TrainingProgress, save_outputs

    torch.manual_seed(options.seed)
    out.mkdir(parents=True, exist_ok=True)
    model, tokenizer = load_for_training(model_path)
    sampler = PlanSampler(tokenizer, model.config.vocab_size, rollouts.max_steps)
    train_p, held_p = Prompts(train_rows, rollouts), Prompts(held_rows, rollouts)
    started = time.monotonic()
    before = score(model, sampler, held_p) if held_rows else Score()
    log(f"held-out before: mean reward {before.reward:+.3f}, solved {before.solved}/{before.rows}")
    batches: list[list[Rollout]] = []

    dataset = Dataset.from_list([{"prompt": m, "row": i} for i, m in enumerate(train_p.messages)])
    args = _grpo_config(trl, options, out, sampler.max_new_tokens, torch.cuda.is_available())
    progress = TrainingProgress(out / "metrics.jsonl", options, batches, started)
    trainer = trl.GRPOTrainer(
        model=model,
        reward_funcs=[_reward_fn(train_p, rollouts, batches)],
        args=args,
        train_dataset=dataset,
        processing_class=tokenizer,
        peft_config=lora(options),
        rollout_func=_rollout_func(sampler, train_p, options.temperature),
        callbacks=[progress],
    )
    quiet(trainer)
    resume = any((out / "checkpoints").glob("checkpoint-*"))
    trainer.train(resume_from_checkpoint=True if resume else None)
    policy = trainer.accelerator.unwrap_model(trainer.model)
    after = score(policy, sampler, held_p) if held_rows else Score()
    log(f"held-out after: mean reward {after.reward:+.3f}, solved {after.solved}/{after.rows}")
    report = {
        "model": model_path,
        "options": asdict(options),
        "train": [{"task": r.task.name, "pool": r.pool.name} for r in train_rows],
        "held_out": [{"task": r.task.name, "pool": r.pool.name} for r in held_rows],
        "before": asdict(before),
        "after": asdict(after),
        "seconds": time.monotonic() - started,
        "steps": trainer.state.global_step,
    }
    save_outputs(policy, tokenizer, out, report, progress.history)
    return report


RolloutFunc = Callable[[list[list[dict[str, str]]], Any], dict[str, Any]]


def _rollout_func(sampler: PlanSampler, train_p: Prompts, temperature: float) -> RolloutFunc:
    """TRL's ``rollout_func``: plans sampled under the grammar for each prompt of a batch
    (the sampler repeats each prompt ``group`` times in a row)."""

    def rollout_func(prompts: list[list[dict[str, str]]], trainer: Any) -> dict[str, Any]:
        policy = trainer.accelerator.unwrap_model(trainer.model)
        prompt_ids, completion_ids = [], []
        i = 0
        while i < len(prompts):  # the sampler repeats each prompt ``group`` times in a row
            n = 1
            while i + n < len(prompts) and prompts[i + n] == prompts[i]:
                n += 1
            system, user = (m["content"] for m in prompts[i])
            ids = sampler.prompt_ids(system, user)
            key = train_p.keys[system]
            for completion in sampler.sample(policy, ids, key, n, temperature):
                prompt_ids.append(ids)
                completion_ids.append(completion)
            i += n
        return {"prompt_ids": prompt_ids, "completion_ids": completion_ids, "logprobs": None}

    return rollout_func


def _reward_fn(
    train_p: Prompts, rollouts: Rollouts, batches: list[list[Rollout]]
) -> Callable[..., list[float]]:
    """TRL's reward function: each sampled plan run for real, its reward returned."""

    def reward_fn(
        prompts: list[Any], completions: list[Any], row: list[int], **_: Any
    ) -> list[float]:
        texts = [c[0]["content"] if isinstance(c, list) else str(c) for c in completions]
        items = [
            (train_p.rows[r].task, train_p.rows[r].pool, t) for r, t in zip(row, texts, strict=True)
        ]
        done = asyncio.run(rollouts.many(items))
        batches.append(done)
        return [r.reward for r in done]

    return reward_fn


def _grpo_config(trl: Any, options: TrainOptions, out: Path, max_tokens: int, cuda: bool) -> Any:
    return trl.GRPOConfig(
        output_dir=str(out / "checkpoints"),
        per_device_train_batch_size=options.batch * options.group,
        num_generations=options.group,
        max_steps=options.steps,
        learning_rate=options.learning_rate,
        temperature=options.temperature,
        beta=options.beta,
        max_completion_length=max_tokens,
        **checkpointing(trl.GRPOConfig, False),  # a small model: memory is plenty, time is not
        logging_steps=1,
        save_strategy="steps",
        save_steps=options.save_steps,
        save_total_limit=2,
        report_to=[],
        disable_tqdm=True,
        seed=options.seed,
        use_cpu=not cuda,
    )


def load_for_training(model_path: str) -> tuple[Any, Any]:
    """(model, tokenizer) to train: on CUDA when there is one, with a pad token."""
    import torch

    from ..models.transformers import load_pretrained

    model, tokenizer = load_pretrained(model_path, "cuda" if torch.cuda.is_available() else "cpu")
    if tokenizer.pad_token_id is None:
        tokenizer.pad_token = tokenizer.eos_token
    return model, tokenizer


def checkpointing(config: Any, on: bool) -> dict[str, bool]:
    """Activation checkpointing under the name the installed transformers reads:
    ``gradient_checkpointing`` became ``activation_checkpointing`` in 5.x (the old name
    warns and goes in v6, and TRL's configs still default it to on)."""
    names = {f.name for f in fields(config)}
    new = "activation_checkpointing"
    return {new if new in names else "gradient_checkpointing": on}
