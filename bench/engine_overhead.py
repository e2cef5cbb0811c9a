"""Orchestration overhead: plans on a loopback stand-in with a fixed 200 ms per call.

For each plan: wall time / ideal critical-path time (target <= 1.05), and the
speed-up over running the same steps one after another, as the RL Conductor's
sequential loop does. Both runs happen side by side in one process.

    python bench/engine_overhead.py [--latency 0.2] [--repeat 3]
"""

from __future__ import annotations

import argparse
import asyncio
import tempfile
import time
from pathlib import Path

from _common import median, table
from standin import StandIn

from conductor_lsp import Plan, Session, Step, Task, load_config

PLANS: dict[str, list[tuple[str, object]]] = {
    "1 step": [("w0", "all")],
    "3 steps, chain": [("w0", "all"), ("w1", "all"), ("w2", "all")],
    "5 steps, chain": [("w0", "all"), ("w1", "all"), ("w2", "all"), ("w0", "all"), ("w1", "all")],
    "5 steps, two branches": [("w0", ()), ("w1", ()), ("w2", (0,)), ("w0", (1,)), ("w1", "all")],
}


def depth(steps: list[Step]) -> int:
    level: list[int] = []
    for i, s in enumerate(steps):
        deps = s.dependencies(i)
        level.append(1 + max((level[d] for d in deps), default=0))
    return max(level)


async def timed(session: Session, plan: Plan) -> float:
    t0 = time.perf_counter()
    result = await session.run(Task("benchmark task"), plan=plan)
    assert result.outcome == "done", result.reason
    return time.perf_counter() - t0


async def main_async(latency: float, repeat: int) -> None:
    standin = StandIn(latency=latency).start()
    floor = 0.0
    workers = {
        f"w{i}": {
            "provider": "openai-compatible",
            "model": f"m{i}",
            "base_url": f"{standin.url}/v1",
            "concurrency": 8,
        }
        for i in range(3)
    }
    with tempfile.TemporaryDirectory() as tmp:
        cfg = load_config(
            Path(tmp),
            overrides={
                "conductor": {"backend": "static"},
                "workers": workers,
                "trace": {"enabled": False},
                "budget": {"max_calls": 10_000},
            },
            env={},
        )
        session = Session(cfg)
        rows = []
        try:
            await timed(session, Plan((Step("w0", "warm-up"),)))  # connections, imports
            floor = median([await timed(session, Plan((Step("w0", "floor"),))) for _ in range(5)])
            for name, spec in PLANS.items():
                steps = [
                    Step(w, f"step {i}", a if a == "all" else tuple(a))
                    for i, (w, a) in enumerate(spec)  # type: ignore[arg-type]
                ]
                seq = [Step(s.worker, s.subtask, "all", s.role) for s in steps]
                ideal = depth(steps) * latency
                wall = median([await timed(session, Plan(tuple(steps))) for _ in range(repeat)])
                serial = median([await timed(session, Plan(tuple(seq))) for _ in range(repeat)])
                rows.append(
                    [
                        name,
                        depth(steps),
                        f"{wall * 1000:.0f} ms",
                        f"{ideal * 1000:.0f} ms",
                        f"{wall / ideal:.3f}",
                        f"{serial * 1000:.0f} ms",
                        f"{serial / wall:.2f}x",
                    ]
                )
        finally:
            await session.aclose()
            standin.stop()
    print(
        table(
            [
                "plan",
                "critical path",
                "wall",
                "ideal",
                "wall / ideal",
                "one after another",
                "speed-up",
            ],
            rows,
        )
    )
    print(
        f"\none 1-step job end to end (stand-in and HTTP included): {floor * 1000:.0f} ms "
        f"for a {latency * 1000:.0f} ms call"
    )


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--latency", type=float, default=0.2)
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args()
    asyncio.run(main_async(args.latency, args.repeat))


if __name__ == "__main__":
    main()
