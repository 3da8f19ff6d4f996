"""Hallucination rate: the share of the answer's claims that the context does not support.

.. math:: \\mathrm{HallucinationRate} = \\frac{|\\{c \\in C(a) : \\text{context} \\not\\models c\\}|}{|C(a)|}

With log-probabilities (``scoring=auto``) each claim counts 1 - P(yes)/(P(yes)+P(no)) of its verdict
token instead of 1/0, i.e. 1 - faithfulness; claims the answer does not make are dropped first
(``ungrounded_claims``, see faithfulness). With ``mode=claims`` it is 1 - faithfulness with the
answer checks too (``checks``, see faithfulness: the claims' support times the share of the
answer's numbers and names found in the contexts or the question). Lower is better. It re-uses
faithfulness's decomposition and verdicts for the same sample, so computing both costs no extra
judge call. Edge cases: empty answer -> 0.0; no context -> 1.0; no check-worthy sentence
(greetings, opinions, questions) -> 0.0 with no call, except with ``mode=direct``; no claim -> 0.0
only when the judge states the answer makes no factual claim, else undefined; a verdict count
other than the claim count is a JudgeParseError (after one repair).

``mode=inline``: the same rate from faithfulness(mode=inline)'s one call (claims and verdicts
together, shared).

``mode=direct``: 1 - faithfulness(mode=direct), i.e. P(no) / (P(yes) + P(no)) of the one direct
verdict (shared call), or 1/0 from the hard verdict without log-probabilities.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ...contract import PlannedStep
from ...registry import LabelCheck
from ...types import MetricResult, Sample
from ._base import CLAIM_STEPS, JUDGE_VALIDATION, JudgedEvaluator, register_judged
from ._claim_steps import VERDICTS
from ._sentence_steps import CROSS_CHECK, VETO, WINDOWS
from ._verdict import MODE, SCORING
from .faithfulness import (
    CHECKS,
    SHARED_REASONS,
    SPLIT,
    UNCOVERED,
    SupportOutcome,
    check_veto,
    checks_reason,
    fit_reason,
    hard_score,
    support_outcome,
    support_steps,
)


class HallucinationRate(JudgedEvaluator):
    """See the module docstring."""

    def __init__(self, *args: Any) -> None:
        super().__init__(*args)
        check_veto(self)

    def planned_calls(self, sample: Sample) -> list[PlannedStep]:
        """faithfulness's calls, shared with it (:func:`.faithfulness.support_steps`)."""
        return support_steps(self, sample)

    async def ascore(self, sample: Sample) -> MetricResult:
        """Score one sample: 1 - faithfulness's support (:func:`.faithfulness.support_outcome`)."""
        o = await support_outcome(self, sample)
        return self.result(None if o.support is None else 1.0 - o.support, self.reason(o), **o.details)

    @staticmethod
    def reason(o: SupportOutcome) -> str:
        """The result's reason for outcome ``o``."""
        if o.case == "empty_answer":
            return "empty answer: nothing hallucinated"
        if o.case == "no_context":
            return "no retrieved context: every claim is unsupported"
        if o.case == "direct":
            return f"direct verdict: {o.verdict} ({o.scoring} scoring){fit_reason(o)}"
        if o.case == "claims":
            return (f"{o.n - o.supported} of {o.n} claims not supported ({o.scoring} scoring){checks_reason(o)}"
                    f"{fit_reason(o)}")
        return SHARED_REASONS[o.case] + checks_reason(o)


def hard_rate(details: Mapping[str, Any]) -> float | None:
    """The hard-verdict rate: 1 - faithfulness's :func:`~.faithfulness.hard_score`."""
    faithful = hard_score(details)
    return None if faithful is None else 1.0 - faithful


register_judged(
    "hallucination_rate",
    HallucinationRate,
    role="answer",
    reference_level=0.5,
    summary="Share of the answer's claims NOT supported by the context (lower is better); shares "
            "faithfulness's calls.",
    formula="mode=claims or inline: unsupported claims / claims (mode=claims: 1 - faithfulness with its answer "
            "checks); mode=direct: 1 - P(yes) / (P(yes) + P(no))",
    edge_cases=("empty answer -> 0.0", "no context -> 1.0",
                "no check-worthy sentence (only greetings, headings, opinions, questions) -> 0.0 without a call "
                "(mode=direct excepted)",
                "no claim and the judge states the answer makes no factual claim -> 0.0",
                "no claim without that statement -> undefined",
                "a verdict count other than the claim count -> JudgeParseError after one repair",
                "contexts past the judge's context window (mode=claims, inline, direct) -> as faithfulness: with "
                "mode=claims (and contexts longer than 1,500 characters) each claim judged alone against its "
                "evidence window, with mode=inline and direct "
                "the call reads the context sentences that fit (context_fit), else JudgeContextOverflow"),
    requires=("answer", "contexts"),
    calls="0 extra when faithfulness (same mode) is evaluated too, else 2, 3 when the claims leave out an "
          "answer sentence with a number or a name, or one of its numbers or names (verdicts=word: 1 + one per claim; "
          "mode=inline or direct: 1; mode=sentences: 1 per check-worthy sentence, or 1 with verdicts=list)",
    params=(CLAIM_STEPS, MODE, SCORING, VERDICTS, VETO, CHECKS, WINDOWS, CROSS_CHECK, SPLIT, UNCOVERED),
    higher_is_better=False,
    undefined="undefined (None) when the judge lists no claim for a non-empty answer without stating it makes none",
    version="39",
    check=LabelCheck(label="faithful", data=JUDGE_VALIDATION, default=True, hard=hard_rate),
)
