"""A zero-cost tool worker: runs the project's tests so debugging is grounded."""

from __future__ import annotations

from pathlib import Path
from typing import ClassVar

from ..config.schema import Config, TestConfig, WorkerConfig
from ..errors import ConfigError
from ..protocols import Check, WorkerContext, WorkerRequest, WorkerResponse
from ..testrun import run_tests
from .registry import ProviderDefaults


class TestsWorker(ProviderDefaults):
    __test__ = False  # not a pytest class
    is_tool: ClassVar[bool] = True
    requires_model: ClassVar[bool] = False
    default_description: ClassVar[str] = (
        "Runs the project's tests and reports failures (free, no model)"
    )

    def __init__(self, name: str, config: WorkerConfig, context: WorkerContext) -> None:
        if not context.test.command:
            raise ConfigError(f"worker {name} runs tests, but [test] command is not set")
        self.name = name
        self.config = config
        self.test: TestConfig = context.test
        self.root: Path = context.root

    @classmethod
    def doctor(cls, name: str, config: WorkerConfig, full: Config) -> Check:
        command = full.test.command
        return ("ok" if command else "no"), f"tests: {command or 'set [test] command'}"

    async def complete(self, request: WorkerRequest) -> WorkerResponse:
        run = await run_tests(self.test.command, self.root, self.test.timeout, env=self.test.env)
        return WorkerResponse(text=run.summary(), model="tests", elapsed=run.seconds)

    async def aclose(self) -> None:
        return None
