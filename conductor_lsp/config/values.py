"""The configuration's value types with their bounds, checked by pydantic: a number is
finite (``nan`` never switches a cap off), a count is at least 1, a time is above 0, an
endpoint is an http(s) URL. Fields of the sections and of backends' and providers'
``Options`` use these names; a plain ``float`` is checked as ``Finite``."""

from __future__ import annotations

from typing import Annotated
from urllib.parse import urlsplit

from pydantic import AfterValidator, Field


def _http_url(value: str) -> str:
    if not value:
        return value
    parts = urlsplit(value)
    if parts.scheme not in ("http", "https") or not parts.netloc:
        raise ValueError("an http:// or https:// URL with a host")
    return value


#: Any finite number (no nan, no infinity).
Finite = Annotated[float, Field(allow_inf_nan=False)]
#: Finite and not negative: dollars, prices, weights, temperatures.
NonNegative = Annotated[float, Field(ge=0, allow_inf_nan=False)]
#: Finite and above 0: seconds a thing may take.
Seconds = Annotated[float, Field(gt=0, allow_inf_nan=False)]
#: At least 0 and below 1: a chance.
Chance = Annotated[float, Field(ge=0, lt=1, allow_inf_nan=False)]
#: At least 0 and at most 1: a similarity.
Similarity = Annotated[float, Field(gt=0, le=1, allow_inf_nan=False)]
#: At least 1: how many of something (calls, rounds, jobs at once).
Count = Annotated[int, Field(ge=1)]
#: At least 0: a size where 0 means none or unknown (characters, tokens, retries).
Size = Annotated[int, Field(ge=0)]
#: "" (the provider's default) or an http(s) URL.
Url = Annotated[str, AfterValidator(_http_url)]

__all__ = ["Chance", "Count", "Finite", "NonNegative", "Seconds", "Similarity", "Size", "Url"]
