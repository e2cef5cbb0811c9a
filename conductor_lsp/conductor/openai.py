"""Conductor served by any OpenAI-compatible endpoint (vLLM, llama.cpp, Ollama, OpenAI).

Decoding is constrained by the server where it can be: the plan's JSON schema in
OpenAI's ``response_format`` form (OpenAI, vLLM, llama.cpp's own server), the
same schema in the ``json_object`` form (llama-cpp-python's server), or the plan
grammar in a ``grammar`` field (llama.cpp). A server that refuses one (HTTP 400
or 422) is asked the next way; only when it refuses all is the plan read from
free text, and the plan's notes and ``doctor`` say so. The first accepted way is
remembered for the session.
"""

from __future__ import annotations

import asyncio
import dataclasses
import time
from collections.abc import Sequence
from typing import Any, ClassVar

from ..config.options import build
from ..config.schema import ConductorConfig, EndpointConfig, WorkerConfig
from ..errors import ConductorError, ConfigError, WorkerStatusError
from ..plan import ConductorCall, Plan
from ..protocols import Check, Part, WorkerInfo, WorkerRequest
from ..task import Task
from ..workers.openai import OpenAICompatibleWorker
from .decoding import DecodingOptions
from .grammar import plan_grammar, plan_schema, worst_case_json_tokens
from .output import plan_from_output
from .prompt import Format, build_prompt

#: Ways to ask for structured output, most standard first; "text" asks for none.
MODES = ("json_schema", "json_object", "grammar", "text")
#: A refusal: a client error, or (as llama-cpp-python answers) a 500 naming the field.
REFUSED = (400, 422)
_REFUSAL_WORDS = ("response_format", "json_schema", "json_object", "grammar", "validation")


def refused(error: WorkerStatusError) -> bool:
    if error.status in REFUSED:
        return True
    text = str(error).lower()
    return error.status == 500 and any(w in text for w in _REFUSAL_WORDS)


def endpoint_of(config: ConductorConfig) -> WorkerConfig:
    """The conductor's endpoint as a worker section: the shared fields, nothing copied by hand."""
    shared = {f.name: getattr(config, f.name) for f in dataclasses.fields(EndpointConfig)}
    options = build(DecodingOptions, config.options, "conductor", "backend openai")
    budget = options.max_new_tokens
    if options.constrained:  # never cut a constrained plan short
        budget = max(budget, worst_case_json_tokens(config.max_steps))
    return WorkerConfig(
        provider="openai-compatible",
        max_tokens=budget,
        temperature=config.temperature,
        **shared,
    )


def request_options(
    mode: str, n_workers: int, max_steps: int, tools: frozenset[int]
) -> dict[str, Any]:
    if mode == "json_schema":
        schema = plan_schema(n_workers, max_steps, tools)
        return {
            "response_format": {
                "type": "json_schema",
                "json_schema": {"name": "plan", "schema": schema, "strict": False},
            }
        }
    if mode == "json_object":
        schema = plan_schema(n_workers, max_steps, tools)
        return {"response_format": {"type": "json_object", "schema": schema}}
    if mode == "grammar":
        return {"grammar": plan_grammar(n_workers, max_steps, tools)}
    return {}


def answer_format(mode: str) -> Format:
    return "lists" if mode in ("grammar", "text") else "json"


class OpenAIConductor:
    name = "openai"
    Options = DecodingOptions
    local: ClassVar[bool] = False
    asks_model: ClassVar[bool] = True
    uses_search: ClassVar[bool] = False

    def __init__(self, config: ConductorConfig) -> None:
        if not config.base_url or not config.model:
            raise ConfigError("the openai conductor needs conductor.base_url and conductor.model")
        self.config = config
        self._http = OpenAICompatibleWorker("conductor", endpoint_of(config), owner="conductor")
        #: The first way the server accepted, and what it refused on the way there.
        self.options = build(self.Options, config.options, "conductor", "backend openai")
        self.mode: str | None = None if self.options.constrained else "text"
        self.refused: list[str] = []

    @classmethod
    def doctor(cls, config: ConductorConfig) -> Check:
        if not config.base_url or not config.model:
            return "no", "set conductor.base_url and conductor.model"
        if config.backend != cls.name:
            return "ok", config.base_url
        try:
            mode, refused = asyncio.run(cls(config).probe())
        except ConductorError as e:
            return "no", f"{config.base_url}: {e}"
        return "ok", f"{config.base_url}, {describe(mode, refused)}"

    async def probe(self) -> tuple[str, list[str]]:
        """Ask for a one-token plan, to learn which structured output the server takes."""
        probe = dataclasses.replace(self._http.config, max_tokens=1, max_retries=0)
        self._http.config = probe
        try:
            await self._complete(WorkerRequest(system="Write a plan.", parts=(Part("x"),)), 1, 1)
        finally:
            await self.aclose()
        return self.mode or "text", self.refused

    async def _complete(
        self,
        request: WorkerRequest,
        n_workers: int,
        max_steps: int,
        tools: frozenset[int] = frozenset(),
    ) -> tuple[str, Any]:
        modes = [self.mode] if self.mode else list(MODES)
        for mode in modes:
            options = request_options(mode, n_workers, max_steps, tools)
            learning = self.mode is None and mode != "text"
            try:  # while learning, a refusal is an answer, not a fault to retry
                resp = await self._http.complete(
                    dataclasses.replace(request, options=options), retries=0 if learning else None
                )
            except WorkerStatusError as e:
                if learning and refused(e):
                    self.refused.append(f"{mode} ({str(e)[:160]})")
                    continue
                raise
            self.mode = mode
            return mode, resp
        raise ConfigError("the conductor's server refused every request")  # pragma: no cover

    async def plan(self, task: Task, workers: Sequence[WorkerInfo], max_steps: int) -> Plan:
        tools = frozenset(i for i, w in enumerate(workers) if w.is_tool)
        started = time.monotonic()
        # The prompt shows the format the server enforces; until that is known, JSON.
        fmt = answer_format(self.mode or MODES[0])
        prompt = build_prompt(task, workers, max_steps, fmt)
        request = WorkerRequest(system=prompt.system, parts=(Part(prompt.user),))
        # A refusal may switch the format mid-call; the grammar still forces it, and
        # the parser reads JSON and lists alike, so the answer is used as it is.
        mode, resp = await self._complete(request, len(workers), max_steps, tools)
        call = ConductorCall(resp.usage, resp.cost, time.monotonic() - started, self.config.model)
        plan = await asyncio.to_thread(  # untrusted text: parsed off the event loop
            plan_from_output, resp.text, workers, max_steps=max_steps, source=self.name, call=call
        )
        return dataclasses.replace(plan, notes=(*plan.notes, describe(mode, self.refused)))

    async def aclose(self) -> None:
        await self._http.aclose()


def describe(mode: str, refused: list[str]) -> str:
    """How plans are decoded, for the plan's notes and doctor."""
    if mode == "text":
        why = f" (the server refused {'; '.join(refused)})" if refused else ""
        return f"free text: plans are read by the parser, unconstrained{why}"
    return f"structured output: {mode}" + (
        f" (refused: {', '.join(r.split(' (')[0] for r in refused)})" if refused else ""
    )
