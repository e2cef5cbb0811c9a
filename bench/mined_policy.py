"""A repository's own policy against one fitted elsewhere, on the repository's newest bug
fixes: static, search, the conductor led by a policy fitted on the repository's older
mined tasks, and the same conductor led by a policy fitted on `bench/tasks`, side by
side, task by task, on the held-out newest tenth of a mined suite (`conductor-lsp mine`).

Both policies are fitted from `single:*` runs (every worker on every task, one round),
as `conductor-lsp learn` fits: the repository's on its older tasks (the newest `--fit`
of them when a budget of time asks for fewer; never a held-out one), the other on
`--bench-suite`. Every run appends to a JSONL file under `--out` and `--resume` keeps
what is there: with a real pair on a CPU this takes hours.

    python bench/mined_policy.py --suite MINED --config bench/configs/local_pair.toml \
        --out runs/mined [--fit N] [--resume]
"""

from __future__ import annotations

import argparse
import asyncio
import json
from pathlib import Path
from typing import Any

from _common import REPO, table

from conductor_lsp import load_config
from conductor_lsp.eval import by_strategy, evaluate, load_suite, parse_strategies
from conductor_lsp.learn.repository import split
from conductor_lsp.policy import train_policy


def led(policy: Path, mode: str) -> dict[str, Any]:
    layer: dict[str, Any] = {
        "conductor": {"backend": "static", "worker": "", "policy": str(policy)}
    }
    if mode:
        layer["fix"] = {"prefer": mode}
    return layer


async def fit_on(tasks: list[Any], base: Any, out: Path, resume: bool) -> Path:
    """single:* on ``tasks``, one round; the policy fitted on their verdicts."""
    rows = out.with_suffix(".jsonl")
    singles = parse_strategies("single:*", base.workers)
    await evaluate(tasks, singles, base, out=rows, max_iterations=1, order="tasks", resume=resume)
    policy = out.with_suffix(".policy.json")
    train_policy([rows], [], policy, log=lambda line: print(f"  {out.name}: {line}"))
    return policy


async def main_async(args: argparse.Namespace) -> None:
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    base = load_config(Path.cwd(), Path(args.config))
    older, newest = split(load_suite(Path(args.suite)))
    fit = older[-args.fit :] if args.fit else older
    print(f"{len(older)} older task(s) ({len(fit)} fitted on), {len(newest)} held out")
    own = await fit_on(fit, base, out / "own-fit", args.resume)
    elsewhere = load_suite(Path(args.bench_suite))[:: args.bench_every]
    bench = await fit_on(elsewhere, base, out / "bench-fit", args.resume)
    strategies = {
        **parse_strategies("static,search", base.workers),
        "own policy": led(own, args.prefer),
        "bench/tasks policy": led(bench, args.prefer),
    }
    held = out / "held-out.jsonl"
    results = await evaluate(
        newest, strategies, base, out=held, max_iterations=2, order="tasks", resume=args.resume
    )
    rows = [
        [r.strategy, f"{r.solved}/{r.tasks}", f"{r.cost:.4f}", r.worker_calls, r.tokens,
         f"{r.seconds:.0f} s"]
        for r in by_strategy(results)
    ]  # fmt: skip
    print(table(["strategy", "solved", "$", "worker calls", "tokens", "time"], rows))
    for line in held.read_text().splitlines():
        row = json.loads(line)
        print(f"  {row['task']} {row['strategy']}: {row['outcome']}, {row['best']}")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--suite", required=True, help="a mined suite (conductor-lsp mine)")
    ap.add_argument("--config", required=True, help="the priced pool")
    ap.add_argument("--bench-suite", default=str(REPO / "bench" / "tasks"))
    ap.add_argument("--fit", type=int, default=0, help="fit on the newest N older tasks")
    ap.add_argument("--bench-every", type=int, default=1, help="every Kth task of --bench-suite")
    ap.add_argument("--prefer", default="", help="[fix] prefer for the policies' runs")
    ap.add_argument("--resume", action="store_true", help="keep the rows already in --out")
    ap.add_argument("--out", default="/tmp/mined-policy")
    asyncio.run(main_async(ap.parse_args()))


if __name__ == "__main__":
    main()
