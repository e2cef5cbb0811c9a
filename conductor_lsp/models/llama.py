"""GGUF models in llama.cpp, in this process (``llama-cpp-python``, the ``llama`` extra).

The same GGUF that transformers must de-quantize to float loads here in a fraction of a
second and decodes its quantized weights directly, several times faster on a CPU.
Like ``local_models``, each (file, context size, threads) loads once per process and is
shared by the conductor and the workers that name it; one generation runs at a time.
The plan's grammar is the same EBNF text that xgrammar reads (llama.cpp's GBNF).
llama.cpp keeps the KV cache of the previous prompt and reuses its longest common
prefix, so consecutive plans re-read only what changed.
"""

from __future__ import annotations

import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..answers import AnswerWatch
from ..errors import BackendUnavailable, ConfigError
from ..version import extra
from . import stats as model_stats
from .base import Generation, LoadOnce, has_module
from .cores import RETHREAD, ThreadOptions, decode_threads, usable_cores
from .hidden import mean_vector

_LOADED: LoadOnce[LlamaModel] = LoadOnce()


@dataclass
class LlamaEngineOptions(ThreadOptions):
    """llama-cpp (conductor and workers): the context and the cores."""

    n_ctx: int = 8192
    """Context length in tokens (prompt and answer)."""

    def check(self) -> None:
        if self.n_ctx < 256:
            raise ConfigError("n_ctx must be at least 256")
        self.check_threads()


def llama_available() -> bool:
    """Whether llama-cpp-python is installed (without importing it)."""
    return has_module("llama_cpp")


class LlamaModel:
    """A GGUF loaded in llama.cpp, with a lock: llama.cpp's context is not thread-safe."""

    def __init__(self, path: str, n_ctx: int = 8192, threads: int = 0) -> None:
        try:
            import llama_cpp
        except ImportError as e:
            raise BackendUnavailable(
                f"the llama.cpp engine needs llama-cpp-python: {extra('llama')}"
            ) from e
        file = Path(path).expanduser()
        if file.suffix.lower() != ".gguf" or not file.is_file():
            raise ConfigError(f"the llama.cpp engine needs a .gguf file; {path!r} is not one")
        self.path = str(file)
        #: Threads asked for (0: the cores free at each answer) and those set now.
        self.threads = threads
        # Loaded on every core this process may use (llama-cpp-python's default is half);
        # each answer then decodes on the cores free.
        self.current_threads = threads or usable_cores()
        self.key = f"llama:{self.path}:{n_ctx}:{threads}"
        engine = f"llama.cpp ({threads} threads)" if threads else "llama.cpp (the cores free)"
        model_stats.loading(self.path, engine)
        started = time.monotonic()
        self.llm: Any = llama_cpp.Llama(
            model_path=self.path,
            n_ctx=n_ctx,
            n_threads=self.current_threads,
            n_threads_batch=self.current_threads,
            verbose=False,
        )
        self.load_seconds = time.monotonic() - started
        model_stats.loaded(self.key, self.path, engine, "the GGUF as it is", self.load_seconds)
        self.version = str(getattr(llama_cpp, "__version__", "?"))
        self._grammars: dict[str, Any] = {}
        self._xgr_info: Any = None
        #: Mask the grammar with xgrammar when it is installed (else llama.cpp's GBNF).
        self.xgrammar = True
        self._gen_lock = threading.Lock()

    @classmethod
    def get(cls, path: str, n_ctx: int = 8192, threads: int = 0) -> LlamaModel:
        key = (str(Path(path).expanduser().resolve()), n_ctx, threads)
        return _LOADED.get(key, lambda: cls(path, n_ctx, threads))

    @classmethod
    def peek(cls, path: str, n_ctx: int = 8192, threads: int = 0) -> LlamaModel | None:
        """The model if it is loaded already (counting tokens must not load it)."""
        return _LOADED.peek((str(Path(path).expanduser().resolve()), n_ctx, threads))

    def count(self, system: str, user: str) -> int:
        """Tokens of a chat's two messages, their template's few markers aside."""
        return len(self.llm.tokenize(f"{system}\n{user}".encode(), add_bos=False))

    def use_threads(self) -> int:
        """The threads the next tokens decode with: the configured count, else the cores
        free now (``models.cores``); llama.cpp takes a new count between two tokens."""
        n = decode_threads(self.threads)
        ctx = getattr(self.llm, "ctx", None)
        if n != self.current_threads and ctx is not None:
            import llama_cpp

            llama_cpp.llama_set_n_threads(ctx, n, n)
            self.current_threads = n
        return n

    def _grammar(self, text: str) -> Any:
        import llama_cpp

        if text not in self._grammars:
            self._grammars[text] = llama_cpp.LlamaGrammar.from_string(text, verbose=False)
        return self._grammars[text]

    def _mask(self, text: str) -> Any | None:
        """The grammar as xgrammar's token mask (when installed), one per generation.

        llama.cpp's own grammar sampler checks every token of the vocabulary at every
        step (measured: 12 ms a token for SmolLM2's 49k, a warm plan 1.3 s against 0.8 s);
        xgrammar fills a precomputed mask in microseconds. Importing it costs seconds
        once (it brings torch), so a short-lived process with no xgrammar keeps GBNF.
        """
        if not self.xgrammar or not has_module("xgrammar"):
            return None
        import numpy as np
        import xgrammar as xgr

        if self._xgr_info is None:
            n = self.llm.n_vocab()
            vocab = [self.llm.detokenize([i]) for i in range(n)]
            self._xgr_info = xgr.TokenizerInfo(
                vocab, xgr.VocabType.RAW, vocab_size=n, stop_token_ids=[self.llm.token_eos()]
            )
        key = f"xgr:{text}"
        if key not in self._grammars:
            self._grammars[key] = xgr.GrammarCompiler(self._xgr_info).compile_grammar(text)
        matcher = xgr.GrammarMatcher(self._grammars[key])
        n = self._xgr_info.vocab_size
        bitmask = xgr.allocate_token_bitmask(1, n)
        seen = -1  # the first call comes before the first answer token: all prompt

        def apply(ids: Any, logits: Any) -> Any:
            nonlocal seen
            for t in ids[seen if seen >= 0 else len(ids) :]:
                matcher.accept_token(int(t))
            seen = len(ids)
            matcher.fill_next_token_bitmask(bitmask)
            bits = np.unpackbits(bitmask.numpy().view(np.uint8), bitorder="little")[:n]
            out = np.array(logits, copy=True)
            out[: len(bits)][bits == 0] = -np.inf
            return out

        return apply

    def hidden_state(self, text: str, max_tokens: int = 512) -> list[float]:
        """The last layer's state averaged over the text's first ``max_tokens`` tokens.

        The context is switched to embeddings for this one pass and back; the pass clears
        the KV cache, so the next chat is told it holds nothing (else it would reuse a
        prefix that is gone)."""
        import llama_cpp

        with self._gen_lock:
            ctx = self.llm._ctx.ctx
            tokens = self.llm.tokenize(text.encode("utf-8"), add_bos=False)[:max_tokens]
            tokens = tokens or [self.llm.token_eos()]
            self.llm.context_params.embeddings = True
            llama_cpp.llama_set_embeddings(ctx, True)
            try:
                rows = self.llm.embed(self.llm.detokenize(tokens).decode("utf-8", "replace"))
            finally:
                llama_cpp.llama_set_embeddings(ctx, False)
                self.llm.context_params.embeddings = False
                self.llm.reset()
        if rows and isinstance(rows[0], list):  # no pooling: one state per token
            return mean_vector([[float(x) for x in r] for r in rows])
        return [float(x) for x in rows]  # the model pools itself

    def chat(
        self,
        system: str,
        user: str,
        *,
        max_new_tokens: int = 256,
        temperature: float = 0.0,
        grammar: str | None = None,
        stop: threading.Event | None = None,
        watch: AnswerWatch | None = None,
    ) -> Generation:
        """One chat answer (the GGUF's own chat template); blocking, so callers run it in a
        thread. ``stop`` ends it between two tokens (a cancelled job), as ``watch`` does
        when the answer loops or its code is done: the answer is streamed token by token,
        and closing the stream stops llama.cpp (an exception raised inside its sampler
        would be swallowed by the C callback)."""
        import llama_cpp

        with self._gen_lock:
            started = time.monotonic()
            self.use_threads()
            before = [int(t) for t in self.llm.input_ids[: self.llm.n_tokens]]
            processors, native = self._constraint(grammar)
            stream = self.llm.create_chat_completion(
                messages=[
                    {"role": "system", "content": system},
                    {"role": "user", "content": user},
                ],
                max_tokens=max_new_tokens,
                temperature=max(temperature, 0.0),
                grammar=native,
                logits_processor=llama_cpp.LogitsProcessorList(processors) if processors else None,
                stream=True,
            )
            text, first, prompt, tokens = self._drain(stream, stop, watch)
            now = time.monotonic()
            model_stats.decoded(self.key, tokens, now - (first or now))
            after = [int(t) for t in self.llm.input_ids[:prompt]]
            cached = next(
                (i for i, (a, b) in enumerate(zip(before, after, strict=False)) if a != b),
                min(len(before), len(after)),
            )
            return Generation(
                text=text,
                input_tokens=prompt,
                output_tokens=tokens,
                cached_tokens=min(cached, max(prompt - 1, 0)),
                seconds=now - started,
                first_token_seconds=(first or now) - started,
                cut=watch.reason if watch else "",
            )

    def _constraint(self, grammar: str | None) -> tuple[list[Any], Any | None]:
        """(logits processors, native grammar): xgrammar's mask when installed, else GBNF."""
        if not grammar:
            return [], None
        mask = self._mask(grammar)
        return ([mask], None) if mask is not None else ([], self._grammar(grammar))

    def _drain(
        self, stream: Any, stop: threading.Event | None, watch: AnswerWatch | None = None
    ) -> tuple[str, float, int, int]:
        """(text, when the first token came, prompt tokens, answer tokens) of a streamed
        answer; ``stop`` drops it between two tokens, ``watch`` ends it (keeping what it
        cut to), and closing the stream stops llama.cpp."""
        first, prompt, tokens = 0.0, 0, 0
        parts: list[str] = []
        threaded = time.monotonic()
        try:
            for chunk in stream:
                if time.monotonic() - threaded > RETHREAD:
                    threaded = time.monotonic()
                    self.use_threads()
                if stop is not None and stop.is_set():
                    parts = []  # what it wrote so far is dropped: the job is gone
                    break
                delta = chunk["choices"][0].get("delta") or {}
                if "content" not in delta:
                    continue  # the role, or the closing chunk
                if not first:
                    first = time.monotonic()
                    prompt = int(self.llm.n_tokens)  # the answer's first token: not in
                tokens += 1
                parts.append(str(delta.get("content") or ""))
                if watch is not None and watch.feed(parts[-1]):
                    parts = [watch.cut()]
                    break
        finally:
            close = getattr(stream, "close", None)
            if close is not None:
                close()
        return "".join(parts), first, prompt, tokens
