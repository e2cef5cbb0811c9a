"""The routing policy with a real pool, two-fold: fitted on half of the suite's tasks from
an eval run's verdicts, judged on the other half against static, then the halves swapped.

The data is earlier `eval` runs of the suite with `single:*` (every worker on every task)
and `search` (every leaf judged): their results JSONL and the episodes files beside them
(`--from-eval` repeats). The policy of each fold sees only its training half's episodes
and is saved beside the results; the held-out half runs here, `static` and `policy` (the
static backend with the fold's policy) side by side, task by task. `--resume` keeps the
rows the folds' results already hold (an hour or more with a real pair).

    python bench/policy_real.py --from-eval runs/small.jsonl --from-eval runs/search.jsonl \
        --config bench/configs/local_pair.toml --out runs/policy-real [--resume]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import time
from pathlib import Path

from _common import REPO, episodes_of, table

from conductor_lsp import load_config
from conductor_lsp.eval import by_strategy, evaluate, load_suite
from conductor_lsp.policy import Policy, examples_from, fit, scores, stamp

SUITE = REPO / "bench" / "tasks"


def main_async(args: argparse.Namespace) -> None:
    tasks = load_suite(Path(args.suite))
    episodes = episodes_of(args.from_eval)
    folds = [tasks[0::2], tasks[1::2]]
    base = load_config(Path.cwd(), Path(args.config))
    rows = []
    learned = []
    for k, held in enumerate(folds):
        train = [t for t in tasks if t not in held]
        mine = [e for e in episodes if any(t.instruction in e.task for t in train)]
        policy = Policy(target=args.target)
        examples = examples_from(mine, policy)
        started = time.monotonic()
        fit(policy, examples)
        fitted = time.monotonic() - started
        held_examples = examples_from(
            [e for e in episodes if any(t.instruction in e.task for t in held)], Policy()
        )
        stamp(policy, args.from_eval, len(examples), held_out=scores(policy, held_examples))
        learned.append(
            f"fold {k + 1}: fitted on {len(examples)} verdicts of {len(train)} tasks in "
            f"{fitted:.2f} s; on the held-out tasks' recorded verdicts {policy.about['held_out']}"
        )
        path = Path(args.out) / f"fold-{k + 1}-policy.json"
        policy.save(path)
        strategies = {
            "static": {"conductor": {"backend": "static", "worker": ""}},
            "policy": {"conductor": {"backend": "static", "worker": "", "policy": str(path)}},
        }
        out = Path(args.out) / f"fold-{k + 1}.jsonl"
        results = asyncio.run(
            evaluate(
                held,
                strategies,
                base,
                out=out,
                jobs=1,
                max_iterations=2,
                order="tasks",
                resume=args.resume,
            )
        )
        for r in by_strategy(results):
            rows.append([f"fold {k + 1}: {r.strategy}", f"{r.solved}/{r.tasks}", r.worker_calls,
                         r.tokens, f"{r.cost:.4f}", f"{r.seconds:.0f} s"])  # fmt: skip
        picks = [json.loads(line) for line in out.read_text().splitlines()]
        learned.append(
            "  policy plans: "
            + "; ".join(f"{p['task']}: {p['plans']}" for p in picks if p["strategy"] == "policy")
        )
    print(table(["held-out", "solved", "worker calls", "tokens", "$", "time"], rows))
    print("\n".join(learned))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument(
        "--from-eval",
        required=True,
        action="append",
        help="an eval run with single:* or search (repeat: their episodes are joined)",
    )
    ap.add_argument("--resume", action="store_true", help="keep the rows already in --out")
    ap.add_argument("--config", required=True, help="the pool of that run")
    ap.add_argument("--suite", default=str(SUITE))
    ap.add_argument("--target", type=float, default=0.8)
    ap.add_argument("--out", default="/tmp/policy-real")
    main_async(ap.parse_args())


if __name__ == "__main__":
    main()
