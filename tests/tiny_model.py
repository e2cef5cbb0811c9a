"""A tiny random Llama with a byte-level BPE tokenizer, built on the spot (no hub)."""

from __future__ import annotations

import ast
from collections.abc import Sequence
from pathlib import Path
from typing import Any

CHAT_TEMPLATE = (
    "{% for m in messages %}<|im_start|>{{ m['role'] }}\n{{ m['content'] }}<|im_end|>\n{% endfor %}"
    "{% if add_generation_prompt %}<|im_start|>assistant\n{% endif %}"
)
CORPUS = [
    'model_id = [0, 1, 2]\nsubtasks = ["Find the bug.", "Write the fix."]\n'
    'access_list = [[], "all"]',
    "Analyse the code, find why the test fails, write SEARCH/REPLACE blocks.",
    "def add(a, b):\n    return a + b\n",
] * 20


def build_tiny_model(path: Path, seed: int = 0) -> Path:
    """Write config, safetensors weights and tokenizer files for a ~100k-parameter Llama."""
    import torch
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers
    from transformers import LlamaConfig, LlamaForCausalLM, PreTrainedTokenizerFast

    path.mkdir(parents=True, exist_ok=True)
    tok = Tokenizer(models.BPE())
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tok.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(
        vocab_size=400,
        special_tokens=["<|endoftext|>", "<|im_start|>", "<|im_end|>"],
        initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
    )
    tok.train_from_iterator(CORPUS, trainer)
    fast = PreTrainedTokenizerFast(
        tokenizer_object=tok,
        eos_token="<|im_end|>",
        bos_token="<|endoftext|>",
        pad_token="<|endoftext|>",
    )
    fast.chat_template = CHAT_TEMPLATE
    fast.save_pretrained(path)
    torch.manual_seed(seed)
    config = LlamaConfig(
        vocab_size=len(fast),
        hidden_size=32,
        intermediate_size=64,
        num_hidden_layers=2,
        num_attention_heads=4,
        num_key_value_heads=2,
        max_position_embeddings=4096,
        eos_token_id=fast.eos_token_id,
        bos_token_id=fast.bos_token_id,
        pad_token_id=fast.pad_token_id,
        tie_word_embeddings=False,
    )
    LlamaForCausalLM(config).save_pretrained(path, safe_serialization=True)
    return path


def well_formed(raw: str, workers: Sequence[Any]) -> Any:
    """The plan a grammar-constrained answer spells, whatever its subtasks say.

    Random weights write word salad, often in a loop, which the parser rightly refuses
    as no instruction; what the grammar guarantees is everything else: three lists of
    equal length, known ids, earlier steps only, no tool last."""
    from conductor_lsp.conductor.output import parse_for_workers

    head, subtasks, tail = raw.strip().split("\n")
    count = len(ast.literal_eval(subtasks.split("=", 1)[1].strip()))
    calm = f"subtasks = {['Do the step.'] * count!r}"
    return parse_for_workers("\n".join([head, calm, tail]), workers, max_steps=5, source="test")
