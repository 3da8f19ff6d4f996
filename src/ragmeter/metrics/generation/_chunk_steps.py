"""The chunk rating step: every retrieved chunk rated for the query, in one call.

Used by context_relevancy and context_precision_llm (one call shared by both):

- ``scale=graded`` (the default): prompt ``rate_chunks.prompt``, reply ``sized(Ratings, n)``;
- ``scale=binary``: prompt ``chunk_relevance.prompt``, reply ``sized(ChunkVerdicts, n)``.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from pydantic import BaseModel, Field

from ...types import Sample
from ._memo import shared
from ._prompting import numbered, reply_shape, template
from ._schema import YesNo, align, sized


class Rating(BaseModel):
    """One passage's 0-10 rating."""

    passage: int
    reason: str
    rating: float = Field(ge=0, le=10)


class Ratings(BaseModel):
    """Reply of ``rate_chunks`` (ask with ``sized(Ratings, n)``: exactly one rating per passage)."""

    ratings: list[Rating]


class ChunkVerdict(BaseModel):
    """One passage's yes/no relevance decision."""

    passage: int
    reason: str
    relevant: YesNo


class ChunkVerdicts(BaseModel):
    """Reply of ``chunk_relevance`` (ask with ``sized(ChunkVerdicts, n)``)."""

    passages: list[ChunkVerdict]


async def rate_chunks(judge: Any, sample: Sample, tag: str, scale: str = "graded",
                      scoring: str = "hard") -> tuple[list[float], list[str], list[bool | None]]:
    """A 0-10 rating, a reason and the hard yes/no decision (None for graded) per retrieved chunk,
    in one call; the reply must hold exactly one entry per chunk (else one repair, then a
    JudgeParseError).

    ``scale="binary"`` asks one yes/no relevance decision per chunk: rating 10 or 0, or with
    ``scoring="auto"`` and log-probabilities from the backend 10 * P(yes) / (P(yes) + P(no)) of the
    token where the chunk's ``"relevant"`` value starts (:func:`._verdict.field_yes_shares`; 10/0
    where it cannot be located). ``scale="graded"`` asks for a 0-10 rating directly (``scoring`` is
    not used: probability-weighted ratings are not implemented yet).
    """
    from ._verdict import TOP_LOGPROBS, field_yes_shares

    scoring = scoring if scale == "binary" else "hard"
    model: type[BaseModel]
    if scale == "binary":
        t, model, key = template("chunk_relevance"), ChunkVerdicts, "passages"
        slot: dict[str, str] = {"relevant": "<yes or no>"}
        value: Callable[[Any], float] = lambda x: 10.0 if x.relevant else 0.0  # noqa: E731
    else:
        t, model, key = template("rate_chunks"), Ratings, "ratings"
        slot, value = {"rating": "<whole number 0-10>"}, lambda x: x.rating
    texts = sample.context_texts

    async def run() -> tuple[list[float], list[str], list[bool | None]]:
        shape = reply_shape(key, [{"passage": i, "reason": "<short reason>", **slot}
                                  for i in range(1, len(texts) + 1)])
        r = await judge.judge(t.messages(question=sample.query, passages=numbered(texts), shape=shape),
                              sized(model, len(texts)), tag=tag, template_version=t.cache_version,
                              top_logprobs=TOP_LOGPROBS if scoring == "auto" else None)
        items = getattr(r.value, key)
        shares = field_yes_shares(r.logprobs, r.raw, "relevant") if scoring == "auto" else None
        if shares is None or len(shares) != len(items):
            shares = [None] * len(items)
        p_of: dict[int, float | None] = {id(x): p for x, p in zip(items, shares, strict=True)}

        def rating(x: Any) -> float:
            p = p_of[id(x)]
            return value(x) if p is None else 10.0 * p

        rated = align(items, len(texts), "passage", rating)
        hard = align(items, len(texts), "passage", lambda x: x.relevant if scale == "binary" else None)
        return rated, align(items, len(texts), "passage", lambda x: x.reason), hard

    return await shared(judge, f"{t.cache_version}/{scoring}", (sample.query, texts), run)
