"""Answers recorded in traces, served again: a worker that calls no model.

Every job writes a trace (``.conductor/traces/``, and one folder a task and strategy
under ``eval``'s results): each request a worker was sent, and its answer with the
tokens it cost. ``provider = "replay"`` with ``traces = "DIR"`` answers the same request
(the same worker, instructions and prompt, the workspace's own path aside) with the
recorded answer and its usage, priced at this worker's prices; a request never recorded
gets an empty answer and counts as a miss (``misses``). ``bench/replay.py`` runs any
strategy, policy and stop rule on recorded runs this way, so learners are compared on
the same answers without a model, and the tests still judge every candidate.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import threading
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, ClassVar

from ..config.options import build
from ..config.schema import Config, WorkerConfig
from ..errors import ConfigError
from ..protocols import Check, WorkerContext, WorkerRequest, WorkerResponse
from ..storage.records import read
from ..usage import Usage
from .registry import ProviderDefaults

ROOT = "<root>"
_LOCK = threading.Lock()
_TABLES: dict[Path, dict[str, dict[str, Any]]] = {}
#: Requests no recording answered, by worker name (for the benchmark's coverage line).
MISSES: dict[str, int] = {}


@dataclass
class ReplayOptions:
    traces: str = ""
    """A folder of recorded traces (searched recursively for *.jsonl)."""


#: An interpreter's path as a test command shows it ("$ /x/.venv/bin/python -m pytest").
_PYTHON = re.compile(r"(?<![\w.-])/\S*/bin/python[\d.]*(?=\s)")


def key(worker: str, system: str, parts: Sequence[str], root: str) -> str:
    """The request's identity: the worker and what it was sent, its workspace path and
    the interpreter the tests ran with aside (a recording replays from another checkout)."""

    def norm(text: str) -> str:
        return _PYTHON.sub("<python>", text.replace(root, ROOT) if root else text)

    body = json.dumps([worker, norm(system), [norm(p) for p in parts]])
    return hashlib.sha256(body.encode()).hexdigest()


def read_table(files: Iterable[Path]) -> dict[str, dict[str, Any]]:
    """Request key -> the recorded response, from trace files (a damaged line skipped)."""
    table: dict[str, dict[str, Any]] = {}
    for path in files:
        root, asked = "", {}
        for line in path.read_text(encoding="utf-8", errors="replace").splitlines():
            try:
                rec = json.loads(line)
            except ValueError:
                continue
            kind = rec.get("type")
            if kind == "task":
                root = str(rec.get("root") or "")
            elif kind == "request":
                asked[rec.get("step")] = key(rec["worker"], rec["system"], rec["parts"], root)
            elif kind == "response" and rec.get("step") in asked:
                table.setdefault(asked.pop(rec["step"]), rec)
    return table


def traces_in(folder: Path) -> list[Path]:
    """Every trace file under ``folder``, through links too (several runs are joined as
    links in one folder, and ``rglob`` does not follow them)."""
    return sorted(
        Path(top) / name
        for top, _, names in os.walk(folder, followlinks=True)
        for name in names
        if name.endswith(".jsonl")
    )


def table_of(folder: Path) -> Mapping[str, dict[str, Any]]:
    with _LOCK:
        if folder not in _TABLES:
            _TABLES[folder] = read_table(traces_in(folder))
        return _TABLES[folder]


class ReplayWorker(ProviderDefaults):
    default_description: ClassVar[str] = "recorded answers, served again"
    requires_model: ClassVar[bool] = False
    Options = ReplayOptions

    def __init__(self, name: str, config: WorkerConfig, context: WorkerContext) -> None:
        self.name = name
        self.config = config
        self.options = build(ReplayOptions, config.options, f"workers.{name}", "provider replay")
        if not self.options.traces or not Path(self.options.traces).is_dir():
            raise ConfigError(f"workers.{name}.traces must name a folder of recorded traces")
        self.root = str(context.root)
        self.table = table_of(Path(self.options.traces).resolve())

    @classmethod
    def doctor(cls, name: str, config: WorkerConfig, full: Config) -> Check:
        where = config.options.get("traces", "")
        return ("ok" if where and Path(where).is_dir() else "no"), f"replay: {where or '?'}"

    async def complete(self, request: WorkerRequest) -> WorkerResponse:
        parts = [p.text for p in request.parts]
        found = self.table.get(key(self.name, request.system, parts, self.root))
        if found is None:
            with _LOCK:
                MISSES[self.name] = MISSES.get(self.name, 0) + 1
            return WorkerResponse(text="", model=f"replay:{self.name} (not recorded)")
        usage = read(found.get("usage") or {}, Usage, f"{self.name}'s recorded usage")
        return WorkerResponse(
            text=str(found.get("text") or ""),
            usage=usage,
            cost=usage.cost(self.config.price_in, self.config.price_out),
            model=f"replay:{self.name}",
            elapsed=float(found.get("elapsed") or 0.0),
        )

    async def aclose(self) -> None:
        return None
