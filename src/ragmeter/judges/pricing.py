"""Token prices and cost.

:data:`PRICES` is a small table of well-known models in US dollars per million tokens
``(input, output)``, checked against the providers' public price pages in 2025. Prices change:
override or extend it with ``Judge(prices={"my-model": (0.2, 0.8)})`` (``--judge-price`` on the
command line). A model that is not in the table has an unknown cost: tokens are still counted
and cost is reported as ``None``, never guessed. Local backends (``ollama``, ``llamacpp``) cost 0.
"""

from __future__ import annotations

import re
from collections.abc import Mapping

from ..errors import InvalidParameterError
from .base import Usage

Price = tuple[float, float]

#: USD per 1M tokens, (input, output).
PRICES: dict[str, Price] = {
    "gpt-4o": (2.50, 10.00),
    "gpt-4o-mini": (0.15, 0.60),
    "gpt-4.1": (2.00, 8.00),
    "gpt-4.1-mini": (0.40, 1.60),
    "gpt-4.1-nano": (0.10, 0.40),
    "o3-mini": (1.10, 4.40),
    "o4-mini": (1.10, 4.40),
    "gpt-3.5-turbo": (0.50, 1.50),
    "claude-3-5-haiku": (0.80, 4.00),
    "claude-3-5-sonnet": (3.00, 15.00),
    "claude-3-7-sonnet": (3.00, 15.00),
    "claude-3-haiku": (0.25, 1.25),
    "gemini-1.5-flash": (0.075, 0.30),
    "gemini-2.0-flash": (0.10, 0.40),
}

_DATE_SUFFIX = re.compile(r"-(\d{4}-\d{2}-\d{2}|\d{8}|latest)$")


def check_prices(prices: Mapping[str, Price] | None) -> dict[str, Price]:
    """Validate a user price table (``{model: (input_usd_per_1m, output_usd_per_1m)}``)."""
    out: dict[str, Price] = {}
    for model, price in (prices or {}).items():
        try:
            pin, pout = (float(x) for x in price)
        except (TypeError, ValueError):
            raise InvalidParameterError(
                f"price of {model!r}: expected (input, output) USD per 1M tokens, got {price!r}"
            ) from None
        if pin < 0 or pout < 0:
            raise InvalidParameterError(f"price of {model!r}: expected non-negative numbers, got {price!r}")
        out[model] = (pin, pout)
    return out


def lookup_price(model: str, overrides: Mapping[str, Price] | None = None) -> Price | None:
    """The price of ``model``: the override table first, then :data:`PRICES`; None when unknown.

    A provider prefix (``openai/gpt-4o``, ``anthropic/claude-3-5-haiku``) and a date or
    ``-latest`` suffix (``gpt-4o-mini-2024-07-18``) are ignored when the exact name is unknown.
    """
    tables = [overrides or {}, PRICES]
    candidates = [model]
    base = model.rsplit("/", 1)[-1]
    if base != model:
        candidates.append(base)
    for c in list(candidates):
        stripped = _DATE_SUFFIX.sub("", c)
        if stripped != c:
            candidates.append(stripped)
    for table in tables:
        for c in candidates:
            if c in table:
                return table[c]
    return None


def cost_of(usage: Usage, price: Price | None) -> float | None:
    """USD cost of ``usage`` at ``price``; None when the price is unknown."""
    if price is None:
        return None
    return (usage.prompt_tokens * price[0] + usage.completion_tokens * price[1]) / 1_000_000
