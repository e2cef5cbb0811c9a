"""Conductor served by any OpenAI-compatible endpoint (vLLM, llama.cpp, Ollama)."""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from typing import ClassVar

from ..config.schema import ConductorConfig, EndpointConfig, WorkerConfig
from ..errors import ConfigError
from ..plan import Plan
from ..protocols import Check, Part, WorkerInfo, WorkerRequest
from ..task import Task
from ..workers.openai import OpenAICompatibleWorker
from .parse import parse_for_workers
from .prompt import build_prompt


def endpoint_of(config: ConductorConfig) -> WorkerConfig:
    """The conductor's endpoint as a worker section: the shared fields, nothing copied by hand."""
    shared = {f.name: getattr(config, f.name) for f in dataclasses.fields(EndpointConfig)}
    return WorkerConfig(
        provider="openai-compatible",
        max_tokens=config.max_new_tokens,
        temperature=config.temperature,
        **shared,
    )


class OpenAIConductor:
    name = "openai"
    local: ClassVar[bool] = False

    def __init__(self, config: ConductorConfig) -> None:
        if not config.base_url or not config.model:
            raise ConfigError("the openai conductor needs conductor.base_url and conductor.model")
        self.config = config
        self._http = OpenAICompatibleWorker("conductor", endpoint_of(config), owner="conductor")

    @classmethod
    def doctor(cls, config: ConductorConfig) -> Check:
        if config.base_url:
            return "ok", config.base_url
        return "no", "set conductor.base_url and conductor.model"

    async def plan(self, task: Task, workers: Sequence[WorkerInfo], max_steps: int) -> Plan:
        prompt = build_prompt(task, workers, max_steps)
        resp = await self._http.complete(
            WorkerRequest(system=prompt.system, parts=(Part(prompt.user),))
        )
        return parse_for_workers(resp.text, workers, max_steps=max_steps, source=self.name)

    async def aclose(self) -> None:
        await self._http.aclose()
