"""Correctness: the judge rates the answer 0-10 against the reference answer.

.. math:: \\mathrm{Correctness} = \\frac{r}{10}, \\quad r \\in [0, 10]

Edge cases: no reference answer -> undefined (None, reason "no reference answer"), never a fake 0;
an empty answer -> 0.0 (no call).
"""

from __future__ import annotations

from ...types import MetricResult, Sample
from ._judged import Graded, JudgedEvaluator, register_judged, template


class Correctness(JudgedEvaluator):
    """See the module docstring."""

    async def ascore(self, sample: Sample) -> MetricResult:
        """Score one sample."""
        if not (sample.reference or "").strip():
            return self.result(None, "no reference answer")
        if not (sample.answer or "").strip():
            return self.result(0.0, "empty answer")
        t = template("correctness")
        r = await self.judge.judge(
            t.messages(question=sample.query, reference=sample.reference, answer=sample.answer),
            Graded, tag="correctness", template_version=t.cache_version)
        return self.result(r.value.rating / 10, r.value.reason or f"judge rating {r.value.rating:g}/10",
                           rating=r.value.rating)


register_judged(
    "correctness",
    Correctness,
    summary="Judge's 0-10 rating of the answer against the reference answer, / 10.",
    formula="correctness = rating / 10",
    edge_cases=("no reference -> undefined (None), reason 'no reference answer'", "empty answer -> 0.0"),
    requires=("answer", "reference"),
    calls="1",
    undefined="undefined (None) when the sample has no reference answer",
)
