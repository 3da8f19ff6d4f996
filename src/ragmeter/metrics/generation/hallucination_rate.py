"""Hallucination rate: the share of the answer's claims that the context does not support.

.. math:: \\mathrm{HallucinationRate} = \\frac{|\\{c \\in C(a) : \\text{context} \\not\\models c\\}|}{|C(a)|}

Lower is better. It re-uses faithfulness's decomposition and verdicts for the same sample, so
computing both costs no extra judge call. Edge cases: empty answer -> 0.0; no context -> 1.0; no
claim -> 0.0 only when the judge states the answer makes no factual claim, else undefined; a
verdict count other than the claim count is a JudgeParseError (after one repair).
"""

from __future__ import annotations

from ...types import MetricResult, Sample
from ._judged import NO_CLAIM_UNDEFINED, STEPS, JudgedEvaluator, register_judged
from .faithfulness import claim_details, claim_verdicts


class HallucinationRate(JudgedEvaluator):
    """See the module docstring."""

    async def ascore(self, sample: Sample) -> MetricResult:
        """Score one sample."""
        if not (sample.answer or "").strip():
            return self.result(0.0, "empty answer: nothing hallucinated")
        cv = await claim_verdicts(self, sample)
        if cv is None:
            return self.result(1.0, "no retrieved context: every claim is unsupported")
        claims, verdicts, evidence, no_facts = cv
        if not claims:
            if no_facts:
                return self.result(0.0, "the judge states the answer makes no factual claim", claims=[],
                                   no_facts=True)
            return self.result(None, NO_CLAIM_UNDEFINED, claims=[], no_facts=False)
        unsupported = sum(not v for v in verdicts)
        return self.result(unsupported / len(claims), f"{unsupported} of {len(claims)} claims not supported",
                           **claim_details(claims, verdicts, evidence))


register_judged(
    "hallucination_rate",
    HallucinationRate,
    role="answer",
    summary="Share of the answer's claims NOT supported by the context (lower is better); shares "
            "faithfulness's calls.",
    formula="hallucination_rate = unsupported claims / claims",
    edge_cases=("empty answer -> 0.0", "no context -> 1.0",
                "no claim and the judge states the answer makes no factual claim -> 0.0",
                "no claim without that statement -> undefined",
                "a verdict count other than the claim count -> JudgeParseError after one repair"),
    requires=("answer", "contexts"),
    calls="0 extra when faithfulness is evaluated too, else 2",
    params=(STEPS,),
    higher_is_better=False,
    undefined="undefined (None) when the judge lists no claim for a non-empty answer without stating it makes none",
    version="2",
)
