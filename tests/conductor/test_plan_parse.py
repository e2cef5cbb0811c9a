from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from conductor_lsp import PlanError
from conductor_lsp.conductor import parse_plan
from conductor_lsp.conductor.output import unreadable
from conductor_lsp.plan import infer_role

WORKERS = ["analyst", "coder", "tests"]


def test_native_three_lists_after_thinking_and_fences() -> None:
    text = """<think>The analyst should look first. model_id = [9] is wrong.</think>
Here is the plan:
```python
model_id = [0, 1]
subtasks = ["Find why parse() fails on ''.", "Write the fix as SEARCH/REPLACE blocks."]
access_list = [[], "all"]
```"""
    plan = parse_plan(text, WORKERS)
    assert [s.worker for s in plan.steps] == ["analyst", "coder"]
    assert plan.steps[0].access == ()
    assert plan.steps[1].access == "all"
    assert plan.steps[0].role == "analysis"
    assert plan.steps[1].role == "generation"
    assert plan.steps[0].subtask == "Find why parse() fails on ''."


# Subtasks that SmolLM2-135M wrote, prompted or under GRPO training (bench/train_conductor.py).
RUN_OFF = [
    ("]()()()()()()()()()()()()()()", "has no words"),
    ("] + [1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20]", "has no words"),
    ("]  # 10 lines, read only, 6 lines, 5 lines, 5 lines, 5 lines, 5 lines, 5 lines", "repeats"),
    ("Write the fix for the cause found in step 0.1.1.1.1.1.1.1.1.1.1.1.1.1.1.1.1", "repeats"),
    ("== == == == == == fix == == == == == ==", "is mostly not words"),
]


@pytest.mark.parametrize(("subtask", "why"), RUN_OFF)
def test_a_subtask_that_is_no_instruction_is_a_plan_error(subtask: str, why: str) -> None:
    text = f"model_id = [0, 1]\nsubtasks = ['Find the bug', {subtask!r}]\naccess_list = [[], 'all']"
    with pytest.raises(PlanError, match=f"step 1: subtask is not an instruction \\(it {why}"):
        parse_plan(text, WORKERS)


@pytest.mark.parametrize(
    "subtask",
    [
        "Fix it",
        "x y",
        "修复 calc.py 中的错误",  # any script: a conductor may plan in the user's language
        "Исправь ошибку в calc.py",
        "Replace `x = a - b` with `x = a + b` in calc.py",
        "Fix sum_to(n) so that sum_to(0) == 0 and sum_to(3) == 6.",
        "Check a, then b, then c, then d: a test for a, a test for b, a test for c.",
        "Rewrite the loop in stats.py:\n    for i in range(len(xs)):\n        total += xs[i]",
    ],
)
def test_terse_or_code_laden_subtasks_are_instructions(subtask: str) -> None:
    plan = parse_plan(f"model_id = [1]\nsubtasks = [{subtask!r}]\naccess_list = ['all']", WORKERS)
    assert plan.steps[0].subtask == subtask.strip()


def test_index_lists_and_explicit_roles() -> None:
    text = (
        "model_id = [1, 0, 2]\nsubtasks = ['Implement it', 'Review it', 'Run it']\n"
        "access_list = [[], [0], [0, 1]]\nroles = ['generation', 'debugging', 'debugging']"
    )
    plan = parse_plan(text, WORKERS)
    assert [s.access for s in plan.steps] == [(), (0,), (0, 1)]
    assert [s.role for s in plan.steps] == ["generation", "debugging", "debugging"]


def test_last_complete_set_wins_over_echoed_examples() -> None:
    text = (
        'Example:\nmodel_id = [0]\nsubtasks = ["example"]\naccess_list = [[]]\n'
        'Mine:\nmodel_id = [1]\nsubtasks = ["Write the code"]\naccess_list = ["all"]'
    )
    plan = parse_plan(text, WORKERS)
    assert plan.steps[0].worker == "coder"


def test_json_forms() -> None:
    a = parse_plan('{"model_id": [0], "subtasks": ["Analyse"], "access_list": [[]]}', WORKERS)
    assert a.steps[0].worker == "analyst"
    b = parse_plan(
        'Plan: {"steps": [{"worker": "coder", "subtask": "Write it", "access": "all",'
        ' "role": "generation"}, {"worker": 2, "subtask": "Run the tests", "access": [0]}]}',
        WORKERS,
    )
    assert [s.worker for s in b.steps] == ["coder", "tests"]
    assert b.steps[1].role == "debugging"


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("", "no plan found"),
        ("I think we should fix it.", "no plan found"),
        ('model_id = [0, 1]\nsubtasks = ["a b c"]\naccess_list = [[], []]', "unequal lengths"),
        ('model_id = [7]\nsubtasks = ["x y"]\naccess_list = [[]]', "unknown worker id 7"),
        ('model_id = [-1]\nsubtasks = ["x y"]\naccess_list = [[]]', "unknown worker id -1"),
        ('model_id = [True]\nsubtasks = ["x y"]\naccess_list = [[]]', "must be an integer"),
        ('model_id = ["gpt9"]\nsubtasks = ["x y"]\naccess_list = [[]]', "unknown worker"),
        ('model_id = [0, 1]\nsubtasks = ["a", "b"]\naccess_list = [[], [1]]', "lists itself"),
        ('model_id = [0, 1]\nsubtasks = ["a", "b"]\naccess_list = [[1], []]', "refers forward"),
        ('model_id = [0]\nsubtasks = ["   "]\naccess_list = [[]]', "empty"),
        ("model_id = [0]*9\nsubtasks = []\naccess_list = []", "not a plain list literal"),
        ('model_id = [0, 0, 0, 0, 0, 0]\nsubtasks = ["a"]*6\naccess_list = []', "expression"),
        (
            "model_id = [0]\nsubtasks = [__import__('os').system('echo hi')]\naccess_list = [[]]",
            "cannot read",
        ),
        ('model_id = [0]\nsubtasks = ["unterminated\naccess_list = [[]]', "unterminated"),
        ('model_id = [0]\nsubtasks = ["a"]', r"missing the list\(s\): access_list"),
        ('model_id = [0]\nsubtasks = ["a"]\naccess_list = ["some"]', "access must be"),
        ("model_id = [0]\nsubtasks = [3]\naccess_list = [[]]", "subtask must be text"),
        ('model_id = 0\nsubtasks = ["a"]\naccess_list = [[]]', r"missing the list\(s\): model_id"),
        (
            'model_id = [0]\nsubtasks = ["a"]\naccess_list = [[]]\nroles = ["poetry"]',
            "unknown role",
        ),
        ("model_id = [[[[[[[[[[0]]]]]]]]]]", "nested too deeply"),
        ('{"steps": "nope"}', "'steps' must be a list"),
        ('{"steps": [1]}', "each step must be an object"),
        ('{"model_id": [0]}', "missing"),
    ],
)
def test_malformed_outputs_give_clear_errors(text: str, message: str) -> None:
    with pytest.raises(PlanError, match=message):
        parse_plan(text, WORKERS)


def test_too_many_steps() -> None:
    text = f"model_id = {[0] * 6}\nsubtasks = {['do it'] * 6}\naccess_list = {['all'] * 6}"
    with pytest.raises(PlanError, match="at most 5"):
        parse_plan(text, WORKERS, max_steps=5)
    assert len(parse_plan(text, WORKERS, max_steps=6).steps) == 6


def test_too_long_output_is_refused() -> None:
    with pytest.raises(PlanError, match="too long"):
        parse_plan("x" * 300_000, WORKERS)


@pytest.mark.parametrize(
    ("subtask", "role"),
    [
        ("Find why the parser crashes", "analysis"),
        ("Write the fix", "generation"),
        ("Review the patch and run the tests", "debugging"),
        ("Implement the cache", "generation"),
        ("Debug the failing test", "debugging"),
        ("Something vague", "generation"),
    ],
)
def test_role_inference(subtask: str, role: str) -> None:
    assert infer_role(subtask) == role


FRAGMENTS = st.sampled_from(
    [
        "model_id",
        "subtasks",
        "access_list",
        "roles",
        " = ",
        "[",
        "]",
        ",",
        '"',
        "'",
        "all",
        "0",
        "1",
        "7",
        "-1",
        "{",
        "}",
        ":",
        "<think>",
        "</think>",
        "\n",
        "```",
        "\\",
        "steps",
        '"worker"',
        '"subtask"',
        "1e999",
        "None",
        "True",
        "(",
        ")",
        "*",
        "__import__",
    ]
)


@settings(max_examples=400, deadline=None)
@given(st.lists(st.one_of(FRAGMENTS, st.text(max_size=8)), max_size=40).map("".join))
def test_parser_raises_only_plan_error(text: str) -> None:
    try:
        plan = parse_plan(text, WORKERS)
    except PlanError:
        return
    assert 1 <= len(plan.steps) <= 5
    for i, s in enumerate(plan.steps):
        assert s.worker in WORKERS
        assert s.access == "all" or all(0 <= j < i for j in s.access)


@settings(max_examples=200, deadline=None)
@given(
    st.lists(
        st.tuples(
            st.integers(0, 2),
            # An instruction: a word, then any text (one that reads as none is refused).
            st.builds(
                "{} {}".format,
                st.from_regex(r"[A-Za-z]{1,8}", fullmatch=True),
                st.text(max_size=30),
            ).filter(lambda s: unreadable(s) is None),
            st.one_of(st.just("all"), st.just([])),
        ),
        min_size=1,
        max_size=5,
    )
)
def test_well_formed_plans_round_trip(steps: list[tuple[int, str, object]]) -> None:
    text = (
        f"model_id = {[s[0] for s in steps]!r}\nsubtasks = {[s[1] for s in steps]!r}\n"
        f"access_list = {[s[2] for s in steps]!r}"
    )
    plan = parse_plan(text, WORKERS)
    assert [s.worker for s in plan.steps] == [WORKERS[s[0]] for s in steps]
    assert [s.subtask for s in plan.steps] == [s[1].strip() for s in steps]


def test_a_tool_may_not_take_the_last_step() -> None:
    text = (
        'model_id = [0, 2]\nsubtasks = ["Write the fix", "Run the tests"]\n'
        'access_list = [[], "all"]'
    )
    with pytest.raises(PlanError, match="last step uses the tool 'tests'"):
        parse_plan(text, WORKERS, tools=frozenset({"tests"}))
    ok = (
        'model_id = [2, 1]\nsubtasks = ["Run the tests", "Write the fix"]\n'
        'access_list = [[], "all"]'
    )
    assert parse_plan(ok, WORKERS, tools=frozenset({"tests"})).steps[0].worker == "tests"
