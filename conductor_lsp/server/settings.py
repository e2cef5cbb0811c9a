"""Editor settings: the same keys as conductor.toml, plus a few that only the server has.

Merge order (later wins): workspace files (pyproject.toml, conductor.toml),
``initializationOptions``, ``workspace/configuration`` (section ``conductor``),
then each ``workspace/didChangeConfiguration``.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..config.schema import SECTIONS, Config
from ..configure.load import layered, load_config
from ..errors import ConfigError

SERVER_KEYS = ("preview", "logFile", "configFile")
#: Keys editor extensions keep for themselves (how to start this server): ignored here.
CLIENT_KEYS = ("server",)
TOP_KEYS = (*SECTIONS, "workers")


@dataclass
class ServerSettings:
    preview: bool = False
    """Ask the user to confirm each edit (ChangeAnnotation.needsConfirmation)."""
    log_file: str = ""
    config_file: str = ""


def split_settings(data: Any, source: str) -> tuple[dict[str, Any], dict[str, Any]]:
    """(config keys, server keys) of one settings object; bad shapes are ConfigError."""
    if data is None or data == []:  # an empty Lua table arrives as a JSON list
        return {}, {}
    if not isinstance(data, dict):
        raise ConfigError(f"{source}: settings must be an object, got {type(data).__name__}")
    nested = data.get("conductor")
    if nested == []:  # an empty section from Lua
        data = {k: v for k, v in data.items() if k != "conductor"}
    # {"conductor": {...}} is either the whole settings under their section name or the
    # [conductor] table; only the former holds top-level keys (workers, budget, ...).
    if isinstance(nested, dict) and any(k in nested for k in (*TOP_KEYS, *SERVER_KEYS)):
        data = nested
    server = {k: data[k] for k in SERVER_KEYS if k in data}
    config = {k: v for k, v in data.items() if k not in (*SERVER_KEYS, *CLIENT_KEYS)}
    return config, server


class SettingsStack:
    """The layers from the editor, kept so a change to one rebuilds the whole."""

    def __init__(self) -> None:
        self.layers: list[tuple[str, dict[str, Any], dict[str, Any]]] = []

    def set_layer(self, name: str, data: Any) -> None:
        config, server = split_settings(data, name)
        self.layers = [layer for layer in self.layers if layer[0] != name]
        self.layers.append((name, config, server))

    def build(self, root: Path) -> tuple[Config, ServerSettings]:
        server = ServerSettings()
        for _, _, s in self.layers:
            if "preview" in s:
                if not isinstance(s["preview"], bool):
                    raise ConfigError("preview must be true or false")
                server.preview = s["preview"]
            if "logFile" in s:
                server.log_file = str(s["logFile"])
            if "configFile" in s:
                server.config_file = str(s["configFile"])
        cfg_file = Path(server.config_file) if server.config_file else None
        merged = layered({}, *(config for _, config, _ in self.layers))
        return load_config(root, cfg_file, merged or None), server


__all__ = ["Config", "ServerSettings", "SettingsStack"]
