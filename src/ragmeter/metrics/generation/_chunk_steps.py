"""The chunk relevance step: every retrieved chunk judged for the query.

Used by context_relevancy and context_precision_llm (the calls are shared by both):

- ``scale=binary,decision=direct`` (the default): one call **per chunk**, prompt
  ``chunk_relevant_direct.prompt``, a one-word yes/no (:func:`._verdict.word_verdict`): each chunk
  judged alone, so its position in the list cannot sway it, at K calls instead of one;
- ``scale=binary,decision=reasoned``: one call, prompt ``chunk_relevance.prompt``, reply
  ``sized(ChunkVerdicts, n)``;
- ``scale=graded``: one call, prompt ``rate_chunks.prompt``, reply ``sized(Ratings, n)``.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, replace
from typing import Any

from pydantic import BaseModel

from ...contract import PlannedStep
from ...types import Sample
from ._base import SCALE
from ._memo import shared
from ._prompting import numbered, reply_shape, template
from ._schema import YesNo, align, scale, sized
from ._verdict import (
    SCORING,
    WeightedRating,
    asked_logprobs,
    field_ratings,
    reply_yes_shares,
    word_reason,
    word_verdict,
)

#: ``scoring`` of the chunk metrics: ``auto`` by default, as for the other judged metrics. For the
#: default one-word decision per chunk the probabilities rank better than the words (per-chunk AUROC
#: 0.950 vs 0.925, Qwen2.5-Coder-1.5B, 72 rows; bench/results/README.md "Chunk relevance: one word per
#: chunk by default"). For the one-call forms (``scale=graded``, or ``scale=binary,
#: decision=reasoned``) ``scoring=hard`` measured better (0.788 vs 0.743 per chunk, row context
#: precision 0.812 vs 0.476: the mass a small judge puts on "0" pulls a relevant chunk's expected
#: rating under the threshold), and asks no log-probabilities (~4x cheaper per call on llama-cpp-python).
CHUNK_SCORING = replace(SCORING, description=(
    "auto (default): ask for log-probabilities and use each chunk's P(yes) (or probability-weighted rating) where "
    "the backend returns them; hard: the decisions / ratings the judge wrote, no logprobs asked (measured better "
    "for the one-call forms, scale=graded or decision=reasoned: bench/results/README.md)"))
#: The chunk metrics' ``scale``: binary by default (with the default one-word decision per chunk).
CHUNK_SCALE = replace(SCALE, default="binary", description=(
    "binary (default): a yes/no relevance decision per chunk, rating 10 * P(yes) or 10 / 0; graded: a 0-10 "
    "rating per chunk, all in one call"))


class Rating(BaseModel):
    """One passage's 0-10 rating."""

    passage: int
    reason: str
    rating: float = scale(0, 10)


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


@dataclass(frozen=True)
class ChunkRating:
    """One chunk's judgement: the 0-10 ``rating`` used for the score, the judge's ``reason``, the
    hard decision (``relevant``, binary) or hard rating (``hard_rating``, graded; the other None),
    P(yes) or the weighted rating's distribution where log-probabilities were used, and
    ``scoring`` ("probability" or "hard")."""

    rating: float
    reason: str
    relevant: bool | None = None
    hard_rating: float | None = None
    p_yes: float | None = None
    weighted: WeightedRating | None = None

    @property
    def hard(self) -> float:
        """The 0-10 rating from the judge's hard answer: ``hard_rating``, or ``relevant`` as 10/0."""
        if self.hard_rating is not None:
            return self.hard_rating
        return self.rating if self.relevant is None else (10.0 if self.relevant else 0.0)

    @property
    def scoring(self) -> str:
        """"probability" when the rating came from log-probabilities, else "hard"."""
        return "probability" if self.p_yes is not None or self.weighted is not None else "hard"

    def details(self, rank: int) -> dict[str, Any]:
        """The chunk's entry in a result's details."""
        out: dict[str, Any] = {"rank": rank, "rating": self.rating, "reason": self.reason}
        if self.relevant is not None:
            out["relevant"] = self.relevant
        if self.hard_rating is not None:
            out["hard_rating"] = self.hard_rating
            out |= self.weighted.details() if self.weighted else {}
        return out | {"scoring": self.scoring}


def chunk_steps(sample: Sample, scale: str, scoring: str, decision: str) -> list[PlannedStep]:
    """The calls :func:`rate_chunks` makes for ``sample`` (none without contexts): one per distinct
    chunk text with the one-word decision, else one for every chunk (keyed as they are shared)."""
    if not sample.contexts:
        return []
    if scale == "binary" and decision == "direct":
        return [PlannedStep(("chunk_relevant_direct", scoring, sample.query, text))
                for text in dict.fromkeys(sample.context_texts)]
    return [PlannedStep(("rate_chunks", scale, scoring, sample.query, tuple(sample.context_texts)))]


async def rate_chunks(judge: Any, sample: Sample, tag: str, scale: str = "binary",
                      scoring: str = "auto", decision: str = "direct") -> list[ChunkRating]:
    """One :class:`ChunkRating` per retrieved chunk, in rank order, all from one call; the reply must
    hold exactly one entry per chunk (else one repair, then a JudgeParseError).

    ``scale="graded"`` asks for a 0-10 rating per chunk: with ``scoring="auto"`` and
    log-probabilities from the backend, the rating is G-Eval's sum_k k P(k) / sum_k P(k) over the
    alternatives of the token where the chunk's ``"rating"`` value starts
    (:func:`._verdict.field_ratings`), else the hard rating. ``scale="binary"`` asks one yes/no
    relevance decision per chunk: rating 10 or 0, or with ``scoring="auto"`` and log-probabilities
    10 * P(yes) / (P(yes) + P(no)) of the token where the chunk's ``"relevant"`` value starts
    (:func:`._verdict.field_yes_shares`). A chunk whose token cannot be located keeps its hard value.
    ``decision="direct"`` (binary only) asks each chunk alone for a one-word yes/no, K calls,
    rating 10 * P(yes) with ``scoring="auto"`` and log-probabilities, else 10 / 0.
    """
    if scale == "binary" and decision == "direct":
        return await _direct(judge, sample, tag, scoring)
    model: type[BaseModel]
    if scale == "binary":
        t, model, key = template("chunk_relevance"), ChunkVerdicts, "passages"
        slot: dict[str, str] = {"relevant": "<yes or no>"}
    else:
        t, model, key = template("rate_chunks"), Ratings, "ratings"
        slot = {"rating": "<whole number 0-10>"}
    texts = sample.context_texts

    async def run() -> list[ChunkRating]:
        shape = reply_shape(key, [{"passage": i, "reason": "<short reason>", **slot}
                                  for i in range(1, len(texts) + 1)])
        r = await judge.judge(t.messages(question=sample.query, passages=numbered(texts), shape=shape),
                              sized(model, len(texts)), tag=tag, template_version=t.cache_version,
                              top_logprobs=asked_logprobs(scoring))
        items = getattr(r.value, key)
        judged = _binary(items, r, scoring) if scale == "binary" else _graded(items, r, scoring)
        of = {id(x): c for x, c in zip(items, judged, strict=True)}
        return align(items, len(texts), "passage", lambda x: of[id(x)])

    return await shared(judge, f"{t.cache_version}/{scoring}", (sample.query, texts), run)


def _binary(items: list[Any], r: Any, scoring: str) -> list[ChunkRating]:
    shares = reply_yes_shares(r, "relevant", len(items), scoring)
    return [ChunkRating(10.0 * p if p is not None else (10.0 if x.relevant else 0.0), x.reason, relevant=x.relevant,
                        p_yes=p) for x, p in zip(items, shares, strict=True)]


def _graded(items: list[Any], r: Any, scoring: str) -> list[ChunkRating]:
    hards = [x.rating for x in items]
    found = field_ratings(r.logprobs, r.raw, "rating", hards, [(0, 10)] * len(items)) if scoring == "auto" else None
    weighted = found or [None] * len(items)
    return [ChunkRating(w.mean if w is not None else x.rating, x.reason, hard_rating=x.rating, weighted=w)
            for x, w in zip(items, weighted, strict=True)]


async def _direct(judge: Any, sample: Sample, tag: str, scoring: str) -> list[ChunkRating]:
    """One one-word relevance decision per chunk, concurrently; each shared by the chunk metrics."""
    t = template("chunk_relevant_direct")

    async def one(text: str) -> ChunkRating:
        async def run() -> ChunkRating:
            d = await word_verdict(judge, t.messages(question=sample.query, passage=text), tag, t.cache_version,
                                   scoring)
            return ChunkRating(10.0 * d["support"], f"one-word decision: {word_reason(d)}",
                               relevant=d["verdict"] == "yes", p_yes=d["p_yes"])

        return await shared(judge, f"{t.cache_version}/{scoring}", (sample.query, text), run)

    return list(await asyncio.gather(*(one(text) for text in sample.context_texts)))
