"""Which workspaces the user trusts to run commands from their own configuration (an
``api_key_cmd`` or ``[test] command`` in a cloned repository's ``conductor.toml`` would
otherwise run on the first ``plan`` or ``fix``, as direnv and VS Code's workspace trust
guard against). The list lives
in the user's state (``$XDG_STATE_HOME/conductor-lsp/trusted.json``), never in a
workspace."""

from __future__ import annotations

from pathlib import Path

from ..storage.state import read_json, user_state_dir, write_json


def trust_file() -> Path:
    return user_state_dir() / "trusted.json"


def trusted_paths() -> list[Path]:
    """The trusted workspaces; an unreadable list trusts none."""
    data = read_json(trust_file())
    return [Path(p) for p in data if isinstance(p, str)] if isinstance(data, list) else []


def is_trusted(root: Path) -> bool:
    """Whether ``root`` or a folder it is in was trusted (trusting a folder of projects
    trusts each of them, as VS Code's parent-folder trust does)."""
    root = root.resolve()
    return any(root.is_relative_to(p) for p in trusted_paths())


def set_trusted(root: Path, trusted: bool = True) -> list[Path]:
    """Add (or remove) ``root``; the list afterwards. Written whole, atomically."""
    root = root.resolve()
    paths = [p for p in trusted_paths() if p != root] + ([root] if trusted else [])
    write_json(trust_file(), [str(p) for p in paths], indent=1)
    return paths
