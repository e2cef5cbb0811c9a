"""Loading the configuration: TOML layers and editor settings into the schema, the offline
defaults, and validation against the registries of backends and providers.

It sits above the conductor backends and worker providers it validates against, and
below the runtime that uses the result; the schema it fills is ``config``, a basic type.
"""

from .load import (
    Layer,
    build_config,
    derive,
    describe_keys,
    job_layer,
    layered,
    load_config,
    read_toml,
    validate,
    workspace_episodes,
)

__all__ = [
    "Layer",
    "build_config",
    "derive",
    "describe_keys",
    "job_layer",
    "layered",
    "load_config",
    "read_toml",
    "validate",
    "workspace_episodes",
]
