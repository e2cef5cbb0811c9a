"""What reaches the worker: on a suite of injected bugs (``bench/inject.py``), how often
the mutated line is in what a worker is shown, and the largest request against the
worker's window, per window size and strategy.

By default the workers are the loopback stand-in answering "no edit" at once, so the
figures are about what is *sent* (two full rounds, no model needed, minutes); with
``--live`` they are the configuration's own workers (the real pair), and solved, $ and
seconds are real too. Requests are read back from the job's traces; tokens are counted
with ``--tokenizer`` (a GGUF file, read by transformers) when given, else estimated at
``context.window.CHARS_PER_TOKEN``. The stand-in reports a prompt's tokens as that
tokenizer counts them (as a real server does), so the characters per token the engine
learns from its answers (``workers.ratios``) are what they would be; each window starts
from a fresh user state (the fixed guess), and the table shows the ratios used and the
ratios counted.

``policy`` and ``policy@MODE`` rows (``@MODE`` sets ``[fix] prefer``; ``cascade@cost``
too) use a policy fitted on the episodes of ``--fit-from`` runs (other suites'), as
``bench/unseen.py`` does.

    python bench/reach.py --suite bench/tasks_injected --config bench/configs/local_pair.toml \\
        --windows 4096,8192 --strategies static,cascade --out bench/results/reach.jsonl \\
        --tokenizer /work/models/qwen2.5-coder-1.5b.gguf
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import statistics
import tempfile
import tomllib
from collections.abc import Callable
from pathlib import Path
from typing import Any

from _common import episodes_of, table
from replay import strategies as chosen
from standin import StandIn
from two_fold import fitted

from conductor_lsp import load_config
from conductor_lsp.configure import layered
from conductor_lsp.eval import evaluate, load_suite

SILENT = "I cannot tell where the bug is from what I was shown."


def counter(gguf: Path | None) -> tuple[Callable[[str], int], str]:
    """Tokens in a text: the model's tokenizer when given, else the project's estimate."""
    if gguf is None:
        from conductor_lsp.context.window import CHARS_PER_TOKEN

        return (lambda text: int(len(text) / CHARS_PER_TOKEN)), "estimated"
    from transformers import AutoTokenizer

    tok = AutoTokenizer.from_pretrained(str(gguf.parent), gguf_file=gguf.name)
    return (lambda text: len(tok.encode(text))), f"counted ({gguf.name})"


def requests(trace_dir: Path) -> list[dict[str, Any]]:
    out = []
    for path in sorted(trace_dir.rglob("*.jsonl")):
        for line in path.read_text(encoding="utf-8").splitlines():
            record = json.loads(line)
            if record.get("type") == "request":
                out.append(record)
    return out


def shown_in_code(text: str, line: str) -> bool:
    """The mutated line inside a file's code (not only quoted in a traceback)."""
    for block in text.split("## File `")[1:]:
        code = block.split("```", 2)[1] if block.count("```") >= 2 else ""
        if line.strip() in code:
            return True
    return False


def measure(
    args: argparse.Namespace, window: int, count: Callable[[str], int]
) -> list[dict[str, Any]]:
    tasks = load_suite(args.suite)
    base_layer = tomllib.loads(args.config.read_text(encoding="utf-8"))
    stand = None if args.live else StandIn(responder=lambda seen: SILENT, counter=count).start()
    workers = {}
    for name, w in base_layer.get("workers", {}).items():
        w = {**w, "context": window}
        if stand is not None:
            w["base_url"] = stand.url
        workers[name] = w
    layer = layered(base_layer, {"workers": workers})
    out = args.out.with_name(f"{args.out.stem}-{window}.jsonl")
    # a fresh user state: the learned characters per token start from the fixed guess
    os.environ["XDG_STATE_HOME"] = tempfile.mkdtemp(prefix="reach-state-")
    try:
        base = load_config(args.suite, overrides=layer)
        strategies = chosen(args.strategies, base.workers, str(args.policy or ""))
        results = asyncio.run(
            evaluate(tasks, strategies, base, out=out, max_iterations=args.rounds, order="tasks")
        )
    finally:
        if stand is not None:
            stand.stop()
    rows = []
    for r in results:
        spec = tomllib.loads((args.suite / r.task / "task.toml").read_text(encoding="utf-8"))
        mutated = spec["injected"]["mutated"]
        sent = requests(Path(r.traces))
        texts = ["\n".join([q.get("system", ""), *q.get("parts", [])]) for q in sent]
        tokens = [count(t) for t in texts]
        used = [q.get("chars_per_token") for q in sent]
        cap = window - max(w.get("max_tokens", 0) for w in workers.values())
        rows.append(
            {
                "window": window, "strategy": r.strategy, "task": r.task,
                "requests": len(sent),
                "reached": any(mutated.strip() in t for t in texts),
                "in_code": any(shown_in_code(t, mutated) for t in texts),
                "first_in_code": bool(texts) and shown_in_code(texts[0], mutated),
                "largest_tokens": max(tokens, default=0), "room": cap,
                "fill": [round(n / cap, 3) for n in tokens],
                "estimate": used,
                "actual": [round(len(t) / max(n, 1), 3)
                           for t, n in zip(texts, tokens, strict=True)],
                "over": sum(1 for n in tokens if n > cap),
                "solved": r.solved, "cost": r.cost, "seconds": round(r.seconds, 1),
                "error": r.error,
            }
        )  # fmt: skip
    return rows


def _median(values: list[float]) -> str:
    return f"{statistics.median(values):.0%}" if values else "-"


def _spread(values: list[float]) -> str:
    return f"{min(values):.2f}-{max(values):.2f}" if values else "-"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--suite", type=Path, default=Path("bench/tasks_injected"))
    ap.add_argument("--config", type=Path, default=Path("bench/configs/local_pair.toml"))
    ap.add_argument("--windows", default="4096,8192")
    ap.add_argument("--strategies", default="static,cascade")
    ap.add_argument("--rounds", type=int, default=2)
    ap.add_argument("--out", type=Path, default=Path("bench/results/reach.jsonl"))
    ap.add_argument("--tokenizer", type=Path, default=None, help="a GGUF file")
    ap.add_argument("--live", action="store_true", help="the configuration's own workers")
    ap.add_argument(
        "--fit-from",
        action="append",
        default=[],
        type=Path,
        help="an eval run whose episodes fit the policy of `policy` rows (repeatable)",
    )
    args = ap.parse_args()
    args.suite, args.config = args.suite.resolve(), args.config.resolve()
    args.policy = None
    if args.fit_from:
        episodes = episodes_of(args.fit_from)
        args.policy = args.out.with_name(f"{args.out.stem}-policy.json").resolve()
        print(f"policy fitted on {fitted(episodes, None, args.policy)}")
    count, how = counter(args.tokenizer)
    rows = []
    for window in [int(w) for w in args.windows.split(",")]:
        rows += measure(args, window, count)
    rows_out = args.out.with_name(f"{args.out.stem}-rows.jsonl")
    rows_out.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    summary = []
    for window in sorted({r["window"] for r in rows}):
        for strategy in dict.fromkeys(r["strategy"] for r in rows):
            mine = [r for r in rows if r["window"] == window and r["strategy"] == strategy]
            n = len(mine)
            summary.append(
                (
                    window, strategy, n,
                    f"{sum(r['in_code'] for r in mine)}/{n}",
                    f"{sum(r['first_in_code'] for r in mine)}/{n}",
                    f"{sum(r['reached'] for r in mine)}/{n}",
                    f"{max(r['largest_tokens'] for r in mine)} / {mine[0]['room']}",
                    sum(r["over"] for r in mine), sum(r["requests"] for r in mine),
                    _median([f for r in mine for f in r.get("fill", [])]),
                    _spread([e for r in mine for e in r.get("estimate", []) if e]),
                    _spread([a for r in mine for a in r.get("actual", [])]),
                    f"{sum(r['solved'] for r in mine)}/{n}",
                    round(sum(r["cost"] for r in mine), 4),
                    round(sum(r["seconds"] for r in mine), 1),
                )
            )  # fmt: skip
    print(f"tokens {how}; rows in {rows_out}")
    print(
        table(
            [
                "window", "strategy", "tasks", "line in code shown", "in the first request",
                "line anywhere", "largest request / room (tokens)", "requests over",
                "requests", "median fill", "chars/token estimated", "chars/token counted",
                "solved", "$", "seconds",
            ],
            summary,
        )
    )  # fmt: skip


if __name__ == "__main__":
    main()
