"""What an endpoint's tokenizer makes of our text, learned from its own answers.

A worker behind an endpoint is not counted in process, so a request is fitted to its
window (``[workers.X] context``) by an estimate of characters per token. The fixed one
(``context.window.CHARS_PER_TOKEN``, 3.0) wastes a quarter of a coder model's window
(they give 3.5-4.4 on code and prose) and still misjudges a test report full of numbers:
coder tokenizers spend a token per digit (a request with 2,400 digits in 24,700
characters gives 3.05). So a request's tokens are estimated as its digits plus the rest
at a ratio, and every answer reports the tokens its request took (``usage.input_tokens``,
the chat template's included), so the ratio is learned per endpoint and model: the
least of the last ``KEEP`` seen, less ``MARGIN``. It is kept in the user's state
(``tokens.json``) so the next job starts from it; an unreadable file starts from the
fixed one.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from pathlib import Path

from ..config.schema import WorkerConfig
from ..context.window import CHARS_PER_TOKEN
from ..storage.state import read_json, user_state_dir, write_json

#: Ratios kept per endpoint and model (the least of them is used).
KEEP = 20
#: Taken off the least ratio seen: a text denser than any seen yet still fits.
MARGIN = 0.95
#: Ratios believed, at most: outside them a report is not a tokenizer's count.
SANE = (1.0, 6.0)
#: Endpoints remembered, the most recent.
MOST = 64


def ratios_file() -> Path:
    return user_state_dir() / "tokens.json"


def endpoint_key(config: WorkerConfig) -> str:
    """One tokenizer: the provider, where it is served and the model's name."""
    return f"{config.provider} {config.base_url} {config.model}"


@dataclass
class TokenRatios:
    """Characters per token per endpoint, as its answers reported them."""

    path: Path | None = None
    seen: dict[str, list[float]] = field(default_factory=dict)

    @classmethod
    def load(cls, path: Path | None) -> TokenRatios:
        """From ``path`` (None: kept in memory only); what does not read is left out."""
        seen: dict[str, list[float]] = {}
        data = read_json(path) if path else None
        for key, values in data.items() if isinstance(data, dict) else ():
            good = [float(v) for v in values if _sane(v)] if isinstance(values, list) else []
            if isinstance(key, str) and good:
                seen[key] = good[-KEEP:]
        return cls(path, seen)

    def chars_per_token(self, key: str) -> float:
        """Characters per token besides digits, to estimate by: learned, else fixed."""
        values = self.seen.get(key)
        return min(values) * MARGIN if values else CHARS_PER_TOKEN

    def learn(self, key: str, text: str, tokens: int) -> None:
        """One answer's report: ``text`` sent took ``tokens``. Kept, and written."""
        digits = _digits(text)
        ratio = (_length(text) - digits) / (tokens - digits) if tokens > digits else 0.0
        if not _sane(ratio):
            return
        values = [*self.seen.pop(key, []), ratio][-KEEP:]
        self.seen[key] = values  # last: the most recent
        for old in list(self.seen)[:-MOST]:
            del self.seen[old]
        try:
            if self.path is not None:
                write_json(self.path, self.seen, indent=1)
        except OSError:
            pass  # a state folder that cannot be written: learned for this session only


def estimate(text: str, chars_per_token: float) -> int:
    """Tokens ``text`` takes, about: a token per digit, the rest at ``chars_per_token``."""
    digits = _digits(text)
    return digits + math.ceil((_length(text) - digits) / chars_per_token)


def _length(text: str) -> int:
    """Characters, a tab as four: a tokenizer spends on a tab what it spends on the four
    spaces it stands for (Qwen's: 6,726 tokens for a module indented by tabs, 6,745 with
    spaces), so a ratio learned on code indented by spaces fits one indented by tabs."""
    return len(text) + 3 * text.count("\t")


def _digits(text: str) -> int:
    return sum(text.count(d) for d in "0123456789")


def _sane(value: object) -> bool:
    return isinstance(value, int | float) and SANE[0] <= value <= SANE[1]
