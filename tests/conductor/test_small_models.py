"""The floor, from real answers: Qwen2.5-Coder 0.5B / 1.5B Instruct GGUFs under llama.cpp's
server (temperature 0, CPU), copied verbatim into tests/answers/.

Each failure mode the fix loop used to hit has a test here: a conductor writing prose
over HTTP, workers copying a placeholder path, and bare code blocks with no path.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from standin import Behaviour, Seen, StandIn

from conductor_lsp import ConductorConfig, FileContext, Task
from conductor_lsp.conductor.openai import OpenAIConductor
from conductor_lsp.edits import apply_output, parse_edits
from conductor_lsp.protocols import WorkerInfo
from conductor_lsp.runtime import make_plan
from conductor_lsp.runtime.requests import system_prompt

ANSWERS = Path(__file__).resolve().parents[1] / "answers"
TASKS = Path(__file__).resolve().parents[2] / "bench" / "tasks"


def answer(name: str) -> str:
    return (ANSWERS / name).read_text()


def task_file(task: str, name: str) -> str:
    return (TASKS / task / name).read_text()


# --- workers copied the prompt's placeholder path ---------------------------------------


def test_worker_prompt_shows_a_real_path_never_a_placeholder() -> None:
    task = Task(
        "Fix add()",
        files=(
            FileContext("src/calc.py", "def add(a, b):\n    return a - b\n"),
            FileContext("tests/test_calc.py", "def test_add(): ...\n", editable=False),
        ),
    )
    prompt = system_prompt(task)
    assert "src/calc.py" in prompt and "path/to" not in prompt
    assert "tests/test_calc.py" not in prompt  # the example is a file it may change
    big = Task("Fix it", files=(FileContext("big.py", "x = 1\n" * 400),))
    assert "big.py\n<<<<<<< SEARCH" in system_prompt(big)  # big files: blocks, not whole


def test_the_example_path_is_the_file_the_failures_name_not_the_package_init() -> None:
    """A mined boltons task showed ``boltons/__init__.py`` (the tests import the package)
    first: the 1.5B wrote its change for that file, the example's path, three times."""
    failures = "- tests/test_statsutils.py::test_mode at tests/test_statsutils.py:40: ..."
    files = (
        FileContext("boltons/__init__.py", "__version__ = '1'\n"),
        FileContext("boltons/iterutils.py", "def chunked(x): ...\n" * 50),
        FileContext("boltons/statsutils.py", "def mean(x): ...\n" * 10),
    )
    task = Task("Add mode() to Stats", files=files, test_failures=failures)
    assert "boltons/statsutils.py\n```" in system_prompt(task)
    unnamed = Task("Add it", files=files[:2])
    assert "boltons/iterutils.py\n```" in system_prompt(unnamed)  # the biggest, not __init__


def test_a_copied_placeholder_path_lands_on_the_only_file_under_repair() -> None:
    text = answer("placeholder_path.txt")  # 1.5B, old prompt: "path/to/file.py" + a block
    assert text.startswith("path/to/file.py\n<<<<<<< SEARCH")
    calc = task_file("add_sub", "calc.py")
    r = apply_output({"calc.py": calc}, text, targets=["calc.py"])
    assert r.failures == [] and r.new_texts == {"calc.py": calc.replace("a - b", "a + b")}
    assert r.notes == ["path/to/file.py does not exist; used calc.py, the only file under repair"]
    # With two files under repair, nothing is guessed.
    files = {"calc.py": calc, "other.py": "x = 1\n", "path/to/file.py": None}
    r = apply_output(files, text, targets=["calc.py", "other.py"])
    assert not r.new_texts and "file does not exist" in r.report()


def test_a_wrong_directory_is_corrected_by_file_name() -> None:
    calc = task_file("add_sub", "calc.py")
    text = answer("placeholder_path.txt").replace("path/to/file.py", "app/calc.py")
    r = apply_output(
        {"src/calc.py": calc, "src/other.py": "y = 2\n"},
        text,
        targets=["src/calc.py", "src/other.py"],
    )
    assert r.failures == [] and "return a + b" in r.new_texts["src/calc.py"]
    assert r.notes == [
        "app/calc.py does not exist; used src/calc.py (the task's file of that name)"
    ]


# --- small models answer with a bare code block -----------------------------------------


def test_a_bare_code_block_is_the_whole_file_of_the_only_file_under_repair() -> None:
    text = answer("bare_block_caesar.txt")  # 0.5B: prose, then one ```python block, no path
    edits, _ = parse_edits(text)
    assert [(e.path, e.kind) for e in edits] == [("", "block")]
    cipher = task_file("caesar", "cipher.py")
    r = apply_output({"cipher.py": cipher}, text, targets=["cipher.py"])
    assert r.failures == [] and r.matches == ["block(whole)"]
    assert "% 26" in r.new_texts["cipher.py"]


def test_a_bare_block_must_be_the_same_language_and_keep_the_file() -> None:
    cipher = task_file("caesar", "cipher.py")
    r = apply_output(
        {"cipher.py": cipher}, "Run it:\n```\n$ pytest -q\n```\n", targets=["cipher.py"]
    )
    assert not r.new_texts and "not valid Python" in r.report()
    other = "```python\ndef unrelated():\n    return 1\n```\n"
    r = apply_output({"cipher.py": cipher}, other, targets=["cipher.py"])
    assert not r.new_texts and "keeps 0 of the 1 top-level names" in r.report()


def test_one_function_under_a_fenced_path_replaces_only_that_function() -> None:
    text = answer("fenced_path_one_function.txt")  # 1.5B: "```\nsummary.py\n```python\n..."
    summary = task_file("median_bug", "summary.py")
    r = apply_output({"summary.py": summary}, text, targets=["summary.py"])
    assert r.failures == [] and r.matches == ["defs: median"]
    new = r.new_texts["summary.py"]
    assert "def mean(values)" in new and "def spread(values)" in new  # kept
    assert "(ordered[mid - 1] + ordered[mid]) / 2" in new


def test_a_whole_file_answer_with_one_function_keeps_the_rest() -> None:
    text = answer("whole_file_small.txt")  # 0.5B: path + block holding only is_leap
    utils = task_file("leap_year", "calendar_utils.py")
    r = apply_output({"calendar_utils.py": utils}, text, targets=["calendar_utils.py"])
    assert r.failures == [] and r.matches == ["defs: is_leap"]
    assert "def days_in_year" in r.new_texts["calendar_utils.py"]


def test_a_forgotten_replace_marker_ends_at_the_closing_fence() -> None:
    text = answer("unterminated_block.txt")  # 1.5B: the last block ends with ``` only
    edits, failures = parse_edits(text)
    assert failures == [] and [e.path for e in edits] == ["pricing.py", "tax.py"]


# --- a conductor over HTTP wrote prose ----------------------------------------------------

INFOS = [
    WorkerInfo("small", "Qwen2.5-Coder 0.5B: quick, weaker", 0, 0, "openai-compatible", strength=1),
    WorkerInfo(
        "big", "Qwen2.5-Coder 1.5B: slower, stronger", 0, 0, "openai-compatible", strength=2
    ),
    WorkerInfo("tests", "runs the tests", 0, 0, "tests", is_tool=True),
]
TASK = Task("shift() does not wrap around the end of the alphabet.")


def constrained_server(refuse: tuple[str, ...] = ()) -> object:
    """A server like llama-cpp-python's: prose unless decoding is constrained; a refused
    response_format type answers 500 with a validation error, as that server does."""

    def choose(seen: Seen) -> Behaviour:
        fmt = seen.body.get("response_format") or {}
        kind = fmt.get("type") or ("grammar" if "grammar" in seen.body else "")
        if kind in refuse:
            detail = f"1 validation error: response_format type: input should be 'text', got {kind}"
            return Behaviour("status", status=500, body=json.dumps({"error": {"message": detail}}))
        if kind in ("json_schema", "json_object"):
            return Behaviour(text=answer("conductor_json.txt"))
        return Behaviour(text=answer("conductor_prose.txt"))

    return choose


def conductor(standin: StandIn) -> OpenAIConductor:
    return OpenAIConductor(
        ConductorConfig(backend="openai", model="big", base_url=f"{standin.url}/v1", max_retries=2)
    )


async def test_a_constrained_server_gives_a_plan_where_free_text_gave_prose(
    standin: StandIn,
) -> None:
    standin.chooser = constrained_server(refuse=("json_schema",))  # type: ignore[assignment]
    c = conductor(standin)
    try:
        plan = await make_plan(c, TASK, INFOS, 5)
        again = await make_plan(c, TASK, INFOS, 5)
    finally:
        await c.aclose()
    assert plan.source == "openai" and [s.worker for s in plan.steps] == ["big"]
    assert "structured output: json_object (refused: json_schema)" in plan.notes
    kinds = [s.body.get("response_format", {}).get("type") for s in standin.seen]
    assert kinds == ["json_schema", "json_object", "json_object"]  # learned once, no retries
    assert again.source == "openai"


async def test_free_text_only_when_every_way_is_refused_and_the_notes_say_so(
    standin: StandIn,
) -> None:
    standin.chooser = constrained_server(  # type: ignore[assignment]
        refuse=("json_schema", "json_object", "grammar")
    )
    c = conductor(standin)
    try:
        plan = await make_plan(c, TASK, INFOS, 5)
    finally:
        await c.aclose()
    # The real prose: no plan in it, so the baseline runs, and the reason and text are kept.
    assert plan.source.startswith("static (fallback: openai:")
    assert plan.raw == answer("conductor_prose.txt") and plan.error
    assert any("free text" in n and "refused" in n for n in plan.notes)
    assert plan.call is not None and plan.call.usage.output_tokens > 0


def test_doctor_says_which_structured_output_the_server_takes(standin: StandIn) -> None:
    standin.chooser = constrained_server(refuse=("json_schema",))  # type: ignore[assignment]
    cfg = ConductorConfig(backend="openai", model="big", base_url=f"{standin.url}/v1")
    status, detail = OpenAIConductor.doctor(cfg)
    assert status == "ok" and "structured output: json_object (refused: json_schema)" in detail
    standin.chooser = constrained_server(  # type: ignore[assignment]
        refuse=("json_schema", "json_object", "grammar")
    )
    status, detail = OpenAIConductor.doctor(cfg)
    assert "free text" in detail


@pytest.mark.parametrize("name", ["conductor_json.txt"])
def test_the_real_constrained_answer_parses(name: str) -> None:
    from conductor_lsp.conductor import parse_plan

    plan = parse_plan(answer(name), ["small", "big", "tests"], tools=frozenset({"tests"}))
    assert [s.worker for s in plan.steps] == ["big"]
