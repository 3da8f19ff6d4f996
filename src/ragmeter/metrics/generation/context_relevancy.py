"""Context relevancy: how useful each retrieved chunk is for the query, rated by the judge.

.. math:: \\mathrm{ContextRelevancy} = \\frac{1}{K} \\sum_{i=1}^{K} \\frac{r_i}{10}, \\quad r_i \\in [0, 10]

One call rates every chunk. Edge cases: empty context list -> 0.0 (no call); a chunk the judge did
not rate counts as 0 and is listed in ``details.unrated``.
"""

from __future__ import annotations

from ...types import MetricResult, Sample
from ._judged import JudgedEvaluator, rate_chunks, register_judged


class ContextRelevancy(JudgedEvaluator):
    """See the module docstring."""

    async def ascore(self, sample: Sample) -> MetricResult:
        """Score one sample."""
        if not sample.contexts:
            return self.result(0.0, "no contexts retrieved")
        ratings, reasons = await rate_chunks(self.judge, sample, "context_relevancy")
        unrated = [i + 1 for i, r in enumerate(ratings) if r is None]
        values = [0.0 if r is None else r / 10 for r in ratings]
        reason = f"mean chunk rating {10 * sum(values) / len(values):.1f}/10 over {len(values)} chunks"
        if unrated:
            reason += f"; {len(unrated)} unrated counted as 0"
        return self.result(sum(values) / len(values), reason, unrated=unrated,
                           chunks=[{"rank": i + 1, "rating": r, "reason": why}
                                   for i, (r, why) in enumerate(zip(ratings, reasons, strict=True))])


register_judged(
    "context_relevancy",
    ContextRelevancy,
    summary="Mean 0-10 judge rating of every retrieved chunk's usefulness for the query, / 10.",
    formula="context_relevancy = mean_i rating_i / 10",
    edge_cases=("empty context list -> 0.0", "an unrated chunk counts as 0 and is flagged"),
    requires=("query", "contexts"),
    calls="1 for all chunks (shared with context_precision_llm); 0 without contexts",
)
