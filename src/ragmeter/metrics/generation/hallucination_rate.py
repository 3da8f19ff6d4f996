"""Hallucination rate: the share of the answer's claims that the context does not support.

.. math:: \\mathrm{HallucinationRate} = \\frac{|\\{c \\in C(a) : \\text{context} \\not\\models c\\}|}{|C(a)|}

With log-probabilities (``scoring=auto``) each claim counts 1 - P(yes)/(P(yes)+P(no)) of its verdict
token instead of 1/0, i.e. 1 - faithfulness; claims the answer does not make are dropped first
(``ungrounded_claims``, see faithfulness). Lower is better. It re-uses faithfulness's decomposition
and verdicts for the same sample, so
computing both costs no extra judge call. Edge cases: empty answer -> 0.0; no context -> 1.0; no
claim -> 0.0 only when the judge states the answer makes no factual claim, else undefined; a
verdict count other than the claim count is a JudgeParseError (after one repair).

``mode=direct``: 1 - faithfulness(mode=direct), i.e. P(no) / (P(yes) + P(no)) of the one direct
verdict (shared call), or 1/0 from the hard verdict without log-probabilities.
"""

from __future__ import annotations

from ...types import MetricResult, Sample
from ._judged import NO_CLAIM_UNDEFINED, STEPS, JudgedEvaluator, register_judged
from ._verdict import MODE, SCORING, direct_verdict
from .faithfulness import ALL_UNGROUNDED, claim_verdicts


class HallucinationRate(JudgedEvaluator):
    """See the module docstring."""

    async def ascore(self, sample: Sample) -> MetricResult:
        """Score one sample."""
        if not (sample.answer or "").strip():
            return self.result(0.0, "empty answer: nothing hallucinated")
        if not any(t.strip() for t in sample.context_texts):
            return self.result(1.0, "no retrieved context: every claim is unsupported")
        if self.params["mode"] == "direct":
            d = await direct_verdict(self.judge, sample, "faithfulness", self.params["scoring"])
            return self.result(1.0 - d["support"], f"direct verdict: {d['verdict']} ({d['scoring']} scoring)", **d)
        cv = await claim_verdicts(self, sample)
        if cv is None:
            return self.result(1.0, "no retrieved context: every claim is unsupported")
        if not cv.claims:
            if cv.ungrounded:
                return self.result(None, ALL_UNGROUNDED, **cv.details())
            if cv.no_facts:
                return self.result(0.0, "the judge states the answer makes no factual claim", claims=[],
                                   no_facts=True)
            return self.result(None, NO_CLAIM_UNDEFINED, claims=[], no_facts=False)
        unsupported, n = sum(not v for v in cv.verdicts), len(cv.claims)
        score = 1.0 - sum(cv.supports()) / n
        return self.result(score, f"{unsupported} of {n} claims not supported ({cv.scoring} scoring)",
                           **cv.details())


register_judged(
    "hallucination_rate",
    HallucinationRate,
    role="answer",
    summary="Share of the answer's claims NOT supported by the context (lower is better); shares "
            "faithfulness's calls.",
    formula="mode=claims: unsupported claims / claims; mode=direct: 1 - P(yes) / (P(yes) + P(no))",
    edge_cases=("empty answer -> 0.0", "no context -> 1.0",
                "no claim and the judge states the answer makes no factual claim -> 0.0",
                "no claim without that statement -> undefined",
                "a verdict count other than the claim count -> JudgeParseError after one repair"),
    requires=("answer", "contexts"),
    calls="0 extra when faithfulness (same mode) is evaluated too, else 2 (mode=direct: 1)",
    params=(STEPS, MODE, SCORING),
    higher_is_better=False,
    undefined="undefined (None) when the judge lists no claim for a non-empty answer without stating it makes none",
    version="3",
)
