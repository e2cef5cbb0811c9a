"""Replay: strategies, policies and stop rules on recorded runs, without calling a model.

Every request of a recorded ``eval`` run is answered again from its traces (provider
``replay``, ``conductor_lsp/workers/replay.py``), with the recorded tokens priced at the
config's prices; the tests still judge every candidate in a sandbox, so a replayed
strategy's verdicts are real wherever its requests were recorded. A request no run
recorded is a miss (an empty answer) and the table counts them: record the runs a
strategy needs first (``single:*`` in both wordings, search for the retries of each
lane), then compare anything that asks only those.

    python bench/replay.py --traces RUN-traces [RUN2-traces ...] --config pair.toml \\
        --strategy static,search,cascade,policy,policy@cost --policy p.json [--suite DIR]

``NAME@MODE`` runs strategy NAME with ``[fix] prefer = MODE``; ``policy`` is the static
backend led by ``--policy``; every other name is an ``eval`` strategy.
"""

from __future__ import annotations

import argparse
import asyncio
import tempfile
import time
from pathlib import Path
from typing import Any

from _common import REPO, table

from conductor_lsp import load_config
from conductor_lsp.configure.load import derive, layered
from conductor_lsp.eval import by_strategy, evaluate, load_suite, parse_strategies
from conductor_lsp.workers import replay


def replay_config(config: Path, folder: Path) -> Any:
    """The recorded config with every model worker answering from the traces in
    ``folder`` (a layer's workers table replaces the whole pool, so each is written out)."""
    base = load_config(Path.cwd(), config)
    keep = ("model", "description", "price_in", "price_out", "strength", "max_tokens")
    workers = {
        name: {k: getattr(w, k) for k in keep}
        | {"provider": "replay", "options": {"traces": str(folder)}}
        for name, w in base.workers.items()
        if w.provider != "tests"
    }
    return derive(base, {"workers": workers}, root=base.root)


def strategies(text: str, workers: Any, policy: str) -> dict[str, dict[str, Any]]:
    out: dict[str, dict[str, Any]] = {}
    for item in [s.strip() for s in text.split(",") if s.strip()]:
        name, _, mode = item.partition("@")
        if name == "policy":
            if not policy:
                raise SystemExit("strategy policy needs --policy FILE")
            led = {"backend": "static", "worker": "", "policy": str(Path(policy).resolve())}
            layer: dict[str, Any] = {"conductor": led}
        else:
            (layer,) = parse_strategies(name, workers).values()
        out[item] = layered(layer, {"fix": {"prefer": mode}}) if mode else dict(layer)
    return out


async def main_async(args: argparse.Namespace) -> None:
    with tempfile.TemporaryDirectory(prefix="replay-traces-") as tmp:
        for i, t in enumerate(args.traces):  # one folder the workers read, however many runs
            (Path(tmp) / str(i)).symlink_to(Path(t).resolve(), target_is_directory=True)
        await compare(args, replay_config(Path(args.config), Path(tmp)))


async def compare(args: argparse.Namespace, base: Any) -> None:
    tasks = load_suite(Path(args.suite))
    if args.tasks:
        tasks = [t for t in tasks if t.name in set(args.tasks.split(","))]
    chosen = strategies(args.strategy, base.workers, args.policy)
    out = Path(args.out or f"/tmp/replay-{time.strftime('%Y%m%d-%H%M%S')}.jsonl")
    replay.MISSES.clear()
    results = await evaluate(
        tasks, chosen, base, out=out, jobs=args.jobs, max_iterations=args.max_iterations
    )
    rows = by_strategy(results)
    headers = ["strategy", "solved", "$", "worker calls", "tokens", "time"]
    cells = [
        [r.strategy, f"{r.solved}/{r.tasks}", f"{r.cost:.4f}", r.worker_calls, r.tokens,
         f"{r.seconds:.0f} s"]
        for r in rows
    ]  # fmt: skip
    print(table(headers, cells))
    missed = sum(replay.MISSES.values())
    print(f"\nrequests no recording answered: {missed} {dict(replay.MISSES)}; results in {out}")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--traces", nargs="+", required=True, help="recorded eval trace folders")
    ap.add_argument("--config", required=True, help="the config the runs were recorded with")
    ap.add_argument("--suite", default=str(REPO / "bench" / "tasks"))
    ap.add_argument("--strategy", default="static,search,cascade")
    ap.add_argument("--policy", default="", help="a policy file, for strategy policy")
    ap.add_argument("--tasks", help="comma-separated task names (default: all)")
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--max-iterations", type=int, default=2)
    ap.add_argument("--out", help="results JSONL")
    asyncio.run(main_async(ap.parse_args()))


if __name__ == "__main__":
    main()
