from __future__ import annotations

from pathlib import Path

import pytest

from conductor_lsp import ConfigError
from conductor_lsp.server.settings import SettingsStack, split_settings


@pytest.mark.parametrize(
    ("data", "config", "server"),
    [
        (None, {}, {}),
        ([], {}, {}),  # an empty Lua table
        ({"conductor": []}, {}, {}),
        ({"conductor": {"backend": "static"}}, {"conductor": {"backend": "static"}}, {}),
        (
            {"conductor": {"budget": {"max_calls": 3}, "preview": True}},
            {"budget": {"max_calls": 3}},
            {"preview": True},
        ),
        ({"conductor": {"conductor": {"max_steps": 2}}}, {"conductor": {"max_steps": 2}}, {}),
        (
            {"workers": {"a": {"provider": "openai", "model": "m"}}, "logFile": "/tmp/x.log"},
            {"workers": {"a": {"provider": "openai", "model": "m"}}},
            {"logFile": "/tmp/x.log"},
        ),
        (  # a client's own keys (how to start the server) are not configuration errors
            {"conductor": {"server": {"command": ["x"]}, "budget": {"max_calls": 2}}},
            {"budget": {"max_calls": 2}},
            {},
        ),
    ],
)
def test_split_settings(data: object, config: dict[str, object], server: dict[str, object]) -> None:
    assert split_settings(data, "test") == (config, server)


def test_layers_merge_in_order_and_errors_name_keys(tmp_path: Path) -> None:
    (tmp_path / "conductor.toml").write_text("[budget]\nmax_calls = 5\nmax_cost = 1.0\n")
    stack = SettingsStack()
    stack.set_layer("initializationOptions", {"budget": {"max_calls": 7}, "preview": True})
    stack.set_layer("workspace/configuration", {"budget": {"max_cost": 0.25}})
    cfg, server = stack.build(tmp_path)
    assert cfg.budget.max_calls == 7 and cfg.budget.max_cost == 0.25 and server.preview is True
    stack.set_layer("initializationOptions", {"budget": {"max_calls": 9}})  # replaces the layer
    cfg, server = stack.build(tmp_path)
    assert cfg.budget.max_calls == 9 and server.preview is False
    stack.set_layer("didChangeConfiguration", {"budget": {"max_calls": "lots"}})
    with pytest.raises(ConfigError, match=r"budget\.max_calls must be int"):
        stack.build(tmp_path)
    with pytest.raises(ConfigError, match="settings must be an object"):
        split_settings("nonsense", "didChangeConfiguration")


def test_the_vscode_settings_are_the_configuration_keys() -> None:
    """The extension's settings are copied by hand into package.json: each must be a real
    key with the same default, the backend list the registry's, the step limit the loader's."""
    import ast
    import json

    from conductor_lsp.conductor.registry import AUTO, BACKENDS
    from conductor_lsp.config.schema import MAX_STEPS_LIMIT
    from conductor_lsp.configure.load import describe_keys

    package = Path(__file__).resolve().parents[2] / "editor_clients" / "vscode" / "package.json"
    props = json.loads(package.read_text())["contributes"]["configuration"]["properties"]
    editor_only = {"server.command", "preview", "configFile", "logFile", "workers"}
    keys = {key: default for key, default, _ in describe_keys()}
    checked = 0
    for name, spec in props.items():
        key = name.removeprefix("conductor.")
        if key in editor_only:
            continue
        assert key in keys, f"{name} is no configuration key"
        assert spec["default"] == ast.literal_eval(keys[key]), name
        checked += 1
    assert checked >= 10
    backend = props["conductor.conductor.backend"]
    assert backend["enum"] == [AUTO, *BACKENDS.names()]
    assert props["conductor.conductor.max_steps"]["maximum"] == MAX_STEPS_LIMIT
