"""Past one machine on an existing engine: with ``--ray ADDRESS`` each (task, strategy) of
``eval`` is a Ray task that runs in its own sandbox on a worker node and returns its row;
the rows stream back to the same JSONL file, with the same resume. ``ADDRESS`` is what
``ray.init`` takes ("auto" for the cluster this machine belongs to, ``ray://HOST:10001``
for a remote one); "local" starts a Ray instance on this machine. The suite's folder and
the workers' endpoints must be reachable from every node (a shared disk, a served model)."""

from __future__ import annotations

import asyncio
from collections.abc import Mapping
from dataclasses import asdict
from pathlib import Path
from typing import Any

from ..config.schema import Config
from ..errors import BackendUnavailable
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
    return asdict(result)


class RayRunner:
    """``run_one``'s signature, on Ray."""

    def __init__(self, address: str, cpus: int | None = None) -> None:
        try:
            import ray
        except ImportError as e:
            raise BackendUnavailable("pip install 'conductor-lsp[ray]' for --ray") from e
        if not ray.is_initialized():
            if address == "local":
                ray.init(num_cpus=cpus, include_dashboard=False, log_to_driver=False)
            else:
                ray.init(address=address, log_to_driver=False)
        self._ray = ray
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
        return TaskResult(**(await ref))

    def describe(self) -> str:
        cpus = self._ray.cluster_resources().get("CPU", 0)
        return f"on Ray: {len(self._ray.nodes())} node(s), {cpus:g} CPUs"

    def close(self) -> None:
        self._ray.shutdown()
