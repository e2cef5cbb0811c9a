"""Providers by name. A built-in is a module plus one line in the table below; a plugin
is a distribution that declares its class under the ``conductor_lsp.providers`` entry points
(see ``registry``), with no line of this package changed."""

from __future__ import annotations

from typing import ClassVar

from ..plugins import Registry
from ..protocols import WorkerClass


class ProviderDefaults:
    """The class attributes every provider declares, with their usual values; a provider
    overrides what differs (see ``protocols.WorkerClass`` for what each means)."""

    is_tool: ClassVar[bool] = False
    auto: ClassVar[bool] = False
    needs_key: ClassVar[bool] = False
    key_envs: ClassVar[tuple[str, ...]] = ()
    requires_model: ClassVar[bool] = True
    default_model: ClassVar[str] = ""
    default_base_url: ClassVar[str] = ""
    default_description: ClassVar[str] = ""
    default_price_in: ClassVar[float] = 0.0
    default_price_out: ClassVar[float] = 0.0


PROVIDERS: Registry[WorkerClass] = Registry(
    "provider",
    "conductor_lsp.providers",
    {
        "openai": "conductor_lsp.workers.openai:OpenAIWorker",
        "anthropic": "conductor_lsp.workers.anthropic:AnthropicWorker",
        "gemini": "conductor_lsp.workers.gemini:GeminiWorker",
        "openai-compatible": "conductor_lsp.workers.openai:OpenAICompatibleWorker",
        "local": "conductor_lsp.workers.local:LocalWorker",
        "llama-cpp": "conductor_lsp.workers.llama_cpp:LlamaCppWorker",
        "tests": "conductor_lsp.workers.tests_tool:TestsWorker",
        "replay": "conductor_lsp.workers.replay:ReplayWorker",
    },
)


def provider_class(name: str) -> WorkerClass:
    """The registered class for a provider name; ``ConfigError`` for an unknown one."""
    return PROVIDERS.get(name)
