"""Context relevancy: how useful each retrieved chunk is for the query, judged per chunk.

.. math:: \\mathrm{ContextRelevancy} = \\frac{1}{K} \\sum_{i=1}^{K} \\frac{r_i}{10}, \\quad r_i \\in [0, 10]

One call judges every chunk. With ``scale=graded`` (the default) the judge rates each chunk 0-10;
with ``scale=binary`` it makes one yes/no relevance decision per chunk and r_i is 10 or 0, so the
score is the share of relevant chunks (measured side by side in docs/generation.md). With
``scale=binary,decision=direct`` each chunk is asked alone for a one-word yes/no (one call per
chunk, ``max_tokens`` 1), so no chunk's decision depends on the others or on its position.

**Scoring.** ``scoring=hard`` (the default for this metric and context_precision_llm, which
share the call) uses the ratings / decisions the judge wrote and asks for no log-probabilities:
measured better than the probability-weighted ratings per chunk with a 1.5B judge, and ~4x
cheaper per call on llama-cpp-python (docs/generation.md, "Chunk ratings: hard by default").
With ``scoring=auto`` and log-probabilities from the backend, with ``scale=binary`` r_i is
10 * P(yes) / (P(yes) + P(no)) of the chunk's verdict token (the hard decision stays in the
details as ``relevant``); with ``scale=graded`` r_i is G-Eval's probability-weighted rating over
the chunk's rating token,

.. math:: r_i = \\frac{\\sum_{k=0}^{10} k \\, P_i(k)}{\\sum_{k=0}^{10} P_i(k)}

(:mod:`._verdict`; the hard rating stays in the details as ``hard_rating``, with the chunk's
``distribution``). Each chunk falls back to its hard value where its token cannot be located or
has no rating among its alternatives; ``details.scoring`` is "probability" (every chunk),
"hard" (none; always with ``scoring=hard`` or without log-probabilities) or "mixed".
Edge cases: empty context list -> 0.0 (no call); a reply with another number of ratings than
chunks, or a missing field, is unreadable output (one repair, then a recorded JudgeParseError).
"""

from __future__ import annotations

from typing import Any

from ...types import MetricResult, Sample
from ._base import SCALE, JudgedEvaluator, register_judged
from ._chunk_steps import CHUNK_DECISION, CHUNK_SCORING, check_decision, rate_chunks
from ._verdict import HARD_FALLBACK, scoring_of


class ContextRelevancy(JudgedEvaluator):
    """See the module docstring."""

    def __init__(self, *args: Any) -> None:
        super().__init__(*args)
        check_decision(self.name, self.params)

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


register_judged(
    "context_relevancy",
    ContextRelevancy,
    role="context",
    summary="Mean judged relevance of the retrieved chunks: mean 0-10 rating / 10 (graded, default) or "
            "share judged relevant (binary).",
    formula="context_relevancy = mean_i rating_i / 10; graded with log-probabilities: rating_i = sum_k k P_i(k) / "
            "sum_k P_i(k), k in 0..10; binary: rating_i = 10 * P(yes)/(P(yes)+P(no)) with log-probabilities, "
            "else 10 if judged relevant else 0",
    edge_cases=("empty context list -> 0.0",
                "a rating count other than the chunk count -> JudgeParseError after one repair",
                "per chunk: " + HARD_FALLBACK),
    requires=("query", "contexts"),
    calls="1 for all chunks (shared with context_precision_llm); scale=binary,decision=direct: 1 per chunk; "
          "0 without contexts",
    params=(SCALE, CHUNK_DECISION, CHUNK_SCORING),
    version="7",
)
