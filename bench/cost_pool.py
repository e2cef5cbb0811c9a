"""The pool cheaper than its best member, on a scripted pool: every strategy through the
real fix loop (lanes, waves, the tests in sandboxes), on loopback workers whose answers
are scripted from each task's known fix.

- "small", $0.15 in / $0.60 out per million tokens: fixes one-file bug fixes only;
- "big", $3 / $15 (20x): fixes everything.

A routing policy is fitted (``train --policy``'s own code) on ``single:*`` runs of a few
training tasks, then every strategy runs the held-out tasks side by side: static (big,
with its retry), search, the trivial cascade (small first, always), and the policy in
each ``[fix] prefer`` mode. It prints solved, $, worker calls, tokens and seconds, and
whether the policy in cost mode solved every task static solved at no more than half
static's $ (the goal of the cost-aware conductor).

    python bench/cost_pool.py [--train 8] [--rounds 1] [--out DIR]
"""

from __future__ import annotations

import argparse
import asyncio
import random
import tempfile
from pathlib import Path
from typing import Any

from _common import REPO, table
from standin import StandIn
from train_conductor import one_file_fix, responder

from conductor_lsp import load_config
from conductor_lsp.eval import SuiteTask, by_strategy, evaluate, load_suite, parse_strategies
from conductor_lsp.policy import eval_episodes, train_policy

SUITE = REPO / "bench" / "tasks"


def pool_toml(url: str) -> str:
    return (
        '[conductor]\nbackend = "static"\n'
        f'[workers.small]\nprovider = "openai-compatible"\nmodel = "quick"\n'
        f'base_url = "{url}/v1"\nmax_retries = 0\nprice_in = 0.15\nprice_out = 0.6\nstrength = 1\n'
        'description = "a quick, cheap coder"\n'
        f'[workers.big]\nprovider = "openai-compatible"\nmodel = "strong"\n'
        f'base_url = "{url}/v1"\nmax_retries = 0\nprice_in = 3.0\nprice_out = 15.0\nstrength = 2\n'
        'description = "a careful, expensive coder"\n'
    )


def split(tasks: list[SuiteTask], n: int, seed: int) -> tuple[list[SuiteTask], list[SuiteTask]]:
    """``n`` training tasks, half of each kind (what small fixes, what it does not)."""
    rng = random.Random(seed)
    easy = [t for t in tasks if one_file_fix(t)]
    hard = [t for t in tasks if not one_file_fix(t)]
    rng.shuffle(easy)
    rng.shuffle(hard)
    train = easy[: n - n // 2] + hard[: n // 2]
    return train, [t for t in tasks if t not in train]


async def run(args: argparse.Namespace, url: str, out: Path) -> list[list[object]]:
    config = out / "pool.toml"
    config.write_text(pool_toml(url))
    base = load_config(out, config)
    tasks = load_suite(SUITE)
    train, held = split(tasks, args.train, args.seed)
    print(f"training on {', '.join(t.name for t in train)}; {len(held)} held out", flush=True)
    singles = parse_strategies("single:small,single:big", base.workers)
    rows = [out / "train.jsonl"]
    await evaluate(train, singles, base, out=rows[0], max_iterations=args.rounds, jobs=2)
    policy = out / "policy.json"
    train_policy([rows[0]], [], policy, log=print)
    led = {"backend": "static", "worker": "", "policy": str(policy)}
    strategies: dict[str, Any] = dict(parse_strategies("static,search,cascade", base.workers))
    for mode in ("balanced", "cost", "latency"):
        strategies[f"policy ({mode})"] = {"conductor": led, "fix": {"prefer": mode}}
    results = await evaluate(
        held, strategies, base, out=out / "held.jsonl",
        max_iterations=args.rounds, jobs=2,
    )  # fmt: skip
    assert eval_episodes(rows[0]).is_file()
    return [
        [r.strategy, f"{r.solved}/{r.tasks}", f"{r.cost:.4f}", r.worker_calls, r.tokens,
         f"{r.seconds:.0f} s"]
        for r in by_strategy(results)
    ]  # fmt: skip


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--train", type=int, default=8, help="training tasks (default: 8)")
    ap.add_argument("--rounds", type=int, default=1, help="fix rounds per task (default: 1)")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--out", help="where results, traces and the policy go (default: a temp dir)")
    args = ap.parse_args()
    out = Path(args.out or tempfile.mkdtemp(prefix="cost-pool-"))
    out.mkdir(parents=True, exist_ok=True)
    stand = StandIn().start()
    stand.responder = responder(load_suite(SUITE))
    try:
        rows = asyncio.run(run(args, stand.url, out))
    finally:
        stand.stop()
    print(table(["strategy", "solved", "$", "worker calls", "tokens", "time"], rows))
    static = next(r for r in rows if r[0] == "static")
    cost = next(r for r in rows if r[0] == "policy (cost)")
    ratio = float(cost[2]) / max(float(static[2]), 1e-12)
    print(f"\npolicy (cost): {cost[1]} against static's {static[1]}, at {ratio:.2f}x static's $")
    print(f"results, traces and the policy in {out}")


if __name__ == "__main__":
    main()
