"""Past one machine on an existing engine: with ``--ray ADDRESS`` each (task, strategy) of
``eval`` is a Ray task that runs in its own sandbox on a worker node and returns its row;
the rows stream back to the same JSONL file, with the same resume (``ADDRESS``: see
``runtime.cluster``). The suite's folder and the workers' endpoints must be reachable
from every node (a shared disk, a served model)."""

from __future__ import annotations

import asyncio
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from ..config.schema import Config
from ..runtime.cluster import connect_ray, describe_ray
from ..storage.records import as_data, read
from .run import TaskResult, run_one
from .suite import SuiteTask


def _remote_run(
    task: SuiteTask,
    strategy: str,
    layer: Mapping[str, Any],
    base: Config,
    traces: str,
    max_iterations: int,
) -> dict[str, Any]:
    """On a worker node: the pair run as a local eval runs it; its row as plain data."""
    result = asyncio.run(run_one(task, strategy, layer, base, Path(traces), max_iterations))
    return as_data(result)


class RayRunner:
    """``run_one``'s signature, on Ray."""

    def __init__(self, address: str, cpus: int | None = None) -> None:
        self._ray = ray = connect_ray(address, cpus)
        self._remote = ray.remote(num_cpus=1)(_remote_run)

    async def __call__(
        self,
        task: SuiteTask,
        strategy: str,
        layer: Mapping[str, Any],
        base: Config,
        traces: Path,
        max_iterations: int,
    ) -> TaskResult:
        ref = self._remote.remote(task, strategy, dict(layer), base, str(traces), max_iterations)
        return read(await ref, TaskResult, "a result from the cluster")

    def describe(self) -> str:
        return describe_ray(self._ray)

    def close(self) -> None:
        self._ray.shutdown()
