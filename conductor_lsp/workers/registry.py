"""Providers by name. Adding one is a new module plus one line here (or a call to
``PROVIDERS.register`` from outside the package)."""

from __future__ import annotations

from ..protocols import WorkerClass
from ..registry import Registry

PROVIDERS: Registry[WorkerClass] = Registry(
    "provider",
    {
        "openai": "conductor_lsp.workers.openai:OpenAIWorker",
        "anthropic": "conductor_lsp.workers.anthropic:AnthropicWorker",
        "gemini": "conductor_lsp.workers.gemini:GeminiWorker",
        "openai-compatible": "conductor_lsp.workers.openai:OpenAICompatibleWorker",
        "local": "conductor_lsp.workers.local:LocalWorker",
        "tests": "conductor_lsp.workers.tests_tool:TestsWorker",
    },
)


def provider_class(name: str) -> WorkerClass:
    """The registered class for a provider name; ``ConfigError`` for an unknown one."""
    return PROVIDERS.get(name)
