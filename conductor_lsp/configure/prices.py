"""Where each price comes from: a price written in the configuration wins; a model on this
machine or on a local server is free; a provider's model is priced by ``genai-prices``
(its bundled snapshot, read offline), so that $ figures, budgets and routing do not rest on
numbers typed by hand that go stale the day a provider changes them."""

from __future__ import annotations

import functools
from collections.abc import Mapping

from ..config.schema import Config, EndpointConfig, PriceOrigin, PriceSource
from ..workers.http import is_local_address

#: Our providers by the id ``genai-prices`` knows them by (None: find the model anywhere).
PRICED: Mapping[str, str | None] = {
    "openai": "openai",
    "anthropic": "anthropic",
    "gemini": "google",
    "openai-compatible": None,
}
#: Providers that run on this machine (no bill).
ON_THIS_MACHINE = ("local", "llama-cpp", "tests")
#: The conductor's backends that call an endpoint (priced like an OpenAI-compatible worker).
ENDPOINT_BACKENDS = ("openai",)


@functools.lru_cache(maxsize=256)
def lookup(model: str, provider: str | None) -> tuple[float, float, str] | None:
    """($ per million in, $ per million out, what matched) from genai-prices' snapshot;
    None when the package is missing or does not know the model."""
    try:
        from importlib.metadata import version

        from genai_prices import Usage, calc_price
    except ImportError:
        return None
    try:
        price = calc_price(
            Usage(input_tokens=1_000_000, output_tokens=1_000_000),
            model_ref=model,
            provider_id=provider,
        )
    except (LookupError, ValueError):
        return None
    where = f"genai-prices {version('genai-prices')}: {price.provider.id} {price.model.id}"
    return float(price.input_price), float(price.output_price), where


def price_endpoint(end: EndpointConfig, provider: str) -> PriceOrigin:
    """Fill ``end``'s prices where they were not written; returns where they came from."""
    if provider in ON_THIS_MACHINE:
        end.price_in = end.price_out = 0.0
        return PriceOrigin(PriceSource.THIS_MACHINE)
    if provider not in PRICED:
        return PriceOrigin(PriceSource.PLUGIN, provider)
    if provider == "openai-compatible" and end.base_url and is_local_address(end.base_url):
        end.price_in = end.price_out = 0.0
        return PriceOrigin(PriceSource.LOCAL_SERVER, end.base_url)
    found = lookup(end.model, PRICED[provider]) if end.model else None
    if found is not None:
        end.price_in, end.price_out, where = found
        return PriceOrigin(PriceSource.LOOKED_UP, where)
    if end.price_in or end.price_out:
        return PriceOrigin(PriceSource.PROVIDER_DEFAULT, provider)
    return PriceOrigin(PriceSource.UNKNOWN)


def apply_prices(cfg: Config) -> None:
    """Price every worker (and an endpoint conductor) whose prices the configuration does
    not set; ``cfg.prices`` says where each came from (``doctor`` shows it)."""
    for name, w in cfg.workers.items():
        if not _written(cfg, name):
            cfg.prices[name] = price_endpoint(w, w.provider)
    if cfg.conductor.backend in ENDPOINT_BACKENDS and not _written(cfg, "conductor"):
        cfg.prices["conductor"] = price_endpoint(cfg.conductor, "openai-compatible")


def _written(cfg: Config, name: str) -> bool:
    """Whether a configuration layer set this price (``load._note_prices``)."""
    found = cfg.prices.get(name)
    return found is not None and found.source is PriceSource.WRITTEN


def describe(cfg: Config, name: str) -> str:
    """One line for ``doctor``: the price and its source."""
    end = cfg.conductor if name == "conductor" else cfg.workers[name]
    return (
        f"${end.price_in:g} in / ${end.price_out:g} out per million tokens: "
        f"{cfg.prices[name].text()}"
    )
