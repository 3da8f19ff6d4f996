"""Faithfulness: the share of the answer's atomic claims that the retrieved context supports.

.. math:: \\mathrm{Faithfulness} = \\frac{|\\{c \\in C(a) : \\text{context} \\models c\\}|}{|C(a)|}

(1) The judge decomposes the answer into atomic, self-contained claims C(a) (shared with
answer_relevancy's question generation: one call reads query and answer); (2) the judge checks
every claim against the joined contexts, yes or no per claim, all claims in one call.

Edge cases: empty answer -> 1.0 (nothing to be unfaithful about, no call); no context -> 0.0 (no
call); an answer in which the judge finds no factual claim -> 1.0; a claim whose verdict is
missing counts as unsupported (conservative) and is listed in ``details.missing_verdicts``.
"""

from __future__ import annotations

from typing import Any

from ...types import MetricResult, Sample
from ._judged import STEPS, JudgedEvaluator, decompose, register_judged, verify


async def claim_verdicts(ev: JudgedEvaluator, sample: Sample) -> tuple[list[str], list[bool | None],
                                                                         list[str]] | None:
    """The answer's claims, their verdicts and the evidence each verdict quotes ("" when none);
    None when the answer is empty or there is no context."""
    if not (sample.answer or "").strip() or not any(t.strip() for t in sample.context_texts):
        return None
    claims = await decompose(ev.judge, sample, "faithfulness", ev.params["steps"])
    if not claims:
        return [], [], []
    pairs = await verify(ev.judge, sample, claims, "faithfulness")
    return claims, [None if p is None else p[0] for p in pairs], ["" if p is None else p[1] for p in pairs]


def claim_details(claims: list[str], verdicts: list[bool | None], evidence: list[str]) -> dict[str, Any]:
    """Per-claim verdicts (with the context sentence the judge quoted, if any) for the report."""
    return {
        "claims": [{"claim": c, "supported": v, "evidence": e}
                   for c, v, e in zip(claims, verdicts, evidence, strict=True)],
        "missing_verdicts": [i + 1 for i, v in enumerate(verdicts) if v is None],
    }


class Faithfulness(JudgedEvaluator):
    """See the module docstring."""

    async def ascore(self, sample: Sample) -> MetricResult:
        """Score one sample."""
        if not (sample.answer or "").strip():
            return self.result(1.0, "empty answer: nothing to be unfaithful about")
        cv = await claim_verdicts(self, sample)
        if cv is None:
            return self.result(0.0, "no retrieved context: no claim can be supported")
        claims, verdicts, evidence = cv
        if not claims:
            return self.result(1.0, "the answer states no factual claim", claims=[], missing_verdicts=[])
        supported = sum(v is True for v in verdicts)
        details = claim_details(claims, verdicts, evidence)
        reason = f"{supported} of {len(claims)} claims supported by the context"
        if details["missing_verdicts"]:
            reason += f"; {len(details['missing_verdicts'])} without a verdict counted as unsupported"
        return self.result(supported / len(claims), reason, **details)


register_judged(
    "faithfulness",
    Faithfulness,
    summary="Share of the answer's atomic claims supported by the retrieved context (LLM judge).",
    formula="faithfulness = supported claims / claims",
    edge_cases=("empty answer -> 1.0", "no context -> 0.0", "no factual claim in the answer -> 1.0",
                "a claim without a verdict counts as unsupported and is flagged"),
    requires=("answer", "contexts"),
    calls="2 (claims shared with answer_relevancy; verdicts shared with hallucination_rate); 0 for empty "
          "answer or no context",
    params=(STEPS,),
)
