"""``mine --ray ADDRESS``: each commit's check (its tests run twice before and twice after
the fix) is a Ray task on a worker node. The driver reads git and ships the bundle (the
parent's tree, the commit's files, the diff), so no node needs the repository; a task
that qualifies comes back as its files, and the driver writes the suite and its log as a
local run does, with the same resume (``ADDRESS``: see ``runtime.cluster``)."""

from __future__ import annotations

import asyncio
import io
import tarfile
import tempfile
from pathlib import Path
from typing import Any

from ..runtime.cluster import connect_ray, describe_ray
from .sandbox import Bundle, Checked, extract_tree, judge


def _tar(folder: Path) -> bytes:
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w") as tar:
        tar.add(folder, arcname=".")
    return buf.getvalue()


def _remote_judge(bundle: Bundle) -> dict[str, Any]:
    """On a worker node: the check in a folder of its own; the task's files as a tar."""
    with tempfile.TemporaryDirectory(prefix="conductor-mine-") as work:
        found = asyncio.run(judge(bundle, Path(work)))
        files = b"" if found.skip else _tar(found.box)
    return {
        "failing": found.failing,
        "solution": found.solution,
        "skip": found.skip,
        "applies": found.applies,
        "files": files,
    }


class RayChecker:
    """``sandbox.judge``'s signature, on Ray."""

    def __init__(self, address: str, cpus: int | None = None) -> None:
        self._ray = ray = connect_ray(address, cpus)
        self._remote = ray.remote(num_cpus=1)(_remote_judge)

    async def __call__(self, bundle: Bundle, work: Path) -> Checked:
        got = await self._remote.remote(bundle)
        box = Path(tempfile.mkdtemp(prefix=f"{bundle.cand.short}-", dir=work))
        if got["files"]:
            extract_tree(got["files"], box)
        return Checked(box, got["failing"], got["solution"], got["skip"], got["applies"])

    def describe(self) -> str:
        return describe_ray(self._ray)

    def close(self) -> None:
        self._ray.shutdown()
