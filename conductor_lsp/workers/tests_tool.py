"""A zero-cost tool worker: runs the project's tests so debugging is grounded."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from ..config import TestConfig, WorkerConfig
from ..errors import ConfigError
from ..protocols import WorkerRequest, WorkerResponse
from ..testrun import run_tests


class TestsWorker:
    __test__ = False  # not a pytest class

    def __init__(self, name: str, config: WorkerConfig, test: TestConfig, root: Path) -> None:
        if not test.command:
            raise ConfigError(f"worker {name} runs tests, but [test] command is not set")
        self.name = name
        self.config = config
        self.test = test
        self.root = root

    async def complete(
        self, request: WorkerRequest, on_text: Callable[[str], None] | None = None
    ) -> WorkerResponse:
        run = await run_tests(self.test.command, self.root, self.test.timeout)
        text = run.summary()
        if on_text:
            on_text(text)
        return WorkerResponse(text=text, model="tests", elapsed=run.seconds)

    async def aclose(self) -> None:
        return None
