"""Workers: the models (and tools) a plan's steps call, found by provider name."""

from .pool import WorkerPool
from .registry import PROVIDERS, ProviderDefaults, provider_class

__all__ = ["PROVIDERS", "ProviderDefaults", "WorkerPool", "provider_class"]
