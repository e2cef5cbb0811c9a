"""A routing policy that reads the task through the conductor model: its hidden state of
the brief, cut into bits. It tells apart tasks that share every word, it names the model
it was fitted with (and refuses to run without it), and ``train --policy --features
hidden`` reads the tasks with the configured conductor."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from helpers import FAIL, WAIT, write_episodes
from helpers import policy_pool as pool

from conductor_lsp import ConfigError, FileContext, Session, Task, load_config
from conductor_lsp.models.hidden import mean_vector
from conductor_lsp.policy import Action, Example, Policy, fit, round_plan
from conductor_lsp.policy.features import Hidden, seen_brief


def twin(n: int) -> str:
    """Briefs alike in every word and in shape: what tells two kinds apart is elsewhere."""
    files = (FileContext(f"mod{n}.py", "def f():\n    return 1\n"),)
    failure = FAIL.format(msg=f"AssertionError: assert {n} == {n + 1}")
    return Task(f"f{n}() returns the wrong value.", files, test_failures=failure).brief()


def reading(kind: int, n: int) -> list[float]:
    """A stand-in model's reading: the kind is one direction, the task adds its own."""
    base = [3.0, -3.0, 0.5] if kind else [-3.0, 3.0, 0.5]
    return [b + ((n * 7919 + i * 104729) % 13 - 6) / 10 for i, b in enumerate(base)]


def twin_examples() -> tuple[list[Example], dict[str, list[float]]]:
    """The cheap worker fixes kind 1 and fails kind 0; the dear one fixes both."""
    examples, vectors = [], {}
    for n in range(24):
        kind = n % 2
        brief = twin(n)
        vectors[brief] = reading(kind, n)
        workers = pool(f"c{n}", f"d{n}")
        examples.append(Example(brief, workers, Action(f"c{n}", "direct"), bool(kind), 0.001))
        examples.append(Example(brief, workers, Action(f"d{n}", "direct"), True, 0.01))
    return examples, vectors


def fitted_on_states(model: str = "stand-in:1") -> Policy:
    examples, vectors = twin_examples()
    policy = Policy(hidden=Hidden(model, mean_vector(list(vectors.values())), bits=16))
    for brief, v in vectors.items():
        policy.see(brief, v)
    fit(policy, examples)
    return policy


def test_hidden_bits_tell_apart_tasks_that_share_every_word() -> None:
    examples, _ = twin_examples()
    words = Policy()
    fit(words, examples)
    states = fitted_on_states()
    unseen = pool("ash", "oak")
    fixes, fails = twin(101), twin(100)
    states.see(fixes, reading(1, 101))
    states.see(fails, reading(0, 100))
    cheap = Action("ash", "direct")
    assert states.p_green(fixes, cheap, unseen) > 0.8
    assert states.p_green(fails, cheap, unseen) < 0.3
    # Read by its words alone, one kind looks like the other.
    assert abs(words.p_green(fixes, cheap, unseen) - words.p_green(fails, cheap, unseen)) < 0.1
    assert [s.worker for s in round_plan(states, fixes, unseen, 3, later=False).steps] == ["ash"]
    assert round_plan(states, fails, unseen, 3, later=False).steps[0].worker == "oak"
    # A brief the model has not read is a clear error, not a guess.
    with pytest.raises(ConfigError, match="hidden state of stand-in:1"):
        states.p_green(twin(102), cheap, unseen)
    # What the policy told the conductor is never read back as the task.
    advised = fixes + "\n\n## What worked on similar tasks\nash: 90%"
    assert seen_brief(advised) == fixes
    assert states.p_green(advised, cheap, unseen) == states.p_green(fixes, cheap, unseen)


def test_a_hidden_state_policy_round_trips_and_refuses_a_conductor_without_its_model(
    tmp_path: Path, tiny_model_dir: Path
) -> None:
    policy = fitted_on_states("other.gguf:123")
    path = tmp_path / "p.json"
    policy.save(path)
    again = Policy.load(path)
    assert again.hidden == policy.hidden and json.loads(path.read_text())["version"] == 3
    brief = twin(7)
    for p in (policy, again):
        p.see(brief, reading(1, 7))
    action, workers = Action("c1", "direct"), pool("c1", "d1")
    assert again.p_green(brief, action, workers) == pytest.approx(
        policy.p_green(brief, action, workers), abs=1e-5
    )
    (tmp_path / "conductor.toml").write_text('[conductor]\nbackend = "static"\npolicy = "p.json"\n')
    with pytest.raises(ConfigError, match="runs no model in this process"):
        Session(load_config(tmp_path, env={}))
    (tmp_path / "conductor.toml").write_text(
        f'[conductor]\nbackend = "transformers"\nmodel = "{tiny_model_dir}"\npolicy = "p.json"\n'
    )
    with pytest.raises(ConfigError, match=r"fitted on the hidden state of other\.gguf:123"):
        Session(load_config(tmp_path, env={}))


def test_train_policy_reads_the_tasks_with_the_conductor_model_and_the_session_does_too(
    tmp_path: Path, tiny_model_dir: Path
) -> None:
    """The CLI fits on the conductor model's readings; a session with that conductor reads
    each new brief before the policy speaks, and the conductor's prompt carries the figures."""
    from conductor_lsp.models.transformers import LocalModel

    model = LocalModel.get(str(tiny_model_dir))
    a, b = model.hidden_state(twin(1)), model.hidden_state(twin(2))
    assert len(a) == 32 and a != b and model.hidden_state(twin(1)) == a
    episodes = write_episodes(tmp_path / "episodes.jsonl", twin_examples()[0])
    root = tmp_path / "ws"
    root.mkdir()
    conductor = (
        f'[conductor]\nbackend = "transformers"\nmodel = "{tiny_model_dir}"\n'
        'policy = "policy.json"\noptions = { max_new_tokens = 20 }\n'
        '[workers.big]\nprovider = "openai-compatible"\nmodel = "big"\n'
        'base_url = "http://127.0.0.1:9/v1"\nprice_in = 10.0\nprice_out = 10.0\n'
        '[workers.small]\nprovider = "openai-compatible"\nmodel = "small"\n'
        'base_url = "http://127.0.0.1:9/v1"\nprice_in = 1.0\nprice_out = 1.0\n'
    )
    (root / "conductor.toml").write_text(conductor)
    env = {**os.environ, "NO_COLOR": "1", "COLUMNS": "300"}
    cli = [sys.executable, "-m", "conductor_lsp.cli"]
    trained = subprocess.run(
        [*cli, "train", "--policy", "--features", "hidden", "--from-episodes", str(episodes),
         "--out", str(root / "policy.json")],
        capture_output=True, text=True, timeout=WAIT, env=env, cwd=root,
    )  # fmt: skip
    assert trained.returncode == 0, trained.stdout + trained.stderr
    assert "reading 24 tasks with the conductor model (model:" in trained.stdout
    saved = Policy.load(root / "policy.json")
    assert saved.hidden is not None and len(saved.hidden.mean) == 32
    assert not saved.hidden.words and saved.about["features"] == "hidden"
    assert any(int(k) for k in saved.weights)  # fitted

    async def go() -> tuple[object, list[str]]:
        session = Session(load_config(root, env={}))
        try:
            brief = Task("f9() returns the wrong value.").brief()
            plan = await session.plan(Task("f9() returns the wrong value."))
            assert session.policy is not None
            return plan, session.policy.unread([brief])
        finally:
            await session.aclose()

    # Its calibration reads every recorded brief with the same model first.
    summary = subprocess.run(
        [*cli, "episodes", str(root), "--summary", "--file", str(episodes)],
        capture_output=True, text=True, timeout=WAIT, env=env,
    )  # fmt: skip
    assert "predicted against judged candidates" in summary.stdout, summary.stdout + (
        summary.stderr
    )
    plan, unread = asyncio.run(go())
    assert unread == []  # the session read the brief with the model before asking
    assert plan.steps  # type: ignore[attr-defined]
    # Words only needs no model; hidden with a conductor that runs none is refused clearly.
    static = conductor.replace('"transformers"', '"static"')
    (root / "conductor.toml").write_text(static.replace("options = { max_new_tokens = 20 }\n", ""))
    refused = subprocess.run(
        [*cli, "train", "--policy", "--features", "hidden", "--from-episodes", str(episodes),
         "--out", str(tmp_path / "x.json")],
        capture_output=True, text=True, timeout=WAIT, env=env, cwd=root,
    )  # fmt: skip
    assert refused.returncode != 0 and "runs none in this process" in refused.stdout + (
        refused.stderr
    )
    assert not (tmp_path / "x.json").exists()
