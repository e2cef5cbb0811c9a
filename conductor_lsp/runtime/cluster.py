"""Ray, the existing engine for running past one machine (the ``ray`` extra): one way to
join or start an instance, shared by ``eval --ray`` and ``mine --ray``. ``address`` is
what ``ray.init`` takes ("auto" for the cluster this machine belongs to,
``ray://HOST:10001`` for a remote one); "local" starts an instance on this machine."""

from __future__ import annotations

from typing import Any

from ..errors import BackendUnavailable
from ..version import extra


def connect_ray(address: str, cpus: int | None = None) -> Any:
    """The ``ray`` module, initialised once per process."""
    try:
        import ray
    except ImportError as e:
        raise BackendUnavailable(f"--ray needs Ray: {extra('ray')}") from e
    if not ray.is_initialized():
        if address == "local":
            ray.init(num_cpus=cpus, include_dashboard=False, log_to_driver=False)
        else:
            ray.init(address=address, log_to_driver=False)
    return ray


def describe_ray(ray: Any) -> str:
    """What the job runs on, for its first line of progress."""
    cpus = ray.cluster_resources().get("CPU", 0)
    return f"on Ray: {len(ray.nodes())} node(s), {cpus:g} CPUs"
