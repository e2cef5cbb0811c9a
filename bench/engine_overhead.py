"""Orchestration overhead: plans on a loopback stand-in with a fixed 200 ms per call.

For each plan: wall time / ideal critical-path time (target <= 1.05), and the
speed-up over running the same steps one after another, as the RL Conductor's
sequential loop does. Both runs happen side by side in one process.

Then candidates: a fix round whose plan has three leaves (each answer applied and
tested in its own sandbox, at once) against a round with one leaf, on the same
workspace (a git repository whose test is a small script), target <= 1.1x.

    python bench/engine_overhead.py [--latency 0.2] [--repeat 3]
"""

from __future__ import annotations

import argparse
import asyncio
import sys
import tempfile
import time
from pathlib import Path

from _common import median, table
from standin import StandIn

from conductor_lsp import Plan, Session, Step, Task, load_config
from conductor_lsp.checkpoints.git import init_repository

PLANS: dict[str, list[tuple[str, object]]] = {
    "1 step": [("w0", "all")],
    "3 steps, chain": [("w0", "all"), ("w1", "all"), ("w2", "all")],
    "5 steps, chain": [("w0", "all"), ("w1", "all"), ("w2", "all"), ("w0", "all"), ("w1", "all")],
    "5 steps, two branches": [("w0", ()), ("w1", ()), ("w2", (0,)), ("w0", (1,)), ("w1", "all")],
    "3 leaves (candidates)": [("w0", ()), ("w1", ()), ("w2", ())],
}
#: A workspace whose test fails until calc.add adds, and candidates that never fix it.
CALC = "def add(a, b):\n    return a - b\n"
CHECK = "import sys\nfrom calc import add\n\nsys.exit(0 if add(2, 3) == 5 else 1)\n"


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


async def fix_round(root: Path, url: str, leaves: int, latency: float) -> float:
    """One fix round (no candidate goes green) with ``leaves`` candidates; its seconds."""
    from conductor_lsp.jobs import fix_repository

    workers = {
        f"w{i}": {"provider": "openai-compatible", "model": f"m{i}", "base_url": f"{url}/v1"}
        for i in range(leaves)
    }
    cfg = load_config(
        root,
        overrides={
            "conductor": {"backend": "search" if leaves > 1 else "static", "max_steps": leaves},
            "workers": workers,
            "test": {"command": f"{sys.executable} check.py", "jobs": leaves},
            "budget": {"max_iterations": 1},
            "trace": {"enabled": False},
            "learn": {"record": False},
        },
        env={},
    )
    async with Session(cfg) as session:
        t0 = time.perf_counter()
        report = await fix_repository(session)
        seconds = time.perf_counter() - t0
    judged = [c for c in report.candidates if c.verdict is not None]
    assert len(judged) == leaves and not report.end.passed, report.reason
    return seconds


def wrong_answer(seen: object) -> str:
    model = getattr(seen, "body", {}).get("model", "m")
    return f"calc.py\n```python\ndef add(a, b):\n    return a * b  # {model}\n```\n"


async def candidates_table(latency: float, repeat: int) -> str:
    standin = StandIn(latency=latency, responder=wrong_answer).start()  # type: ignore[arg-type]
    rows = []
    try:
        with tempfile.TemporaryDirectory() as tmp:
            root = Path(tmp) / "ws"
            root.mkdir()
            (root / "calc.py").write_text(CALC)
            (root / "check.py").write_text(CHECK)
            init_repository(root)
            await fix_round(root, standin.url, 1, latency)  # warm-up
            one = median([await fix_round(root, standin.url, 1, latency) for _ in range(repeat)])
            three = median([await fix_round(root, standin.url, 3, latency) for _ in range(repeat)])
            rows = [
                ["1 leaf", f"{one * 1000:.0f} ms", "1.00x"],
                ["3 leaves, judged at once", f"{three * 1000:.0f} ms", f"{three / one:.2f}x"],
            ]
    finally:
        standin.stop()
    return table(["fix round (one candidate per leaf)", "wall", "vs 1 leaf"], rows)


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
        f"for a {latency * 1000:.0f} ms call\n"
    )
    print(await candidates_table(latency, repeat))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--latency", type=float, default=0.2)
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args()
    asyncio.run(main_async(args.latency, args.repeat))


if __name__ == "__main__":
    main()
