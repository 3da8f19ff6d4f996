"""Answer grade: the 1-5 quiz grader (factual accuracy relative to the ground truth only).

The judge reasons step by step *before* stating the grade (the reasoning field comes first in the
reply), on the scale 1 irrelevant, 2 slightly relevant, 3 moderately relevant, 4 relevant, 5 highly
relevant (the prompt spells each out). Conflicting statements are penalised; accurate extra
information is fine.

.. math:: \\mathrm{AnswerGrade} = \\frac{g - 1}{4}, \\quad g \\in \\{1, \\dots, 5\\}

**Probability-weighted grade** (``scoring=auto``, the default): where the backend returns
log-probabilities, g is G-Eval's mean over the grade token's alternatives that read as a grade,

.. math:: g = \\frac{\\sum_{k=1}^{5} k \\, P(k)}{\\sum_{k=1}^{5} P(k)}

(:mod:`._verdict`), mapped to (g - 1) / 4 as the hard grade is. The hard grade is in
``details.grade``, the weighted one in ``weighted_grade`` with its ``distribution``;
``details.scoring`` is "probability" or "hard". Falls back to the hard grade without
log-probabilities or when no alternative of the grade token is a grade 1-5; ``scoring=hard`` asks
for none (a different judge cache key).

Edge cases: no reference answer -> undefined; empty answer -> 0.0 (grade 1, no call); a grade
outside 1-5 or not a whole number is unreadable output (one repair, then a recorded JudgeParseError).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from pydantic import BaseModel

from ...registry import LabelCheck
from ...types import MetricResult, Sample
from ._base import JUDGE_VALIDATION, JudgedEvaluator, register_judged
from ._prompting import template
from ._schema import scale
from ._verdict import HARD_FALLBACK, SCORING, asked_logprobs, rating_details, reply_rating


class Grade(BaseModel):
    """Reply of ``answer_grade``: reasoning first, then the grade."""

    reasoning: str
    grade: int = scale(1, 5)


class AnswerGrade(JudgedEvaluator):
    """See the module docstring."""

    async def ascore(self, sample: Sample) -> MetricResult:
        """Score one sample."""
        if not (sample.reference or "").strip():
            return self.result(None, "no reference answer")
        if not (sample.answer or "").strip():
            return self.result(0.0, "empty answer: grade 1", grade=1)
        t = template("answer_grade")
        r = await self.judge.judge(
            t.messages(question=sample.query, ground_truth=sample.reference, answer=sample.answer),
            Grade, tag="answer_grade", template_version=t.cache_version,
            top_logprobs=asked_logprobs(self.params["scoring"]))
        g = r.value.grade
        w = reply_rating(r, "grade", g, (1, 5), self.params["scoring"])
        grade = w.mean if w is not None else float(g)
        how = f" (probability-weighted {grade:.2f})" if w is not None else ""
        return self.result((grade - 1) / 4, f"grade {g}/5{how}: {r.value.reasoning[:300]}",
                           reasoning=r.value.reasoning, **rating_details(g, w, "grade"))


def hard_grade(details: Mapping[str, Any]) -> float | None:
    """The hard value: ``(grade - 1) / 4`` of the judge's hard 1-5 grade, None without one."""
    grade = details.get("grade")
    return (float(grade) - 1) / 4 if isinstance(grade, int | float) else None


register_judged(
    "answer_grade",
    AnswerGrade,
    role="answer",
    summary="The 1-5 quiz grader: factual accuracy vs the ground-truth answer, reasoning before grade.",
    formula="answer_grade = (grade - 1) / 4, grade in 1..5; with log-probabilities grade = sum_k k P(k) / "
            "sum_k P(k) over the grade token's alternatives k in 1..5",
    edge_cases=("no reference -> undefined", "empty answer -> 0.0 (grade 1)",
                "a grade outside 1-5 is unreadable output -> JudgeParseError after one repair", HARD_FALLBACK),
    requires=("answer", "reference"),
    calls="1",
    undefined="undefined (None) when the sample has no reference answer",
    params=(SCORING,),
    version="3",
    check=LabelCheck(label="correct", at_least=4.0, data=JUDGE_VALIDATION, default=True, hard=hard_grade),
    answer_preference=2,
)
