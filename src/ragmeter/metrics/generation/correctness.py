"""Correctness: the judge compares the answer with the reference answer.

.. math:: \\mathrm{Correctness} = \\frac{r}{10}, \\quad r \\in [0, 10]

With ``scale=graded`` (the default) the judge rates 0-10 directly. With ``scale=binary`` the
judge makes two yes/no decisions and ragmeter derives the rating: ``same_answer`` (does the
answer give the reference's answer to the question?) and ``conflicts`` (does it state anything
contradicting the reference?); r = 10 when same and no conflict, 5 when same but with a
conflicting statement, 0 otherwise.

**Probability-weighted rating** (``scale=graded``, ``scoring=auto``, the defaults): where the
backend returns log-probabilities, r is G-Eval's mean over the rating token's alternatives,

.. math:: r = \\frac{\\sum_{k=0}^{10} k \\, P(k)}{\\sum_{k=0}^{10} P(k)}

(:mod:`._verdict`: P(k) from the alternatives that read as a rating 0-10; "1" split between 1 and
10 as documented there), and the score is r / 10 as for the hard rating. ``details`` hold the
hard ``rating``, ``weighted_rating``, ``distribution`` and ``scoring`` ("probability" or "hard").
Falls back to the hard rating (``scoring: "hard"``) without log-probabilities, for a rating that is
not a whole number (7.5), or when no alternative is a rating; ``scoring=hard`` asks for none (a
different judge cache key). ``scale=binary`` always uses the hard decisions.

Edge cases: no reference answer -> undefined (None, reason "no reference answer"), never a fake 0;
an empty answer -> 0.0 (no call).
"""

from __future__ import annotations

from pydantic import BaseModel

from ...types import MetricResult, Sample
from ._base import SCALE, JudgedEvaluator, register_judged
from ._prompting import template
from ._schema import Graded, YesNo
from ._verdict import SCORING, asked_logprobs, rating_details, reply_rating


class Agreement(BaseModel):
    """Reply of ``answer_agrees``: two decisions against the reference answer."""

    reason: str
    same_answer: YesNo
    conflicts: YesNo


def agreement_rating(same_answer: bool, conflicts: bool) -> float:
    """The 0-10 rating derived from the two binary decisions (10 / 5 / 0, see the module docstring)."""
    if not same_answer:
        return 0.0
    return 5.0 if conflicts else 10.0


class Correctness(JudgedEvaluator):
    """See the module docstring."""

    async def ascore(self, sample: Sample) -> MetricResult:
        """Score one sample."""
        if not (sample.reference or "").strip():
            return self.result(None, "no reference answer")
        if not (sample.answer or "").strip():
            return self.result(0.0, "empty answer")
        fields = {"question": sample.query, "reference": sample.reference, "answer": sample.answer}
        if self.params["scale"] == "graded":
            t = template("correctness")
            scoring = self.params["scoring"]
            r = await self.judge.judge(t.messages(**fields), Graded, tag="correctness",
                                       template_version=t.cache_version, top_logprobs=asked_logprobs(scoring))
            w = reply_rating(r, "rating", r.value.rating, (0, 10), scoring)
            rating = w.mean if w is not None else r.value.rating
            return self.result(rating / 10, r.value.reason or f"judge rating {r.value.rating:g}/10",
                               **rating_details(r.value.rating, w), scale="graded")
        t = template("answer_agrees")
        a = await self.judge.judge(t.messages(**fields), Agreement, tag="correctness",
                                   template_version=t.cache_version)
        rating = agreement_rating(a.value.same_answer, a.value.conflicts)
        why = a.value.reason or (f"same answer: {'yes' if a.value.same_answer else 'no'}; "
                                 f"conflicts: {'yes' if a.value.conflicts else 'no'}")
        return self.result(rating / 10, why, rating=rating, same_answer=a.value.same_answer,
                           conflicts=a.value.conflicts, scale="binary")


register_judged(
    "correctness",
    Correctness,
    role="answer",
    summary="Agreement of the answer with the reference answer: the judge's 0-10 rating (graded, default) "
            "or two yes/no decisions (binary), / 10.",
    formula="correctness = rating / 10; graded with log-probabilities: rating = sum_k k P(k) / sum_k P(k) over "
            "the rating token's alternatives k in 0..10; binary: rating = 10 if same_answer and not conflicts, 5 if "
            "same_answer and conflicts, else 0",
    edge_cases=("no reference -> undefined (None), reason 'no reference answer'", "empty answer -> 0.0"),
    requires=("answer", "reference"),
    calls="1",
    undefined="undefined (None) when the sample has no reference answer",
    params=(SCALE, SCORING),
    version="3",
)
