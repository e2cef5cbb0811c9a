"""Providers and conductor backends plug in by name: a module plus one registry line."""

from __future__ import annotations

import sys
import textwrap
from collections.abc import Iterator
from pathlib import Path

import pytest

from conductor_lsp import BACKENDS, PROVIDERS, ConfigError, Session, Task, load_config
from conductor_lsp.jobs.doctor import report

ECHO = '''
"""A throwaway provider: answers with its subtask, shouted. One file, no edits elsewhere."""

from typing import ClassVar

from conductor_lsp import WorkerRequest, WorkerResponse, Usage
from conductor_lsp.workers import ProviderDefaults


class EchoWorker(ProviderDefaults):
    requires_model = False
    default_description = "echoes"

    def __init__(self, name, config, context):
        self.name, self.config = name, config

    @classmethod
    def doctor(cls, name, config, full):
        return "ok", f"echo worker {name}"

    async def complete(self, request: WorkerRequest) -> WorkerResponse:
        return WorkerResponse(request.subtask.upper(), Usage(3, 2), 0.0, "echo-1")

    async def aclose(self) -> None:
        return None


class FirstWorkerConductor:
    """A throwaway backend: one step, on the first worker."""

    name = "first"
    local: ClassVar[bool] = False
    asks_model: ClassVar[bool] = False
    uses_search: ClassVar[bool] = False

    def __init__(self, config):
        self.config = config

    @classmethod
    def doctor(cls, config):
        return "ok", "plans one step"

    async def plan(self, task, workers, max_steps):
        from conductor_lsp import Plan, Step

        return Plan((Step(workers[0].name, "say hello to " + task.instruction),), source="first")

    async def aclose(self) -> None:
        return None
'''


@pytest.fixture
def plugin(tmp_path: Path) -> Iterator[None]:
    (tmp_path / "echo_plugin.py").write_text(textwrap.dedent(ECHO))
    sys.path.insert(0, str(tmp_path))
    PROVIDERS.register("echo", "echo_plugin:EchoWorker")
    BACKENDS.register("first", "echo_plugin:FirstWorkerConductor")
    try:
        yield
    finally:
        PROVIDERS.unregister("echo")
        BACKENDS.unregister("first")
        sys.path.remove(str(tmp_path))
        sys.modules.pop("echo_plugin", None)


async def test_a_registered_provider_and_backend_work_everywhere(
    plugin: None, tmp_path: Path
) -> None:
    overrides = {"conductor": {"backend": "first"}, "workers": {"shout": {"provider": "echo"}}}
    config = load_config(tmp_path, overrides=overrides)  # validation knows them
    rows = {what: (status, detail) for what, status, detail in report(config)}
    assert rows["worker shout"] == ("ok", "echo worker shout")  # doctor asks the class
    assert rows["backend first"] == ("ok", "plans one step")
    session = Session(config)
    try:
        result = await session.run(Task("the world"))
    finally:
        await session.aclose()
    assert result.plan.source == "first"
    assert result.output == "SAY HELLO TO THE WORLD"
    assert result.tallies["shout"].usage.input_tokens == 3


def test_unknown_names_are_config_errors(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match=r"workers\.x\.provider must be one of .*openai"):
        load_config(tmp_path, overrides={"workers": {"x": {"provider": "nope", "model": "m"}}})
    with pytest.raises(ConfigError, match=r"conductor\.backend must be one of auto, static"):
        load_config(tmp_path, overrides={"conductor": {"backend": "nope"}})


def test_a_broken_registry_entry_says_where(tmp_path: Path) -> None:
    PROVIDERS.register("ghost", "no_such_module_here:Ghost")
    try:
        with pytest.raises(ConfigError, match="provider 'ghost' cannot be loaded"):
            load_config(tmp_path, overrides={"workers": {"g": {"provider": "ghost"}}})
    finally:
        PROVIDERS.unregister("ghost")


def test_a_backend_that_declares_no_capabilities_is_named(tmp_path: Path) -> None:
    """A backend's capabilities are class attributes it declares; one missing is a clear
    error naming it, not an AttributeError in the middle of a job."""

    class Vague:
        name = "vague"
        local = False

    BACKENDS.register("vague-file", f"{__name__}:VAGUE")
    globals()["VAGUE"] = Vague
    try:
        with pytest.raises(ConfigError, match=r"does not declare asks_model, uses_search"):
            load_config(tmp_path, overrides={"conductor": {"backend": "vague-file"}})
        with pytest.raises(ConfigError, match=r"conductor backend 'vague' from .* uses_search"):
            BACKENDS.register("vague", Vague)  # type: ignore[arg-type]
    finally:
        BACKENDS.unregister("vague-file")
        globals().pop("VAGUE", None)


def test_providers_declare_their_defaults() -> None:
    openai = PROVIDERS.get("openai")
    assert openai.auto and openai.needs_key and openai.key_envs == ("OPENAI_API_KEY",)
    assert openai.default_model and openai.default_price_out > 0
    local_server = PROVIDERS.get("openai-compatible")
    assert not local_server.needs_key and not local_server.auto
    assert PROVIDERS.get("tests").is_tool and not PROVIDERS.get("local").is_tool
    assert [name for name in PROVIDERS.names() if PROVIDERS.get(name).is_tool] == ["tests"]
