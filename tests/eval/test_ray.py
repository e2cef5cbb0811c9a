"""``eval --ray``: each (task, strategy) a Ray task on a local head the test starts itself
(two CPUs), against the loopback stand-in; the rows equal a local run's."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from helpers import cli, config, worker
from standin import Seen, StandIn

pytest.importorskip("ray")

SUITE = Path(__file__).resolve().parents[2] / "bench" / "tasks"
SAME = ("task", "strategy", "solved", "outcome", "rounds", "worker_calls", "tokens", "cost")


def test_ray_gives_the_rows_a_local_run_gives(tmp_path: Path) -> None:
    suite = tmp_path / "suite"
    for name in ("add_sub", "average"):
        shutil.copytree(SUITE / name, suite / name)
    fixes = {
        name: (SUITE / name / "task.toml").read_text().split("'''")[1]
        for name in ("add_sub", "average")
    }

    def answer(seen: Seen) -> str:
        prompt = seen.prompt().replace("\\n", "\n")
        for fix in fixes.values():
            if fix.strip().splitlines()[0] in prompt:
                return fix
        return "no idea"

    standin = StandIn(responder=answer).start()
    try:
        cfg = tmp_path / "pool.toml"
        cfg.write_text(config('backend = "static"', worker("coder", standin.url), tests=False))
        rows = {}
        for mode, extra in (("local", []), ("ray", ["--ray", "local", "--jobs", "2"])):
            out = tmp_path / f"{mode}.jsonl"
            done = cli("eval", str(suite), "--strategy", "static", "--config", str(cfg),
                       "--max-iterations", "1", "--out", str(out), *extra, cwd=tmp_path,
                       timeout=600)  # fmt: skip
            assert done.returncode == 0, done.stderr[-2000:]
            assert ("on Ray: 1 node(s), 2 CPUs" in done.stdout) == (mode == "ray")
            rows[mode] = sorted(
                tuple(json.loads(line)[k] for k in SAME) for line in out.read_text().splitlines()
            )
        assert rows["ray"] == rows["local"]
        assert all(r[2] for r in rows["local"])  # both solved: the rows say something
    finally:
        standin.stop()
