r"""Token prices and cost.

:data:`PRICES` is a small table of well-known models in US dollars per million tokens
``(input, output, cached input)``, checked against the providers' public price pages in 2025.
The third price is what a prompt token the provider served from its prompt cache costs
(``usage.prompt_tokens_details.cached_tokens``, counted as
:attr:`~ragmeter.judges.base.Usage.cached_prompt_tokens`); a price given as ``(input, output)``
charges cached tokens the full input price. Prices change: override or extend the table with
``Judge(prices={"my-model": (0.2, 0.8)})`` or ``(0.2, 0.8, 0.05)`` (``--judge-price`` on the
command line). A model that is not in the table has an unknown cost: tokens are still counted
and cost is reported as ``None``, never guessed. Local backends (``ollama``, ``llamacpp``) cost 0.

.. math::

    \mathrm{cost} = \frac{(p - c)\,\pi_{in} + c\,\pi_{cached} + o\,\pi_{out}}{10^6}

with ``p`` prompt tokens, ``c`` of them cached, ``o`` completion tokens.
"""

from __future__ import annotations

import re
from collections.abc import Mapping

from ..errors import InvalidParameterError
from .base import Usage

#: USD per 1M tokens: (input, output) or (input, output, cached input).
Price = tuple[float, ...]

#: USD per 1M tokens, (input, output, cached input); cached input is the providers' price of a
#: prompt-cache read (OpenAI's "cached input", Anthropic's "cache hits", Google's "context caching").
PRICES: dict[str, Price] = {
    "gpt-4o": (2.50, 10.00, 1.25),
    "gpt-4o-mini": (0.15, 0.60, 0.075),
    "gpt-4.1": (2.00, 8.00, 0.50),
    "gpt-4.1-mini": (0.40, 1.60, 0.10),
    "gpt-4.1-nano": (0.10, 0.40, 0.025),
    "o3-mini": (1.10, 4.40, 0.55),
    "o4-mini": (1.10, 4.40, 0.275),
    "gpt-3.5-turbo": (0.50, 1.50),
    "claude-3-5-haiku": (0.80, 4.00, 0.08),
    "claude-3-5-sonnet": (3.00, 15.00, 0.30),
    "claude-3-7-sonnet": (3.00, 15.00, 0.30),
    "claude-3-haiku": (0.25, 1.25, 0.03),
    "gemini-1.5-flash": (0.075, 0.30, 0.01875),
    "gemini-2.0-flash": (0.10, 0.40, 0.025),
}

_DATE_SUFFIX = re.compile(r"-(\d{4}-\d{2}-\d{2}|\d{8}|latest)$")


def check_prices(prices: Mapping[str, Price] | None) -> dict[str, Price]:
    """Validate a user price table (``{model: (input, output)}`` or ``(input, output, cached input)``,
    USD per 1M tokens)."""
    out: dict[str, Price] = {}
    for model, price in (prices or {}).items():
        try:
            values = tuple(float(x) for x in price)
        except (TypeError, ValueError):
            values = ()
        if len(values) not in (2, 3):
            raise InvalidParameterError(
                f"price of {model!r}: expected (input, output) or (input, output, cached input) USD per 1M "
                f"tokens, got {price!r}"
            )
        if any(v < 0 for v in values):
            raise InvalidParameterError(f"price of {model!r}: expected non-negative numbers, got {price!r}")
        out[model] = values
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
    """USD cost of ``usage`` at ``price`` (the module's formula); None when the price is unknown."""
    if price is None:
        return None
    cached_price = price[2] if len(price) > 2 else price[0]  # two numbers: no discount
    cached = usage.cached_prompt_tokens
    return ((usage.prompt_tokens - cached) * price[0] + cached * cached_price
            + usage.completion_tokens * price[1]) / 1_000_000
