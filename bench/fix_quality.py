"""Fix quality and cost: the task suite through `eval`, strategies side by side.

Strategies: static (one call to the strongest affordable worker, a debugging retry),
conductor (the configured conductor), and single:NAME for every model worker (the
plain one-call script, with the same retry). Same suite, budget and rounds for all.

    python bench/fix_quality.py --config local.toml [--tasks a,b] [--jobs 1] [--max-iterations 2]
"""

from __future__ import annotations

import argparse
import asyncio
import time
from pathlib import Path

from _common import REPO, table

from conductor_lsp import load_config
from conductor_lsp.eval import ORDERS, by_strategy, evaluate, load_suite, parse_strategies

SUITE = REPO / "bench" / "tasks"


async def main_async(args: argparse.Namespace) -> None:
    tasks = load_suite(Path(args.suite))
    if args.tasks:
        wanted = set(args.tasks.split(","))
        tasks = [t for t in tasks if t.name in wanted]
    base = load_config(Path.cwd(), Path(args.config) if args.config else None)
    strategies = parse_strategies(args.strategy, base.workers)
    out = Path(args.out or f"/tmp/fix-quality-{time.strftime('%Y%m%d-%H%M%S')}.jsonl")
    print(f"{len(tasks)} tasks, strategies: {', '.join(strategies)}; results in {out}", flush=True)
    results = await evaluate(
        tasks,
        strategies,
        base,
        out=out,
        jobs=args.jobs,
        max_iterations=args.max_iterations,
        order=args.order,
        resume=args.resume,
        on_result=lambda r: print(
            f"  {r.strategy:>14} {r.task:<22} {'solved' if r.solved else 'not solved':<10} "
            f"{r.worker_calls}+{r.conductor_calls} calls {r.seconds:6.1f}s "
            f"{'; '.join(r.plans)[:80]}",
            flush=True,
        ),
    )
    rows = by_strategy(results)
    print()
    print(
        table(
            ["strategy", "solved", "worker calls", "conductor calls", "tokens", "$", "time"],
            [
                [
                    r.strategy,
                    f"{r.solved}/{r.tasks}",
                    r.worker_calls,
                    r.conductor_calls,
                    r.tokens,
                    f"{r.cost:.4f}",
                    f"{r.seconds:.0f} s",
                ]
                for r in rows
            ],
        )
    )
    fallbacks = sum(
        1 for r in results if r.strategy == "conductor" for p in r.plans if "fallback" in p
    )
    # The floor's reruns are plain "static" plans, not the conductor's.
    plans = sum(1 for r in results if r.strategy == "conductor" for p in r.plans if p != "static")
    print(f"\nconductor plans that fell back to static: {fallbacks} of {plans}")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--config", help="a conductor.toml with [conductor] and [workers.*]")
    ap.add_argument("--suite", default=str(SUITE))
    ap.add_argument("--strategy", default="static,conductor,single:*")
    ap.add_argument("--tasks", help="comma-separated task names (default: all)")
    ap.add_argument("--jobs", type=int, default=1)
    ap.add_argument("--max-iterations", type=int, default=2)
    ap.add_argument("--order", choices=ORDERS, default="strategies")
    ap.add_argument("--resume", action="store_true", help="run only what --out lacks")
    ap.add_argument("--out", help="results JSONL (default: /tmp/fix-quality-*.jsonl)")
    asyncio.run(main_async(ap.parse_args()))


if __name__ == "__main__":
    main()
