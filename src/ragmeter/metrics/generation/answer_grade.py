"""Answer grade: the 1-5 quiz grader (factual accuracy relative to the ground truth only).

The judge reasons step by step *before* stating the grade (the reasoning field comes first in the
reply), on the scale 1 irrelevant, 2 slightly relevant, 3 moderately relevant, 4 relevant, 5 highly
relevant (the prompt spells each out). Conflicting statements are penalised; accurate extra
information is fine.

.. math:: \\mathrm{AnswerGrade} = \\frac{g - 1}{4}, \\quad g \\in \\{1, \\dots, 5\\}

The raw grade is in ``details.grade``. Edge cases: no reference answer -> undefined; empty answer ->
0.0 (grade 1, no call); a grade outside 1-5 or not a whole number is unreadable output (one repair,
then a recorded JudgeParseError).
"""

from __future__ import annotations

from pydantic import BaseModel, Field

from ...types import MetricResult, Sample
from ._base import JudgedEvaluator, register_judged
from ._prompting import template


class Grade(BaseModel):
    """Reply of ``answer_grade``: reasoning first, then the grade."""

    reasoning: str
    grade: int = Field(ge=1, le=5)


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
            Grade, tag="answer_grade", template_version=t.cache_version)
        g = r.value.grade
        return self.result((g - 1) / 4, f"grade {g}/5: {r.value.reasoning[:300]}", grade=g,
                           reasoning=r.value.reasoning)


register_judged(
    "answer_grade",
    AnswerGrade,
    role="answer",
    summary="The 1-5 quiz grader: factual accuracy vs the ground-truth answer, reasoning before grade.",
    formula="answer_grade = (grade - 1) / 4, grade in 1..5",
    edge_cases=("no reference -> undefined", "empty answer -> 0.0 (grade 1)",
                "a grade outside 1-5 is unreadable output -> JudgeParseError after one repair"),
    requires=("answer", "reference"),
    calls="1",
    undefined="undefined (None) when the sample has no reference answer",
)
