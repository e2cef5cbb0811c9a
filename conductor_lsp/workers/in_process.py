"""What the in-process workers (``local``, ``llama-cpp``) share: the answer decoded in a
thread that a cancelled job stops (``models.base.Decoder``), and priced like any other."""

from __future__ import annotations

from ..answers import AnswerWatch
from ..config.schema import WorkerConfig
from ..models.base import Decoder, Generation
from ..protocols import WorkerRequest, WorkerResponse
from ..usage import Usage
from .registry import ProviderDefaults


class InProcessWorker(ProviderDefaults):
    """Subclasses set ``config`` and implement the blocking ``generate``, which passes
    ``self.decoder.stop`` and the watch to its engine."""

    config: WorkerConfig
    decoder: Decoder

    def generate(self, request: WorkerRequest, watch: AnswerWatch) -> Generation:
        raise NotImplementedError

    def _run(self, request: WorkerRequest) -> WorkerResponse:
        g = self.generate(request, request.watch())
        usage = Usage(g.input_tokens, g.output_tokens, g.cached_tokens)
        return WorkerResponse(
            text=g.text,
            usage=usage,
            cost=usage.cost(self.config.price_in, self.config.price_out),
            model=self.config.model,
            elapsed=g.seconds,
            cut=g.cut,
        )

    async def complete(self, request: WorkerRequest) -> WorkerResponse:
        return await self.decoder.decode(lambda: self._run(request))

    async def aclose(self) -> None:
        await self.decoder.aclose()
