"""Conductor served by any OpenAI-compatible endpoint (vLLM, llama.cpp, Ollama)."""

from __future__ import annotations

from collections.abc import Sequence

from ..config import ConductorConfig, WorkerConfig
from ..errors import ConfigError
from ..plan import Plan
from ..plan_parse import parse_for_workers
from ..prompt import build_prompt
from ..protocols import Part, WorkerInfo, WorkerRequest
from ..task import Task
from ..workers.http import HttpWorker
from ..workers.openai import OpenAICompatibleWire


class OpenAIConductor:
    name = "openai"

    def __init__(self, config: ConductorConfig) -> None:
        if not config.base_url or not config.model:
            raise ConfigError("the openai conductor needs conductor.base_url and conductor.model")
        self.config = config
        wc = WorkerConfig(
            provider="openai-compatible",
            model=config.model,
            base_url=config.base_url,
            api_key_env=config.api_key_env,
            api_key_cmd=config.api_key_cmd,
            max_tokens=config.max_new_tokens,
            temperature=config.temperature,
            timeout=config.timeout,
        )
        self._http = HttpWorker("conductor", wc, OpenAICompatibleWire())

    async def plan(self, task: Task, workers: Sequence[WorkerInfo], max_steps: int) -> Plan:
        prompt = build_prompt(task, workers, max_steps)
        resp = await self._http.complete(
            WorkerRequest(system=prompt.system, parts=(Part(prompt.user),))
        )
        return parse_for_workers(resp.text, workers, max_steps=max_steps, source=self.name)

    async def aclose(self) -> None:
        await self._http.aclose()
