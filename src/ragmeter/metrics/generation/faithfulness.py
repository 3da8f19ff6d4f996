"""Faithfulness: the share of the answer's atomic claims that the retrieved context supports.

.. math:: \\mathrm{Faithfulness} = \\frac{|\\{c \\in C(a) : \\text{context} \\models c\\}|}{|C(a)|}

(1) The judge decomposes the answer into atomic, self-contained claims C(a) (shared with
answer_relevancy's question generation: one call reads query and answer); (2) the judge checks
every claim against the joined contexts, yes or no per claim, all claims in one call.

Edge cases: empty answer -> 1.0 (nothing to be unfaithful about, no call); no context -> 0.0 (no
call); a non-empty answer with no claim -> 1.0 only when the judge states explicitly that it
makes no factual claim (``no_facts: yes``), else undefined with the reason; a verdict reply
with another number of verdicts than claims, or a missing field, is unreadable output (one
repair, then a recorded JudgeParseError), never a score.
"""

from __future__ import annotations

from typing import Any

from ...types import MetricResult, Sample
from ._judged import NO_CLAIM_UNDEFINED, STEPS, JudgedEvaluator, decompose, register_judged, verify


async def claim_verdicts(ev: JudgedEvaluator, sample: Sample) -> tuple[list[str], list[bool], list[str],
                                                                         bool] | None:
    """The answer's claims, their verdicts, the evidence each verdict quotes ("" when none) and the
    judge's ``no_facts`` statement; None when the answer is empty or there is no context."""
    if not (sample.answer or "").strip() or not any(t.strip() for t in sample.context_texts):
        return None
    claims, no_facts = await decompose(ev.judge, sample, "faithfulness", ev.params["steps"])
    if not claims:
        return [], [], [], no_facts
    pairs = await verify(ev.judge, sample, claims, "faithfulness")
    return claims, [p[0] for p in pairs], [p[1] for p in pairs], no_facts


def claim_details(claims: list[str], verdicts: list[bool], evidence: list[str]) -> dict[str, Any]:
    """Per-claim verdicts (with the context sentence the judge quoted, if any) for the report."""
    return {"claims": [{"claim": c, "supported": v, "evidence": e}
                       for c, v, e in zip(claims, verdicts, evidence, strict=True)]}


class Faithfulness(JudgedEvaluator):
    """See the module docstring."""

    async def ascore(self, sample: Sample) -> MetricResult:
        """Score one sample."""
        if not (sample.answer or "").strip():
            return self.result(1.0, "empty answer: nothing to be unfaithful about")
        cv = await claim_verdicts(self, sample)
        if cv is None:
            return self.result(0.0, "no retrieved context: no claim can be supported")
        claims, verdicts, evidence, no_facts = cv
        if not claims:
            if no_facts:
                return self.result(1.0, "the judge states the answer makes no factual claim", claims=[],
                                   no_facts=True)
            return self.result(None, NO_CLAIM_UNDEFINED, claims=[], no_facts=False)
        supported = sum(verdicts)
        return self.result(supported / len(claims), f"{supported} of {len(claims)} claims supported by the context",
                           **claim_details(claims, verdicts, evidence))


register_judged(
    "faithfulness",
    Faithfulness,
    role="answer",
    summary="Share of the answer's atomic claims supported by the retrieved context (LLM judge).",
    formula="faithfulness = supported claims / claims",
    edge_cases=("empty answer -> 1.0", "no context -> 0.0",
                "no claim and the judge states the answer makes no factual claim -> 1.0",
                "no claim without that statement -> undefined",
                "a verdict count other than the claim count -> JudgeParseError after one repair"),
    requires=("answer", "contexts"),
    calls="2 (claims shared with answer_relevancy; verdicts shared with hallucination_rate); 0 for empty "
          "answer or no context",
    params=(STEPS,),
    undefined="undefined (None) when the judge lists no claim for a non-empty answer without stating it makes none",
    version="2",
)
