"""Every bad configuration value is a ``ConfigError`` naming the key and the file it came
from: never a traceback, never accepted silently (``max_cost = nan`` used to switch the
cost cap off). The same values in ``conductor.toml`` and in ``pyproject.toml``, and from
the command line's and the MCP door's flags."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from conductor_lsp import ConfigError, load_config
from conductor_lsp.configure import job_layer

W = "[workers.w]\nprovider = 'openai-compatible'\nmodel = 'm'\n"
#: (section table, key, bad TOML value, words the error says)
BAD: list[tuple[str, str, str, str]] = [
    *[
        ("budget", "max_cost", v, w)
        for v, w in (("nan", "finite"), ("inf", "finite"), ("-1", "at least 0"), ("'2'", "float"))
    ],
    *[
        ("budget", "max_seconds", v, w)
        for v, w in (("0", "above 0"), ("nan", "finite"), ("-5.0", "above 0"), ("inf", "finite"))
    ],
    *[
        ("budget", key, v, w)
        for key in ("max_calls", "max_iterations")
        for v, w in (("0", "at least 1"), ("-3", "at least 1"), ("2.5", "int"), ("true", "int"))
    ],
    *[
        ("test", "timeout", v, w)
        for v, w in (("0", "above 0"), ("nan", "finite"), ("-1", "above 0"), ("'5'", "float"))
    ],
    *[("test", "jobs", v, w) for v, w in (("0", "at least 1"), ("1.5", "int"))],
    ("test", "command", "3", "str"),
    *[
        ("conductor", "max_steps", v, w)
        for v, w in (("0", "at least 1"), ("21", "at most 20"), ("'five'", "int"))
    ],
    *[("conductor", "temperature", v, w) for v, w in (("nan", "finite"), ("-0.5", "at least 0"))],
    *[("conductor", "timeout", v, w) for v, w in (("0", "above 0"), ("nan", "finite"))],
    ("conductor", "price_in", "-1", "at least 0"),
    ("conductor", "price_out", "nan", "finite"),
    ("conductor", "base_url", "'file:///etc/passwd'", "http:// or https:// URL"),
    ("conductor", "base_url", "'localhost:8080'", "http:// or https:// URL"),
    ("conductor", "policy_steer", "1", "bool"),
    *[
        ("fix", "give_up_below", v, w)
        for v, w in (("1", "below 1"), ("-0.1", "at least 0"), ("nan", "finite"))
    ],
    ("fix", "prefer", "'fast'", "one of 'balanced', 'cost' or 'latency'"),
    ("fix", "repo_map_chars", "-1", "at least 0"),
    ("fix", "named_files", "-2", "at least 0"),
    ("fix", "floor", "'yes'", "bool"),
    *[("search", "samples", v, "at least 1") for v in ("0", "-1")],
    *[("search", "temperature", v, w) for v, w in (("-1", "at least 0"), ("inf", "finite"))],
    *[
        ("learn", key, v, w)
        for key in ("cost_weight", "seconds_weight", "format_penalty")
        for v, w in (("nan", "finite"), ("-1", "at least 0"))
    ],
    ("learn", "record", "'no'", "bool"),
    ("trace", "enabled", "0", "bool"),
    ("trace", "dir", "[]", "str"),
    *[("edits", "fuzzy_threshold", v, w) for v, w in (("0", "above 0"), ("1.5", "at most 1"))],
    ("edits", "fuzzy_threshold", "nan", "finite"),
    ("edits", "deny", "'*.py'", "list of strings"),
    ("edits", "deny", "[1]", "list of strings"),
]
WORKER_BAD: list[tuple[str, str, str]] = [
    ("timeout", "0", "above 0"),
    ("timeout", "nan", "finite"),
    ("timeout", "-inf", "finite"),
    ("max_tokens", "-1", "at least 1"),
    ("max_tokens", "0", "at least 1"),
    ("max_tokens", "1.5", "int"),
    ("context", "-4096", "at least 0"),
    ("concurrency", "0", "at least 1"),
    ("max_retries", "-1", "at least 0"),
    ("price_in", "-0.5", "at least 0"),
    ("price_out", "inf", "finite"),
    ("temperature", "nan", "finite"),
    ("base_url", "'file:///etc/passwd'", "http:// or https:// URL"),
    ("base_url", "'ftp://host/v1'", "http:// or https:// URL"),
    ("stream", "'true'", "bool"),
]
CASES = [(f"{s}.{k}", f"[{s}]\n{k} = {v}\n", w) for s, k, v, w in BAD] + [
    (f"workers.w.{k}", f"{W}{k} = {v}\n", w) for k, v, w in WORKER_BAD
]


def _pyproject(toml: str) -> str:
    """The same tables under [tool.conductor-lsp]."""
    return re.sub(r"^\[", "[tool.conductor-lsp.", toml, flags=re.M)


def test_there_are_enough_bad_values() -> None:
    assert len(CASES) >= 60


@pytest.mark.parametrize(
    ("key", "toml", "words"), CASES, ids=[c[0] + "=" + c[1].split("= ")[-1].strip() for c in CASES]
)
@pytest.mark.parametrize("where", ["conductor.toml", "pyproject.toml"])
def test_a_bad_value_names_its_key_and_file(
    tmp_path: Path, key: str, toml: str, words: str, where: str
) -> None:
    text = toml if where == "conductor.toml" else _pyproject(toml)
    (tmp_path / where).write_text(text, encoding="utf-8")
    with pytest.raises(ConfigError) as raised:
        load_config(tmp_path, env={})
    message = str(raised.value)
    assert message.startswith(f"{key} must be"), message
    assert words in message and where in message, message


@pytest.mark.parametrize(
    ("layer", "words"),
    [
        (job_layer(budget_usd=float("nan")), "budget.max_cost must be a finite number"),
        (job_layer(budget_usd=-1.0), "budget.max_cost must be at least 0"),
        (job_layer(max_iterations=0), "budget.max_iterations must be at least 1"),
        (job_layer(budget_usd=float("inf")), "budget.max_cost must be a finite number"),
    ],
)
def test_a_bad_flag_is_refused_as_well(
    tmp_path: Path, layer: dict[str, object], words: str
) -> None:
    with pytest.raises(ConfigError, match=re.escape(words)):
        load_config(tmp_path, overrides=layer, env={})


@pytest.mark.parametrize(
    ("data", "words"),
    [
        (b"[budget]\nmax_calls = 3\n# \xff\xfe not text\n", "not UTF-8"),
        (b"a = " + b"[" * 50_000 + b"]" * 50_000 + b"\n", "invalid TOML"),
        (b"x = {" * 20_000 + b"}" * 20_000, "invalid TOML"),
    ],
    ids=["not-utf8", "deep-arrays", "deep-tables"],
)
def test_a_file_that_is_not_toml_is_named(tmp_path: Path, data: bytes, words: str) -> None:
    (tmp_path / "conductor.toml").write_bytes(data)
    with pytest.raises(ConfigError) as raised:
        load_config(tmp_path, env={})
    assert words in str(raised.value) and "conductor.toml" in str(raised.value)


def test_good_values_still_load(tmp_path: Path) -> None:
    (tmp_path / "conductor.toml").write_text(
        "[budget]\nmax_cost = 0\nmax_seconds = 0.5\n[fix]\nprefer = 'cost'\n"
        "give_up_below = 0\n[edits]\nfuzzy_threshold = 1\n"
        f"{W}base_url = 'https://example.test/v1'\ntemperature = -1\nprice_in = 3\n",
        encoding="utf-8",
    )
    cfg = load_config(tmp_path, env={})
    assert cfg.budget.max_cost == 0.0 and cfg.fix.prefer == "cost"
    assert cfg.workers["w"].price_in == 3.0 and isinstance(cfg.workers["w"].price_in, float)


@pytest.mark.parametrize(
    ("toml", "key"),
    [
        ("[trace]\ndir = '../../x'\n", "trace.dir"),
        ("[learn]\nepisodes = '/tmp/elsewhere/episodes.jsonl'\n", "learn.episodes"),
        ("[learn]\nepisodes = 'sub/../../out.jsonl'\n", "learn.episodes"),
        ("[conductor]\npolicy = '../policy.json'\n", "conductor.policy"),
    ],
)
@pytest.mark.parametrize("where", ["conductor.toml", "pyproject.toml"])
def test_a_workspace_file_cannot_make_a_job_write_outside_it(
    tmp_path: Path, toml: str, key: str, where: str
) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / where).write_text(toml if where == "conductor.toml" else _pyproject(toml))
    with pytest.raises(ConfigError, match=rf"{re.escape(key)} must name a place inside"):
        load_config(ws, env={})


def test_inside_is_fine_and_the_command_line_may_name_any_place(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    inside = f"[trace]\ndir = '{ws / 'deep' / 'traces'}'\n[learn]\nepisodes = 'a/b.jsonl'\n"
    (ws / "conductor.toml").write_text(inside)
    assert load_config(ws, env={}).learn.episodes == "a/b.jsonl"
    elsewhere = {"trace": {"dir": str(tmp_path / "traces")}}
    assert load_config(ws, overrides=elsewhere, env={}).trace.dir == str(tmp_path / "traces")
