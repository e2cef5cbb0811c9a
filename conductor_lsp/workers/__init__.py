"""Workers: the models (and tools) a plan's steps call, found by provider name.

``registry``, ``in_process``, ``openai`` and ``llama_cpp`` are named as the conductor's
modules of the same role (see ``conductor``).
"""

from .pool import WorkerPool
from .registry import PROVIDERS, ProviderDefaults, provider_class

__all__ = ["PROVIDERS", "ProviderDefaults", "WorkerPool", "provider_class"]
