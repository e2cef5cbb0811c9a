"""Token usage and cost, kept as data on every response."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Usage:
    input_tokens: int = 0
    output_tokens: int = 0
    #: Input tokens served from the provider's cache; None when the provider does not say.
    cached_input_tokens: int | None = None

    def __add__(self, other: Usage) -> Usage:
        a, b = self.cached_input_tokens, other.cached_input_tokens
        return Usage(
            self.input_tokens + other.input_tokens,
            self.output_tokens + other.output_tokens,
            None if a is None and b is None else (a or 0) + (b or 0),
        )

    @property
    def total(self) -> int:
        return self.input_tokens + self.output_tokens

    def cost(self, price_in: float, price_out: float) -> float:
        """Dollars, with prices per million tokens."""
        return (self.input_tokens * price_in + self.output_tokens * price_out) / 1_000_000


@dataclass
class Tally:
    """Per-model totals for a job or a loop."""

    calls: int = 0
    usage: Usage = Usage()
    cost: float = 0.0

    def add(self, usage: Usage, cost: float) -> None:
        self.calls += 1
        self.usage = self.usage + usage
        self.cost += cost

    def merge(self, other: Tally) -> None:
        """Fold in another tally (totals, or one job's figures into a loop's)."""
        self.calls += other.calls
        self.usage = self.usage + other.usage
        self.cost += other.cost


def total(tallies: dict[str, Tally]) -> Tally:
    out = Tally()
    for t in tallies.values():
        out.merge(t)
    return out
