"""Plans sampled from a model under training, constrained by the plan grammar.

Rollouts need valid plans to learn anything (a random policy that writes no plan
earns the format penalty every time, and a group of equal rewards teaches nothing),
so sampling is constrained exactly as at inference: the same chat tokenization, the
same grammar per pool (its size and which workers are tools).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

from ..conductor.grammar import plan_grammar, worst_case_tokens
from ..conductor.prompt import ConductorPrompt
from ..models.transformers import encode_chat

#: A worker line of the conductor prompt: "2: name, description[, a tool: ...], price".
_WORKER_LINE = re.compile(r"^(\d+): .*$", re.M)
_TOOL = ", a tool: it cannot write code"


def grammar_key(prompt: ConductorPrompt | str, max_steps: int) -> tuple[int, int, frozenset[int]]:
    """(workers, max steps, tool ids) read off a conductor prompt's worker list."""
    system = prompt.system if isinstance(prompt, ConductorPrompt) else prompt
    block = system.split("Workers (", 1)[-1].split("\n\n", 1)[0]
    ids, tools = [], set()
    for m in _WORKER_LINE.finditer(block):
        ids.append(int(m.group(1)))
        if _TOOL in m.group(0):
            tools.add(int(m.group(1)))
    return len(ids), max_steps, frozenset(tools)


class PlanSampler:
    """Samples constrained plans from a (LoRA-wrapped) causal LM."""

    def __init__(self, tokenizer: Any, model_vocab: int, max_steps: int) -> None:
        import xgrammar as xgr

        self.tokenizer = tokenizer
        self.max_steps = max_steps
        vocab = max(model_vocab, len(tokenizer))
        self._compiler = xgr.GrammarCompiler(
            xgr.TokenizerInfo.from_huggingface(tokenizer, vocab_size=vocab)
        )
        self._grammars: dict[tuple[int, int, frozenset[int]], Any] = {}
        self.max_new_tokens = worst_case_tokens(max_steps)

    def prompt_ids(self, system: str, user: str) -> list[int]:
        return encode_chat(self.tokenizer, system, user)[0]

    def _grammar(self, key: tuple[int, int, frozenset[int]]) -> Any:
        if key not in self._grammars:
            self._grammars[key] = self._compiler.compile_grammar(plan_grammar(*key))
        return self._grammars[key]

    def sample(
        self,
        model: Any,
        prompt_ids: Sequence[int],
        key: tuple[int, int, frozenset[int]],
        n: int,
        temperature: float,
    ) -> list[list[int]]:
        """``n`` completions (token ids, the end token included); greedy at temperature 0.

        The prompt is read once and its cache shared by the ``n`` samples (on a CPU the
        prompt costs more than the plan); sampling for training runs in bfloat16, greedy
        scoring in the model's own precision, as in use."""
        import torch
        import xgrammar as xgr
        from transformers import DynamicCache, LogitsProcessorList

        device = next(model.parameters()).device
        ids = torch.tensor([list(prompt_ids)] * n, device=device)
        processor = xgr.contrib.hf.LogitsProcessor([self._grammar(key)] * n)
        kw: dict[str, Any] = (
            {"do_sample": True, "temperature": temperature}
            if temperature > 0
            else {"do_sample": False}
        )
        pad = self.tokenizer.pad_token_id
        eos = self.tokenizer.eos_token_id
        was_training = model.training
        model.eval()
        low = temperature > 0 and device.type == "cpu"
        try:
            with torch.no_grad(), torch.autocast("cpu", dtype=torch.bfloat16, enabled=low):
                cache = DynamicCache()
                if len(prompt_ids) > 1:
                    model(input_ids=ids[:1, :-1], past_key_values=cache, use_cache=True)
                    if n > 1:
                        cache.batch_repeat_interleave(n)
                out = model.generate(
                    input_ids=ids,
                    attention_mask=torch.ones_like(ids),
                    past_key_values=cache,
                    max_new_tokens=self.max_new_tokens,
                    logits_processor=LogitsProcessorList([processor]),
                    pad_token_id=pad if pad is not None else eos,
                    **kw,
                )
        finally:
            if was_training:
                model.train()
        completions = []
        for row in out[:, len(prompt_ids) :].tolist():
            completions.append(row[: row.index(eos) + 1] if eos in row else row)
        return completions

    def text(self, completion: Sequence[int]) -> str:
        return str(self.tokenizer.decode(list(completion), skip_special_tokens=True))
