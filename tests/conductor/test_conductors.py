from __future__ import annotations

import asyncio
import dataclasses
import json
import sys
from pathlib import Path

import pytest
from tiny_model import well_formed

from conductor_lsp import BackendUnavailable, ConfigError, FileContext, PlanError, Task, run_tests
from conductor_lsp.conductor import StaticConductor, build_prompt, parse_plan, static_plan
from conductor_lsp.conductor.grammar import plan_grammar
from conductor_lsp.conductor.static import pipeline_plan
from conductor_lsp.config import ConductorConfig, WorkerConfig
from conductor_lsp.plan import validate_plan
from conductor_lsp.protocols import Part, WorkerInfo, WorkerRequest
from conductor_lsp.runtime import make_plan

INFOS = [
    WorkerInfo("cheap", "fast small model", 0.1, 0.4, "openai-compatible"),
    WorkerInfo("strong", "frontier coder", 3.0, 15.0, "anthropic"),
    WorkerInfo("tests", "runs tests", 0.0, 0.0, "tests", is_tool=True),
]
TASK = Task("Fix add() so that add(2, 2) == 4")


def test_static_baseline_is_one_call_to_the_strongest_then_a_debugging_retry() -> None:
    plan = static_plan(INFOS, 5)
    assert [(s.worker, s.role) for s in plan.steps] == [("strong", "generation")]
    retry = static_plan(INFOS, 5, Task("Fix add()", previous="No edit was applied."))
    assert [(s.worker, s.role) for s in retry.steps] == [("strong", "debugging")]
    assert "previous attempt" in retry.steps[0].subtask
    # Too expensive for what is left of the budget: the next strongest that fits.
    poor = [dataclasses.replace(INFOS[1], affordable=False), *INFOS[:1], *INFOS[2:]]
    assert static_plan(poor, 5).steps[0].worker == "cheap"
    # Equal prices: the configured strength decides.
    even = [dataclasses.replace(w, price_in=0, price_out=0) for w in INFOS]
    even[0] = dataclasses.replace(even[0], strength=3)
    assert static_plan(even, 5).steps[0].worker == "cheap"
    assert static_plan(INFOS, 5, pinned="cheap").source == "single:cheap"
    with pytest.raises(PlanError, match="not in the pool"):
        static_plan(INFOS, 5, pinned="tests")
    with pytest.raises(PlanError, match="no model workers"):
        static_plan(INFOS[2:], 5)


def test_a_single_call_in_the_second_wording_asks_for_the_cause_then_retries_as_static() -> None:
    """``single:NAME@cause``: the request search's second leaf makes, so ``eval`` records
    the policy's (worker, "cause") action on every task; later rounds retry as static."""
    from conductor_lsp.conductor.static import CAUSE, DIRECT

    plan = static_plan(INFOS, 5, pinned="cheap", wording="cause")
    assert [(s.worker, s.subtask, s.access) for s in plan.steps] == [("cheap", CAUSE, ())]
    assert plan.source == "single:cheap@cause"
    assert static_plan(INFOS, 5, wording="cause").source == "static@cause"
    retry = static_plan(INFOS, 5, Task("Fix add()", previous="No edit."), wording="cause")
    assert "previous attempt" in retry.steps[0].subtask
    assert static_plan(INFOS, 5).steps[0].subtask == DIRECT
    shaped = ConductorConfig(backend="static", worker="strong", shape="review",
                             helper="cheap", wording="cause")  # fmt: skip
    with pytest.raises(PlanError, match="wording = cause is for one call"):
        asyncio.run(StaticConductor(shaped).plan(TASK, INFOS, 5))


def test_pipeline_uses_cheap_analyst_and_strong_coder() -> None:
    plan = pipeline_plan(INFOS, 5)
    assert [(s.worker, s.role) for s in plan.steps] == [
        ("cheap", "analysis"),
        ("strong", "generation"),
        ("strong", "debugging"),
    ]
    assert [s.access for s in plan.steps] == [(), (0,), (0, 1)]  # each sees all before it
    assert [s.role for s in pipeline_plan(INFOS, 2).steps] == ["analysis", "generation"]
    alone = pipeline_plan(INFOS, 1).steps
    assert [(s.role, s.access) for s in alone] == [("generation", ())]  # sees nothing dropped
    for steps in (plan.steps, alone):
        validate_plan(list(steps), [w.name for w in INFOS], 5)
    shaped = ConductorConfig(backend="static", worker="cheap", shape="pipeline", helper="strong")
    named = asyncio.run(StaticConductor(shaped).plan(TASK, INFOS, 5))
    assert [(s.worker, s.role) for s in named.steps] == [
        ("strong", "analysis"),
        ("cheap", "generation"),
        ("cheap", "debugging"),
    ]
    assert named.source == "pipeline:strong>cheap"
    with pytest.raises(PlanError, match="shape pipeline has 3 steps; max_steps is 2"):
        asyncio.run(StaticConductor(shaped).plan(TASK, INFOS, 2))


async def test_invalid_conductor_output_falls_back_with_reason() -> None:
    class Broken:
        name = "broken"

        async def plan(self, task: Task, workers: object, max_steps: int) -> object:
            return parse_plan(
                "model_id = [0, 1]\nsubtasks = ['a']\naccess_list = [[]]", [w.name for w in INFOS]
            )

        async def aclose(self) -> None:
            return None

    plan = await make_plan(Broken(), TASK, INFOS, 5)  # type: ignore[arg-type]
    assert plan.source.startswith("static (fallback: broken: lists have unequal lengths")
    assert plan.notes and "unequal" in plan.notes[0]
    assert (await make_plan(StaticConductor(), TASK, INFOS, 5)).source == "static"


def test_prompt_lists_workers_by_id_with_price_and_keeps_prefix_fixed() -> None:
    p1 = build_prompt(TASK, INFOS, 5)
    p2 = build_prompt(Task("Something else entirely"), INFOS, 5)
    assert "0: cheap, fast small model, $0.1/$0.4" in p1.system
    assert "2: tests, runs tests, a tool: it cannot write code, free" in p1.system
    assert "model_id = [" in p1.system and "access_list" in p1.system
    assert p1.system == p2.system  # the cacheable prefix does not depend on the task
    assert "add(2, 2) == 4" in p1.user and "add(2, 2)" not in p1.system
    # The examples use the pool's own workers: the strongest (1) alone, then cheap (0) first.
    assert "model_id = [1]" in p1.system and "model_id = [0, 1]" in p1.system
    # The conductor sees the task briefly: files by name and size, never their text.
    files = Task("Fix it", files=(FileContext("calc.py", "SECRET_BODY = 1\n"),))
    brief = build_prompt(files, INFOS, 5).user
    assert "`calc.py` (1 lines, may change)" in brief and "SECRET_BODY" not in brief


def test_a_verbatim_copy_of_an_example_plan_fits_any_task() -> None:
    """Small conductors copy the examples word for word (SmolLM2-135M does on every task):
    the copy must name the pool's own workers and no code that the task may not have."""
    system = build_prompt(TASK, INFOS, 5).system
    plans = [parse_plan(block, INFOS) for block in system.split("Example (task:")[1:]]
    assert len(plans) == 3
    assert [[s.worker.name for s in p.steps] for p in plans] == [
        ["strong"],
        ["cheap", "strong"],
        ["cheap", "strong"],
    ]
    assert [p.leaves() for p in plans] == [(0,), (1,), (0, 1)]  # the last: two candidates
    for step in (s for p in plans for s in p.steps):
        assert "(" not in step.subtask and ".py" not in step.subtask, step.subtask
        assert "test" in step.subtask or "step 0" in step.subtask, step.subtask


def test_brief_keeps_the_list_of_failures_and_leaves_the_raw_output_to_workers(
    tmp_path: Path,
) -> None:
    (tmp_path / "test_a.py").write_text("def test_a():\n    assert 1 + 1 == 3\n")
    run = asyncio.run(run_tests(f"{sys.executable} -m pytest -q -p no:cacheprovider", tmp_path, 60))
    report = run.summary()
    assert "test_a.py::test_a at test_a.py:2" in report and "AssertionError" in report
    brief = Task("Fix it", test_failures=report).brief()
    assert "test_a.py::test_a at test_a.py:2: assert (1 + 1) == 3" in brief
    assert "AssertionError" not in brief and "short test summary" not in brief
    # A report with no parsed failures (a crash, another runner) is kept as it is.
    crash = "$ make test\nFAILED (exit 2)\nmake: *** No rule to make target 'test'."
    assert "No rule to make target" in Task("Fix it", test_failures=crash).brief()


@pytest.mark.parametrize(
    ("text", "ok"),
    [
        (
            'model_id = [0, 1]\nsubtasks = ["Find the bug here", "Write the fix now"]\n'
            'access_list = [[], "all"]',
            True,
        ),
        ('model_id = [2]\nsubtasks = ["Run the tests now"]\naccess_list = ["all"]', True),
        (
            "model_id = [0, 1, 0]\n"
            'subtasks = ["Find the bug here", "Write the fix", "Check it all"]\n'
            "access_list = [[], [0], [0, 1]]",
            True,
        ),
        (
            'model_id = [3]\nsubtasks = ["Find the bug here"]\naccess_list = [[]]',
            False,
        ),  # no worker 3
        (
            'model_id = [0, 1]\nsubtasks = ["Find the bug here"]\naccess_list = [[]]',
            False,
        ),  # unequal
        (
            'model_id = [0, 1]\nsubtasks = ["Find the bug here", "Write the fix now"]\n'
            "access_list = [[], [1]]",
            False,
        ),  # self reference
        ('model_id = [0]\nsubtasks = ["short"]\naccess_list = [[]]', False),  # subtask too short
    ],
)
def test_grammar_accepts_exactly_valid_plans(text: str, ok: bool) -> None:
    xgr = pytest.importorskip("xgrammar")
    grammar = xgr.Grammar.from_ebnf(plan_grammar(3, 5))
    # String-level matching over a trivial vocabulary: only the grammar decides.
    info = xgr.TokenizerInfo(["a", "</s>"], stop_token_ids=[1])
    matcher = xgr.GrammarMatcher(xgr.GrammarCompiler(info).compile_grammar(grammar))
    complete = matcher.accept_string(text) and matcher.accept_token(1)  # may it stop here?
    assert bool(complete) is ok
    if ok:
        parse_plan(text, ["cheap", "strong", "tests"])
    # With worker 2 a tool, no plan may end on it.
    tools = xgr.GrammarMatcher(
        xgr.GrammarCompiler(info).compile_grammar(
            xgr.Grammar.from_ebnf(plan_grammar(3, 5, frozenset({2})))
        )
    )
    ends_on_tool = text.splitlines()[0].rstrip("]").endswith("2")
    complete = tools.accept_string(text) and tools.accept_token(1)
    assert bool(complete) is (ok and not ends_on_tool)


# --- transformers backend on a tiny model built from a config (fast, CPU) ---------------


@pytest.fixture
def tiny_conductor(tiny_model_dir: Path) -> object:
    from conductor_lsp.conductor.transformers import TransformersConductor

    return TransformersConductor(
        ConductorConfig(
            backend="transformers", model=str(tiny_model_dir), options={"max_new_tokens": 200}
        )
    )


async def test_constrained_decoding_always_yields_a_valid_plan(
    tiny_conductor: object, tiny_model_dir: Path
) -> None:
    # A random-weight model writes noise; the grammar alone makes it a well-formed plan
    # (its subtasks may be word salad, which the parser refuses as no instruction).
    plan = await tiny_conductor.plan(TASK, INFOS, 4)  # type: ignore[attr-defined]
    assert plan.source == "transformers"
    assert plan.steps or "subtask is not an instruction" in plan.error, plan.error
    assert plan.raw.startswith("model_id = [")
    assert 1 <= len(well_formed(plan.raw, INFOS).steps) <= 4


async def test_unconstrained_noise_falls_back_to_static(tiny_model_dir: Path) -> None:
    from conductor_lsp.conductor.transformers import TransformersConductor

    c = TransformersConductor(
        ConductorConfig(
            backend="transformers",
            model=str(tiny_model_dir),
            options={"constrained": False, "max_new_tokens": 40},
        )
    )
    plan = await make_plan(c, TASK, INFOS, 5)
    assert plan.source.startswith("static (fallback: transformers:")


async def test_prefix_kv_cache_is_reused_and_changes_nothing(tiny_model_dir: Path) -> None:
    from conductor_lsp.models.transformers import LocalModel

    model = LocalModel.get(str(tiny_model_dir))
    prompt = build_prompt(TASK, INFOS, 5)
    ids, prefix = model.encode_chat(prompt.system, prompt.user)
    assert 0 < prefix < len(ids)
    model._prefixes.clear()
    cold = await asyncio.to_thread(model.generate, ids, max_new_tokens=12)
    assert not model._prefixes
    warm1 = await asyncio.to_thread(model.generate, ids, prefix_len=prefix, max_new_tokens=12)
    cache = model._prefixes[tuple(ids[:prefix])]
    warm2 = await asyncio.to_thread(model.generate, ids, prefix_len=prefix, max_new_tokens=12)
    assert cold.cached_tokens == 0 and warm1.cached_tokens == prefix
    assert cold.text == warm1.text == warm2.text  # greedy output identical with the cache
    assert list(model._prefixes.values()) == [cache]  # computed once, reused, never mutated
    assert cache.get_seq_length() == prefix


async def test_local_worker_on_tiny_model(tiny_model_dir: Path) -> None:
    from conductor_lsp.workers.local import LocalWorker

    w = LocalWorker(
        "tiny",
        WorkerConfig(provider="local", model=str(tiny_model_dir), max_tokens=8, price_in=1.0),
    )
    resp = await w.complete(WorkerRequest(system="sys", parts=(Part("hello"),)))
    assert resp.usage.output_tokens <= 8 and resp.usage.input_tokens > 0
    assert resp.cost == pytest.approx(resp.usage.input_tokens / 1e6)


def test_transformers_conductor_needs_a_model() -> None:
    from conductor_lsp.conductor.transformers import TransformersConductor

    with pytest.raises(ConfigError, match=r"conductor\.model"):
        TransformersConductor(ConductorConfig(backend="transformers"))


def test_bad_model_path(tmp_path: Path) -> None:
    from conductor_lsp.models.transformers import split_model_path

    with pytest.raises(ConfigError, match="does not exist"):
        split_model_path(str(tmp_path / "x.gguf"))
    with pytest.raises(ConfigError, match="neither"):
        split_model_path(str(tmp_path / "nothing"))
    with pytest.raises(ConfigError, match=r"no config\.json"):
        split_model_path(str(tmp_path))


# --- mlx backend: mlx's CPU build runs here too ---------------------------------------


async def test_mlx_conductor_runs_on_tiny_model(tiny_model_dir: Path) -> None:
    pytest.importorskip("mlx_lm")
    from conductor_lsp.conductor.mlx import MLXConductor

    free = MLXConductor(
        ConductorConfig(
            backend="mlx",
            model=str(tiny_model_dir),
            options={"max_new_tokens": 20, "constrained": False},
        )
    )
    g = await asyncio.to_thread(free.generate, TASK, INFOS, 5)
    assert g.text and g.input_tokens > 0 and 0 < g.output_tokens <= 20
    plan = await make_plan(free, TASK, INFOS, 5)  # random weights: noise, the fallback says why
    assert plan.source.startswith("static (fallback: mlx:")
    assert plan.call is not None and plan.call.usage.output_tokens > 0  # the cost is kept
    # With xgrammar's mask as a logits processor, the same noise is a valid plan.
    pytest.importorskip("xgrammar")
    bound = MLXConductor(ConductorConfig(backend="mlx", model=str(tiny_model_dir)))
    plan = await make_plan(bound, TASK, INFOS, 4)
    assert plan.source == "mlx" or "subtask is not an instruction" in plan.source, plan.source
    assert plan.raw.startswith("model_id = [")
    assert 1 <= len(well_formed(plan.raw, INFOS).steps) <= 4


def test_mlx_reads_a_text_with_its_model(tiny_model_dir: Path) -> None:
    """A routing policy's features of a task: the mlx model's averaged last state."""
    pytest.importorskip("mlx_lm")
    from conductor_lsp.conductor.mlx import MLXConductor
    from conductor_lsp.protocols import Embedder

    c = MLXConductor(ConductorConfig(backend="mlx", model=str(tiny_model_dir)))
    assert isinstance(c, Embedder) and c.model_identity().startswith("model:")
    a, b = c.embed("Fix add: it subtracts."), c.embed("Implement the export.")
    assert len(a) == 32 and a != b and c.embed("Fix add: it subtracts.") == a


def test_mlx_missing_gives_a_clear_error(
    tiny_model_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from conductor_lsp.conductor.mlx import MLXConductor

    monkeypatch.setitem(sys.modules, "mlx_lm", None)
    c = MLXConductor(ConductorConfig(backend="mlx", model=str(tiny_model_dir)))
    with pytest.raises(BackendUnavailable, match="mlx-lm"):
        c.load()


def test_mlx_refuses_gguf(tmp_path: Path) -> None:
    from conductor_lsp.conductor.mlx import MLXConductor

    (tmp_path / "m.gguf").write_bytes(b"GGUF")
    with pytest.raises(ConfigError, match="model directory"):
        MLXConductor(ConductorConfig(backend="mlx", model=str(tmp_path / "m.gguf")))


@pytest.mark.parametrize("max_steps", [1, 3, 5])
def test_grammar_bound_covers_the_longest_plan(max_steps: int) -> None:
    """Every accepted plan fits the token budget (a token is at least one character), so
    constrained decoding is never cut off; over-long access lists are refused."""
    xgr = pytest.importorskip("xgrammar")
    from conductor_lsp.conductor.grammar import SUBTASK_MAX_CHARS, worst_case_tokens

    info = xgr.TokenizerInfo(["a", "</s>"], stop_token_ids=[1])
    compiled = xgr.GrammarCompiler(info).compile_grammar(
        xgr.Grammar.from_ebnf(plan_grammar(10, max_steps))
    )
    n = max_steps
    ids = ", ".join("9" for _ in range(n))
    subs = ", ".join('"' + "x" * SUBTASK_MAX_CHARS + '"' for _ in range(n))
    accs = ", ".join(
        ["[]"] + ["[" + ", ".join(str(k - 1) for _ in range(k)) + "]" for k in range(1, n)]
    )
    longest = f"model_id = [{ids}]\nsubtasks = [{subs}]\naccess_list = [{accs}]"
    m = xgr.GrammarMatcher(compiled)
    assert m.accept_string(longest) and m.accept_token(1)
    assert len(longest) <= worst_case_tokens(max_steps)
    if n >= 2:
        too_long = longest.replace("[" + ", ".join(["0"]), "[" + ", ".join(["0"] * 2), 1)
        m = xgr.GrammarMatcher(compiled)
        assert not (m.accept_string(too_long) and m.accept_token(1))


VALID_JSON = [
    '{"model_id": [1], "subtasks": ["Write the fix now"], "access_list": ["all"]}',
    '{"model_id": [2, 0], "subtasks": ["Run the tests now", "Write the fix now"], '
    '"access_list": [[], [0]]}',
]
INVALID_JSON = [
    '{"model_id": [3], "subtasks": ["Write the fix now"], "access_list": ["all"]}',
    '{"model_id": [0, 1], "subtasks": ["Write the fix now"], "access_list": [[], "all"]}',
    '{"model_id": [0, 1], "subtasks": ["Find the bug now", "Write the fix"], '
    '"access_list": [[], [1]]}',
    '{"model_id": [0, 2], "subtasks": ["Find the bug now", "Run the tests"], '
    '"access_list": [[], "all"]}',  # ends on the tool
    '{"model_id": [0], "subtasks": ["short"], "access_list": [[]]}',
]


@pytest.mark.parametrize(
    ("text", "ok"), [(t, True) for t in VALID_JSON] + [(t, False) for t in INVALID_JSON]
)
def test_json_schema_accepts_exactly_valid_plans(text: str, ok: bool) -> None:
    """The schema a server enforces, checked with xgrammar (what vLLM uses to enforce it)."""
    xgr = pytest.importorskip("xgrammar")
    from conductor_lsp.conductor.grammar import plan_schema

    schema = json.dumps(plan_schema(3, 5, frozenset({2})))
    info = xgr.TokenizerInfo(["a", "</s>"], stop_token_ids=[1])
    compiled = xgr.GrammarCompiler(info).compile_grammar(xgr.Grammar.from_json_schema(schema))
    m = xgr.GrammarMatcher(compiled)
    assert bool(m.accept_string(text) and m.accept_token(1)) is ok
    if ok:
        assert parse_plan(text, ["cheap", "strong", "tests"], tools=frozenset({"tests"})).steps


def test_every_part_of_the_json_schema_is_an_object() -> None:
    """llama.cpp's own server refuses a schema with a boolean part (``items: false``, a 400
    that sent plans to the slow fallbacks), and reads ``items`` before ``prefixItems``."""
    from conductor_lsp.conductor.grammar import plan_schema

    def walk(node: object, path: str) -> None:
        if isinstance(node, dict):
            assert not ("items" in node and "prefixItems" in node), path
            for key, value in node.items():
                if key in ("items", "additionalItems", "not", "if", "then", "else"):
                    assert isinstance(value, dict), f"{path}/{key}"
                walk(value, f"{path}/{key}")
        elif isinstance(node, list):
            for i, value in enumerate(node):
                walk(value, f"{path}/{i}")

    walk(plan_schema(3, 5, frozenset({2})), "#")


@pytest.mark.parametrize("max_steps", [1, 5])
def test_json_bound_covers_a_long_escaped_widely_spaced_plan(max_steps: int) -> None:
    """Servers' JSON grammars allow escapes and spacing, so (unlike the list grammar) no
    exact bound exists; the budget still covers such a plan at two characters a token."""
    from conductor_lsp.conductor.grammar import SUBTASK_MAX_CHARS, worst_case_json_tokens

    n = max_steps
    longest = json.dumps(
        {
            "model_id": [9] * n,
            "subtasks": ["\\" * SUBTASK_MAX_CHARS] * n,  # every character escaped
            "access_list": [list(range(k)) for k in range(n)],
        },
        indent=20,
    )
    assert len(longest) // 2 <= worst_case_json_tokens(n)
