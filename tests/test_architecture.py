"""The layer rule, read from the source with ``ast``: who may import whom, and no cycles.

Floors, lowest first; a folder (or the flat modules, "basic") may import its own modules
and anything on a lower floor, never a sibling on its own floor nor anything above::

    errors
    edits                                  the pure edits API
    answers, config, storage, testrun      answer checks, the schema, our own files, tests
    basic                                  the flat modules: usage, plan, task, protocols, ...
    context                                what a model is shown
    models, episodes                       in-process models; episode records
    workers, checkpoints
    conductor                              plans
    policy                                 what to try next, learned from verdicts; the planner
    configure                              loading and validating the configuration
    runtime                                session, engine, budgets, events, traces
    fix                                    the loop, candidates, sandboxes
    jobs                                   one function per user job
    eval, mine                             the evaluator, mining
    learn
    mcp_server, server                     the MCP door, the LSP server
    cli

The doors (``cli``, ``server``, ``mcp_server``) also only translate: they call ``jobs``
and never reach into what the jobs wire (``DOORS_NEVER``).

Nothing inside the package imports the package facade. Imports under TYPE_CHECKING and
inside functions count like any other.
"""

from __future__ import annotations

import ast
import importlib
from collections.abc import Iterator
from pathlib import Path

import pytest
from helpers import WAIT

import conductor_lsp
from conductor_lsp import edits

PACKAGE = Path(conductor_lsp.__file__).parent
ROOT = "conductor_lsp"

FLOORS: list[tuple[str, ...]] = [
    ("errors",),
    ("edits",),
    ("answers", "config", "storage", "testrun"),
    ("basic",),
    ("context",),
    ("models", "episodes"),
    ("workers", "checkpoints"),
    ("conductor",),
    ("policy",),
    ("configure",),
    ("runtime",),
    ("fix",),
    ("jobs",),
    ("eval", "mine"),
    ("learn",),
    ("mcp_server", "server"),
    ("cli",),
]
DOORS = ("cli", "server", "mcp_server")
#: What the jobs layer wires, which no door imports: a door that needs it needs a job.
DOORS_NEVER = ("fix", "runtime", "context", "checkpoints")
#: What a door may import besides the jobs: the configuration, the other front ends
#: (eval, mine, learn), and the vocabulary every floor speaks (errors, the schema, the
#: pure edits API, the flat modules' types, where our files live, a test run's report).
DOORS_MAY = (
    *DOORS,
    "jobs",
    "eval",
    "mine",
    "learn",
    "configure",
    "config",
    "errors",
    "edits",
    "basic",
    "storage",
    "testrun",
)
#: The facade re-exports what users and benchmarks import, from the fix loop down.
FACADE_SEES = "fix"
#: At most this many modules directly in the package, besides its ``__init__``.
MOST_FLAT = 8


def _allowed() -> dict[str, set[str]]:
    out: dict[str, set[str]] = {}
    below: set[str] = set()
    for floor in FLOORS:
        for g in floor:
            out[g] = {g, *below}
        below |= set(floor)
        if FACADE_SEES in floor:
            out["facade"] = set(below)
    return out


#: group -> the groups it may import (its own included).
ALLOWED: dict[str, set[str]] = _allowed()
FLAT = {path.stem for path in PACKAGE.glob("*.py") if path.stem not in ("__init__", "errors")}


def group(module: str) -> str:
    name = module.removeprefix(ROOT).lstrip(".")
    if not name:
        return "facade"
    head = name.split(".")[0]
    return "basic" if head in FLAT else head


def sources(base: Path = PACKAGE) -> dict[str, str]:
    """module name -> source, for every module of the package."""
    out = {}
    for path in sorted(base.rglob("*.py")):
        rel = path.relative_to(base).with_suffix("")
        parts = [p for p in rel.parts if p != "__init__"]
        out[".".join([ROOT, *parts])] = path.read_text(encoding="utf-8")
    return out


def is_package(module: str, modules: dict[str, str]) -> bool:
    return any(m.startswith(module + ".") for m in modules)


def imports(module: str, source: str, modules: dict[str, str]) -> Iterator[tuple[str, int]]:
    """(imported internal module, line) for each import, resolving relative ones."""
    package = module if is_package(module, modules) else module.rpartition(".")[0]
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name.split(".")[0] == ROOT:
                    yield alias.name, node.lineno
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")
                base = base[: len(base) - (node.level - 1)]
                target = ".".join([*base, node.module] if node.module else base)
            else:
                target = node.module or ""
            if target.split(".")[0] != ROOT:
                continue
            for alias in node.names:
                sub = f"{target}.{alias.name}"
                yield (sub if sub in modules else target), node.lineno


def edges(modules: dict[str, str]) -> dict[str, set[str]]:
    """Explicit imports, plus the subpackage __init__ files Python runs on the way."""
    graph: dict[str, set[str]] = {m: set() for m in modules}
    for module, source in modules.items():
        for target, _ in imports(module, source, modules):
            parts = target.split(".")
            for k in range(2, len(parts)):  # parent packages below the facade
                parent = ".".join(parts[:k])
                inside = module == parent or module.startswith(parent + ".")
                if not inside and parent in modules:  # its own packages ran first
                    graph[module].add(parent)
            if target != module and target in modules:
                graph[module].add(target)
    return graph


def violations(modules: dict[str, str]) -> list[str]:
    problems = []
    for module, source in modules.items():
        for target, line in imports(module, source, modules):
            if target == ROOT and module != ROOT:
                problems.append(f"{module}:{line} imports the package facade")
                continue
            a, b = group(module), group(target)
            if b not in ALLOWED[a]:
                problems.append(f"{module}:{line} ({a}) may not import {target} ({b})")
    return problems + [f"import cycle: {' -> '.join(c)}" for c in cycles(edges(modules))]


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """One cycle per strongly connected component larger than one module."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on: set[str] = set()
    found: list[list[str]] = []
    counter = [0]

    def visit(v: str) -> None:
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on.add(v)
        for w in sorted(graph[v]):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1 or v in graph[v]:
                found.append(sorted(comp))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return found


def test_the_package_follows_the_layer_rule() -> None:
    modules = sources()
    assert len(modules) > 40
    assert violations(modules) == []


@pytest.mark.parametrize(
    ("module", "added", "expected"),
    [
        (
            "conductor_lsp.edits.apply",
            "from ..server import app\n",
            "conductor_lsp.edits.apply:1 (edits) may not import conductor_lsp.server.app (server)",
        ),
        (
            "conductor_lsp.workers.pool",
            "from ..conductor.registry import BACKENDS\n",
            "(workers) may not import conductor_lsp.conductor.registry (conductor)",
        ),
        (
            "conductor_lsp.runtime.engine",
            "from ..cli import render\n",
            "(runtime) may not import conductor_lsp.cli.render (cli)",
        ),
        (
            "conductor_lsp.context.files",
            "from .. import Session\n",
            "conductor_lsp.context.files:1 imports the package facade",
        ),
        (  # a cycle inside one layer, hidden behind TYPE_CHECKING
            "conductor_lsp.runtime.results",
            "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from .engine import Engine\n",
            "import cycle: ",
        ),
    ],
)
def test_a_forbidden_import_is_caught(module: str, added: str, expected: str) -> None:
    modules = sources()
    modules[module] = added + modules[module]
    found = violations(modules)
    assert any(expected in v for v in found), found


def test_public_api_stays_put() -> None:
    """The names users and benchmarks import; a change here is a change of the API."""
    assert sorted(conductor_lsp.__all__) == sorted(
        [
            "BACKENDS",
            "PROVIDERS",
            "Ambiguous",
            "BackendUnavailable",
            "BudgetExceeded",
            "CheckpointError",
            "ConductorConfig",
            "ConductorError",
            "Conductor",
            "Config",
            "ConfigError",
            "EditError",
            "Event",
            "FileContext",
            "FixLoop",
            "FixReport",
            "RunResult",
            "NoMatch",
            "Plan",
            "PlanError",
            "Session",
            "Step",
            "StepResult",
            "Tally",
            "Task",
            "TestRun",
            "UnsafePath",
            "Usage",
            "Worker",
            "WorkerConfig",
            "WorkerError",
            "WorkerFormatError",
            "WorkerInfo",
            "WorkerRequest",
            "WorkerResponse",
            "WorkerStatusError",
            "WorkerTimeout",
            "WorkerTransportError",
            "__version__",
            "load_config",
            "run_tests",
        ]
    )
    for name in conductor_lsp.__all__:
        assert getattr(conductor_lsp, name) is not None
    assert sorted(edits.__all__) == sorted(
        [
            "DEFAULT_DENY",
            "FUZZY_THRESHOLD",
            "NO_EDIT",
            "EditFailure",
            "EditResult",
            "EditsConfig",
            "FileEdit",
            "apply_edits",
            "apply_output",
            "check_path",
            "denied_by",
            "edited_paths",
            "no_edit",
            "normalize",
            "parse_edits",
        ]
    )


def test_no_module_is_past_400_lines() -> None:
    long = {m: s.count("\n") for m, s in sources().items() if s.count("\n") > 400}
    assert long == {}


#: Functions allowed past 60 lines, each with its reason.
LONG_FUNCTIONS: dict[str, str] = {}


def test_no_function_is_past_60_lines() -> None:
    long = {}
    for module, source in sources().items():
        for node in ast.walk(ast.parse(source)):
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                n = (node.end_lineno or node.lineno) - node.lineno + 1
                if n > 60 and f"{module}.{node.name}" not in LONG_FUNCTIONS:
                    long[f"{module}.{node.name}"] = n
    assert long == {}


def test_the_package_has_few_flat_modules() -> None:
    """A newcomer finds a feature's folder, not a pile of modules at the top."""
    assert len(FLAT) + 1 <= MOST_FLAT, sorted(FLAT)


def test_folders_form_no_cycle() -> None:
    """Folders, not only modules: a group imports only groups on floors below its own."""
    modules = sources()
    graph: dict[str, set[str]] = {}
    for module, source in modules.items():
        for target, _ in imports(module, source, modules):
            a, b = group(module), group(target)
            if a != b:
                graph.setdefault(a, set()).add(b)
                graph.setdefault(b, set())
    assert cycles(graph) == []
    assert all(g in ALLOWED for g in graph), sorted(set(graph) - set(ALLOWED))


def door_violations(modules: dict[str, str]) -> list[str]:
    """Door imports of what only the jobs may wire, or of anything else below them."""
    out = []
    for module, source in modules.items():
        if group(module) not in DOORS:
            continue
        for target, line in imports(module, source, modules):
            b = group(target)
            if b in DOORS_NEVER and target != "conductor_lsp.checkpoints.undo":
                out.append(f"{module}:{line} is a door and imports {target} (use jobs)")
            elif b not in DOORS_MAY:
                out.append(f"{module}:{line} is a door and imports {target} ({b})")
    return out


def test_the_doors_only_call_jobs() -> None:
    assert door_violations(sources()) == []


@pytest.mark.parametrize(
    ("module", "added", "expected"),
    [
        ("conductor_lsp.cli.main", "from ..fix.loop import FixLoop\n", "imports conductor_lsp.fix"),
        ("conductor_lsp.server.handlers", "from ..runtime import Session\n", "(use jobs)"),
        ("conductor_lsp.mcp_server.tools", "from ..context import round_task\n", "(use jobs)"),
        ("conductor_lsp.server.app", "from ..policy import Policy\n", "(policy)"),
    ],
)
def test_a_door_reaching_past_the_jobs_is_caught(module: str, added: str, expected: str) -> None:
    modules = sources()
    modules[module] = added + modules[module]
    assert any(expected in v for v in door_violations(modules)), door_violations(modules)


def test_nothing_below_the_front_ends_imports_them() -> None:
    modules = sources()
    found = [
        f"{module}:{line} imports {target}"
        for module, source in modules.items()
        for target, line in imports(module, source, modules)
        if group(target) in ("server", "cli") and group(module) not in ("server", "cli")
    ]
    assert found == []


def test_every_module_imports_on_its_own() -> None:
    """Import order must not matter: each module loads in a fresh interpreter."""
    import subprocess
    import sys

    names = [m for m in sources() if not m.endswith("__main__")]
    code = (
        "import importlib, sys\n"
        "for name in sys.argv[1:]:\n"
        "    for m in [k for k in sys.modules if k.startswith('conductor_lsp')]:\n"
        "        del sys.modules[m]\n"
        "    importlib.import_module(name)\n"
    )
    # Two interpreters, half the modules each: CI has two cores.
    procs = [
        subprocess.Popen(
            [sys.executable, "-c", code, *names[i::2]],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            text=True,
        )
        for i in range(2)
    ]
    for proc in procs:
        err = proc.communicate(timeout=WAIT)[1]
        assert proc.returncode == 0, err[-2000:]
    importlib.import_module("conductor_lsp.server")
