"""Context relevancy: how useful each retrieved chunk is for the query, judged per chunk.

.. math:: \\mathrm{ContextRelevancy} = \\frac{1}{K} \\sum_{i=1}^{K} \\frac{r_i}{10}, \\quad r_i \\in [0, 10]

**Default (``scale=binary``, ``decision=direct``, ``scoring=auto``): each chunk is asked alone,
"is the passage relevant to the question?", for a one-word yes/no** (prompt
``chunk_relevant_direct``, ``max_tokens`` 1, one call per chunk, shared with
context_precision_llm), and r_i = 10 * P(yes) / (P(yes) + P(no)) over that token's alternatives
where the backend returns log-probabilities, else 10 or 0 from the word (the word stays in the
details as ``relevant``). No chunk's decision depends on the others or on its position. Chosen by
measurement (bench/results/README.md, "Chunk relevance: one word per chunk by default"): with
Qwen2.5-Coder-1.5B on the 72-row validation set, per-chunk AUROC 0.950 against 0.788 for the
former default (all chunks rated 0-10 in one call), and a share judged relevant within 10 points of
the human one at every position (the one-call rating was 24-27 points too generous after position 1).

The one-call forms: ``scale=binary,decision=reasoned`` decides every chunk in one JSON reply with a
short reason each (prompt ``chunk_relevance``); ``scale=graded`` rates every chunk 0-10 in one call
(prompt ``rate_chunks``), with ``scoring=auto`` r_i is G-Eval's probability-weighted rating over the
chunk's rating token,

.. math:: r_i = \\frac{\\sum_{k=0}^{10} k \\, P_i(k)}{\\sum_{k=0}^{10} P_i(k)}

(:mod:`._verdict`; the hard rating stays in the details as ``hard_rating``, with the chunk's
``distribution``). For these one-call forms ``scoring=hard`` (the ratings / decisions the judge
wrote, no log-probabilities asked) measured better with a 1.5B judge. Each chunk falls back to its
hard value where its token cannot be located; ``details.scoring`` is "probability" (every chunk),
"hard" (none; always with ``scoring=hard`` or without log-probabilities) or "mixed".
Edge cases: empty context list -> 0.0 (no call); a one-word reply that is neither yes nor no ->
read from the two words' probabilities when there are any, else a recorded JudgeParseError; in the
one-call forms a reply with another number of ratings than chunks, or a missing field, is
unreadable output (one repair, then a recorded JudgeParseError).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ...contract import PlannedStep
from ...registry import LabelCheck
from ...types import MetricResult, Sample
from ._base import DECISION, JUDGE_VALIDATION, JudgedEvaluator, check_decision, register_judged
from ._chunk_steps import CHUNK_SCALE, CHUNK_SCORING, chunk_steps, rate_chunks
from ._verdict import HARD_FALLBACK, scoring_of


class ContextRelevancy(JudgedEvaluator):
    """See the module docstring."""

    def __init__(self, *args: Any) -> None:
        super().__init__(*args)
        check_decision(self.name, self.params, self.params["scale"] == "binary")

    def planned_calls(self, sample: Sample) -> list[PlannedStep]:
        """The chunk decisions or ratings (:func:`._chunk_steps.chunk_steps`)."""
        return chunk_steps(sample, self.params["scale"], self.params["scoring"], self.params["decision"])

    async def ascore(self, sample: Sample) -> MetricResult:
        """Score one sample."""
        if not sample.contexts:
            return self.result(0.0, "no contexts retrieved")
        chunks = await rate_chunks(self.judge, sample, "context_relevancy", self.params["scale"],
                                   self.params["scoring"], self.params["decision"])
        values = [c.rating / 10 for c in chunks]
        if self.params["scale"] == "binary":
            reason = f"{sum(c.relevant is True for c in chunks)} of {len(values)} chunks judged relevant"
        else:
            reason = f"mean chunk rating {10 * sum(values) / len(values):.1f}/10 over {len(values)} chunks"
        return self.result(sum(values) / len(values), reason, scale=self.params["scale"],
                           scoring=scoring_of([c.scoring == "probability" for c in chunks]),
                           chunks=[c.details(i + 1) for i, c in enumerate(chunks)])


def chunk_ratings(details: Mapping[str, Any]) -> tuple[list[float], list[float]]:
    """``(ratings, hard ratings)`` per chunk (0-10) from ``details.chunks``: ``rating``; hard:
    ``hard_rating``, or ``relevant`` as 10/0 on the binary scale; an unrated chunk counts 0, a
    chunk without a hard value its rating."""
    used: list[float] = []
    hard: list[float] = []
    for chunk in details.get("chunks") or []:
        used.append(float(chunk["rating"]) if chunk.get("rating") is not None else 0.0)
        if chunk.get("hard_rating") is not None:
            hard.append(float(chunk["hard_rating"]))
        elif isinstance(chunk.get("relevant"), bool):
            hard.append(10.0 if chunk["relevant"] else 0.0)
        else:
            hard.append(used[-1])
    return used, hard


def chunk_positions(details: Mapping[str, Any], labels: Mapping[str, Any]) -> list[tuple[float, float | None]]:
    """Per chunk, in order, whether the judge rated it relevant (rating >= 5) and the human label."""
    chunks, human = details.get("chunks") or [], labels.get("context_relevance") or []
    return [(float((c["rating"] or 0) >= 5), float(h)) for c, h in zip(chunks, human, strict=False)]


register_judged(
    "context_relevancy",
    ContextRelevancy,
    role="context",
    summary="Mean judged relevance of the retrieved chunks: mean P(yes) of a one-word decision per chunk "
            "(default), or the mean 0-10 rating / 10 of one call (scale=graded).",
    formula="context_relevancy = mean_i rating_i / 10; graded with log-probabilities: rating_i = sum_k k P_i(k) / "
            "sum_k P_i(k), k in 0..10; binary: rating_i = 10 * P(yes)/(P(yes)+P(no)) with log-probabilities, "
            "else 10 if judged relevant else 0",
    edge_cases=("empty context list -> 0.0",
                "a rating count other than the chunk count -> JudgeParseError after one repair",
                "per chunk: " + HARD_FALLBACK),
    requires=("query", "contexts"),
    calls="1 per chunk (default; shared with context_precision_llm); 1 for all chunks with scale=graded or "
          "decision=reasoned; 0 without contexts",
    params=(CHUNK_SCALE, DECISION, CHUNK_SCORING),
    version="8",
    check=LabelCheck(label="context_relevance", unit="chunk", data=JUDGE_VALIDATION, default=True,
                     chunk_ratings=chunk_ratings, positions=chunk_positions),
)
