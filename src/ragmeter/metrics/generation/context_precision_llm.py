"""Context precision with judged relevance: RAGAS's rank-weighted precision when no labels exist.

.. math:: \\mathrm{CP@k} = \\frac{\\sum_{i \\le k} \\mathrm{Precision@}i \\cdot rel_i}{\\sum_{i \\le k} rel_i},
   \\qquad rel_i = [r_i \\ge \\tau]

where r_i is the judge's rating of chunk i, from the same single call as context_relevancy (0-10
with ``scale=graded``, the default, or from a yes/no decision with ``scale=binary``: 10 / 0). By
default (``scoring=hard``) r_i is the rating the judge wrote: with a 1.5B judge the
probability-weighted rating ranked rows far worse here (AUROC 0.465 vs 0.801 against the human
context precision on 56 rows, docs/generation.md), because the mass a small judge puts on "0"
pulls a relevant chunk's expected rating under τ. With ``scoring=auto`` and log-probabilities
from the backend, r_i is 10 * P(yes) / (P(yes) + P(no)) (binary) or
sum_k k P_i(k) / sum_k P_i(k) over the rating token's alternatives k in 0..10 (graded; see
context_relevancy), and
τ the ``threshold`` parameter (default 5, the rating prompt's anchor "on topic but does not answer
it": a chunk the judge puts on topic counts as relevant. With a 1.5B judge the hard ratings are
0, 5 or 10 and 49 of the 96 human-relevant chunks of the 72-row set got a 5 (25 with the
server's repeat penalty off), so τ = 6 would drop them; docs/generation.md "Repeat
penalty"). RAGAS makes
one call per chunk for this; ragmeter makes one for all, or with ``scale=binary,decision=direct``
one one-word yes/no call per chunk, each chunk judged alone (shared with context_relevancy).
Edge cases: empty context list -> 0.0; no relevant chunk in the top k -> 0.0; a rating count
other than the chunk count is a JudgeParseError (after one repair).
"""

from __future__ import annotations

from typing import Any

from ...registry import Param
from ...types import MetricResult, Sample
from ..retrieval._batch import RankedList
from ..retrieval.context_precision import context_precision_single
from ._base import SCALE, JudgedEvaluator, register_judged
from ._chunk_steps import CHUNK_DECISION, CHUNK_SCORING, check_decision, rate_chunks
from ._verdict import HARD_FALLBACK, scoring_of


class ContextPrecisionLLM(JudgedEvaluator):
    """See the module docstring."""

    def __init__(self, *args: Any) -> None:
        super().__init__(*args)
        check_decision(self.name, self.params)

    async def ascore(self, sample: Sample) -> MetricResult:
        """Score one sample."""
        if not sample.contexts:
            return self.result(0.0, "no contexts retrieved")
        chunks = await rate_chunks(self.judge, sample, "context_precision_llm", self.params["scale"],
                                   self.params["scoring"], self.params["decision"])
        ratings = [c.rating for c in chunks]
        tau = self.params["threshold"]
        rel = [r >= tau for r in ratings]
        ranked = RankedList(rel, [float(x) for x in rel], [int(x) for x in rel], float("nan"))
        score = context_precision_single(ranked, self.cutoff)
        ranks = [i + 1 for i, x in enumerate(rel) if x]
        return self.result(score, f"judged relevant at rank(s) {ranks} (rating >= {tau:g})" if ranks
                           else "no chunk judged relevant", relevant_ranks=ranks, ratings=ratings,
                           hard_ratings=[c.hard for c in chunks],
                           scoring=scoring_of([c.scoring == "probability" for c in chunks]))


register_judged(
    "context_precision_llm",
    ContextPrecisionLLM,
    role="context",
    summary="RAGAS rank-weighted context precision with each chunk's relevance judged (rating >= threshold).",
    formula="CP@k = Σ_{i<=k} Precision@i · rel_i / Σ_{i<=k} rel_i, rel_i = [rating_i >= threshold]",
    edge_cases=("empty context list -> 0.0", "no relevant chunk in the top k -> 0.0",
                "a rating count other than the chunk count -> JudgeParseError after one repair",
                "per chunk: " + HARD_FALLBACK),
    requires=("query", "contexts"),
    calls="1 for all chunks, shared with context_relevancy (RAGAS: 1 per chunk); scale=binary,decision=direct: "
          "1 per chunk",
    params=(Param("threshold", float, 5.0, "rating (0-10) at or above which a chunk is relevant", minimum=0),
            SCALE, CHUNK_DECISION, CHUNK_SCORING),
    version="7",
    cutoff="optional",
)
