"""Building blocks of the judges' reply models: the yes/no field, exact-count lists, alignment.

Reply models are lenient about *form* (``"Yes"``, ``true`` and ``"yes"`` are one verdict; ``"7"``
is 7) but strict about *content*: every field the request schema requires is required (no
model field has a default, so ``{"score": 5}`` never validates), a list of per-item decisions
must hold exactly one entry per item asked (:func:`sized`), and a verdict that is neither yes
nor no, or a rating outside its range, fails validation. Any of these makes the judge layer ask
once for a repair and then record a :class:`~ragmeter.errors.JudgeParseError` on the sample;
a reply that failed validation is never cached.

A reply model's class name is the schema name sent with the request (``response_format``
``json_schema.name``, and the schema's ``title`` in the other structured-output modes), so it is
part of the cache key and is what the test judge answers by: names are unique across the
generation metrics (a test checks it). A reply model's docstring is sent too (the schema's
``description``): editing it changes the cache key, like editing a prompt.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from functools import cache
from typing import Annotated, Any

from pydantic import BaseModel, BeforeValidator, Field, WithJsonSchema, create_model

_YES = {"yes", "y", "true", "supported", "1"}
_NO = {"no", "n", "false", "unsupported", "not supported", "0"}


def _yes_no(v: Any) -> bool:
    if isinstance(v, bool):
        return v
    if isinstance(v, str) and v.strip().strip(".").lower() in _YES | _NO:
        return v.strip().strip(".").lower() in _YES
    raise ValueError(f'expected "yes" or "no", got {v!r}')


#: A yes/no field that accepts ``"Yes"``, ``true``, ``"no."``... and nothing else. Its JSON schema
#: (what a grammar-enforcing server lets the model write) is the string ``"yes"`` or ``"no"``, the
#: words the prompts use.
YesNo = Annotated[bool, BeforeValidator(_yes_no), WithJsonSchema({"type": "string", "enum": ["yes", "no"]})]


def scale(low: int, high: int) -> Any:
    """The ``Field`` of a rating on the whole numbers ``low..high``: validated to ``[low, high]``, and
    in the JSON schema sent also an ``enum`` of those numbers.

    The enum is what a grammar-enforcing server enforces: llama-cpp-python's schema-to-grammar
    converter (``llama_grammar.SchemaConverter.visit``, 0.3.36) silently drops ``minimum`` /
    ``maximum``, so ``{"type": "integer", "minimum": 1, "maximum": 5}`` became "any integer" and a
    1.5B judge wrote 0 for a 1-5 score; ``enum`` is enforced by it, llama.cpp's server, vLLM, Ollama
    and OpenAI's strict mode alike. ``minimum``/``maximum`` stay in the schema (servers that read
    them); validation is the model's, unchanged (a ``float`` field still accepts ``7.5`` from a
    server that enforces nothing)."""
    return Field(ge=low, le=high, json_schema_extra={"enum": list(range(low, high + 1))})


class Graded(BaseModel):
    """A 0-10 rating with its reason (``answer_match``, ``correctness``)."""

    reason: str
    rating: float = scale(0, 10)


@cache
def sized(base: type[BaseModel], n: int) -> type[BaseModel]:
    """``base`` with its one list field constrained to exactly ``n`` entries (one per item asked).

    The constraint is in the JSON schema sent (``minItems``/``maxItems``: a grammar-enforcing
    server cannot stop early or add entries) and in validation: a reply with another count fails
    validation, so the judge layer asks once for a repair and then records a
    :class:`~ragmeter.errors.JudgeParseError`. ``{"verdicts": []}`` for 3 claims is never a score.
    The sized model is named ``<base name><n>`` (``Verdicts3``).
    """
    lists = [k for k, f in base.model_fields.items() if getattr(f.annotation, "__origin__", None) is list]
    if len(lists) != 1:
        raise TypeError(f"{base.__name__}: expected exactly one list field, got {lists}")
    item = base.model_fields[lists[0]].annotation
    return create_model(f"{base.__name__}{n}", __base__=base,  # type: ignore[call-overload, no-any-return]
                        **{lists[0]: (item, Field(min_length=n, max_length=n))})


def align(items: Sequence[Any], n: int, index_field: str, value: Callable[[Any], Any]) -> list[Any]:
    """Map judge items to positions 1..n: by their index field when every item has a valid distinct one,
    else by order. The reply models are sized (exactly n items), so every position gets a value."""
    out: list[Any] = [None] * n
    idx = [getattr(it, index_field) for it in items]
    if idx and all(isinstance(i, int) and 1 <= i <= n for i in idx) and len(set(idx)) == len(idx):
        for i, it in zip(idx, items, strict=True):
            out[i - 1] = value(it)
    else:
        for pos, it in enumerate(items[:n]):
            out[pos] = value(it)
    return out
