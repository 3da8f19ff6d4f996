"""Correctness: the judge compares the answer with the reference answer.

**Default (``scale=binary``, ``decision=direct``, ``scoring=auto``): one one-word yes/no** (prompt
``answer_agrees_direct``, ``max_tokens`` 1): does the answer give the same answer to the question
as the reference answer, stating nothing that contradicts it? The score is
P(yes) / (P(yes) + P(no)) over that token's alternatives where the backend returns
log-probabilities, else 1 or 0 from the word (``same_answer`` and ``p_yes`` in the details). A
first token other than yes/no is read from the two words' probabilities when there are any, else
it is a ``JudgeParseError``. Chosen by measurement (bench/results/README.md, "correctness: the
one-word decision by default"): with Qwen2.5-Coder-1.5B on the 72-row validation set, Spearman's
rho 0.76 against the human 1-5 grade and AUROC 0.912 for ``correct >= 4``, against 0.57 / 0.775 for
the 0-10 rating.

.. math:: \\mathrm{Correctness} = \\frac{r}{10}, \\quad r \\in [0, 10]

With ``scale=graded`` the judge rates 0-10 directly. With ``scale=binary,decision=reasoned`` the
judge makes two yes/no decisions in one JSON reply and ragmeter derives the rating:
``same_answer`` (does the answer give the reference's answer to the question?) and ``conflicts``
(does it state anything contradicting the reference?); r = 10 when same and no conflict, 5 when
same but with a conflicting statement, 0 otherwise.

**Probability-weighted rating** (``scale=graded``, ``scoring=auto``): where the
backend returns log-probabilities, r is G-Eval's mean over the rating token's alternatives,

.. math:: r = \\frac{\\sum_{k=0}^{10} k \\, P(k)}{\\sum_{k=0}^{10} P(k)}

(:mod:`._verdict`: P(k) from the alternatives that read as a rating 0-10; "1" split between 1 and
10 as documented there), and the score is r / 10 as for the hard rating. ``details`` hold the
hard ``rating``, ``weighted_rating``, ``distribution`` and ``scoring`` ("probability" or "hard").
Falls back to the hard rating (``scoring: "hard"``) without log-probabilities, for a rating that is
not a whole number (7.5), or when no alternative is a rating; ``scoring=hard`` asks for none (a
different judge cache key). With ``scale=binary,decision=reasoned`` and log-probabilities each decision is
replaced by its P(yes) / (P(yes) + P(no)) (:func:`._verdict.field_verdict_share`) and r is the
expected rating of two independent decisions, :math:`r = p_s (10 - 5 p_c)` (p_s for
``same_answer``, p_c for ``conflicts``; a decision whose token cannot be located keeps its hard
1/0, ``scoring: "mixed"``); the hard decisions and their rating stay in the details.

Edge cases: no reference answer -> undefined (None, reason "no reference answer"), never a fake 0;
an empty answer -> 0.0 (no call).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace
from typing import Any

from pydantic import BaseModel

from ...registry import LabelCheck
from ...types import MetricResult, Sample
from ._base import DECISION, JUDGE_VALIDATION, SCALE, JudgedEvaluator, check_decision, register_judged
from ._prompting import template
from ._schema import Graded, YesNo
from ._verdict import (
    HARD_FALLBACK,
    SCORING,
    asked_logprobs,
    field_verdict_share,
    rating_details,
    reply_rating,
    scoring_of,
    word_reason,
    word_verdict,
)


class Agreement(BaseModel):
    """Reply of ``answer_agrees``: two decisions against the reference answer."""

    reason: str
    same_answer: YesNo
    conflicts: YesNo


def agreement_rating(same_answer: float, conflicts: float) -> float:
    """The 0-10 rating derived from the two binary decisions, ``same_answer * (10 - 5 * conflicts)``:
    10 / 5 / 0 for hard decisions (1/0), the expected rating for probabilities (module docstring)."""
    return float(same_answer) * (10.0 - 5.0 * float(conflicts))


class Correctness(JudgedEvaluator):
    """See the module docstring."""

    def __init__(self, *args: Any) -> None:
        super().__init__(*args)
        check_decision(self.name, self.params, self.params["scale"] == "binary")

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
        if self.params["decision"] == "direct":
            t = template("answer_agrees_direct")
            d = await word_verdict(self.judge, t.messages(**fields), "correctness", t.cache_version,
                                   self.params["scoring"])
            return self.result(d["support"], f"the judge's one-word decision, same answer: {word_reason(d)}",
                               same_answer=d["verdict"] == "yes", p_yes=d["p_yes"], scoring=d["scoring"],
                               scale="binary", decision="direct")
        return await self._binary(fields)

    async def _binary(self, fields: dict[str, str | None]) -> MetricResult:
        t = template("answer_agrees")
        scoring = self.params["scoring"]
        a = await self.judge.judge(t.messages(**fields), Agreement, tag="correctness",
                                   template_version=t.cache_version, top_logprobs=asked_logprobs(scoring))
        same, conflicts = a.value.same_answer, a.value.conflicts
        p = {f: field_verdict_share(a.logprobs, a.raw, f, hard) if scoring == "auto" else None
             for f, hard in (("same_answer", same), ("conflicts", conflicts))}
        hard = agreement_rating(same, conflicts)
        rating = agreement_rating(*(v if (v := p[f]) is not None else float(h)
                                    for f, h in (("same_answer", same), ("conflicts", conflicts))))
        why = a.value.reason or (f"same answer: {'yes' if same else 'no'}; "
                                 f"conflicts: {'yes' if conflicts else 'no'}")
        known = scoring_of([v is not None for v in p.values()])
        return self.result(rating / 10, why, rating=hard, weighted_rating=rating if known != "hard" else None,
                           same_answer=same, conflicts=conflicts, p_same_answer=p["same_answer"],
                           p_conflicts=p["conflicts"], scoring=known, scale="binary")


def hard_correctness(details: Mapping[str, Any]) -> float | None:
    """The hard value: the 0-10 ``rating`` / 10 (graded, or the reasoned decisions), else the
    one-word decision ``same_answer`` as 1/0; None when the details keep neither."""
    if isinstance(details.get("rating"), int | float):
        return float(details["rating"]) / 10
    if isinstance(details.get("same_answer"), bool):
        return float(details["same_answer"])
    return None


register_judged(
    "correctness",
    Correctness,
    role="answer",
    summary="Agreement of the answer with the reference answer: P(yes) of the judge's one-word 'same answer' "
            "decision (default), two reasoned yes/no decisions (decision=reasoned) or a 0-10 rating (graded), / 10.",
    formula="correctness = P(yes)/(P(yes)+P(no)) of the one-word decision with log-probabilities, else 1/0 "
            "(default); otherwise rating / 10; graded with log-probabilities: rating = sum_k k P(k) / sum_k P(k) over "
            "the rating token's alternatives k in 0..10; binary: rating = 10 if same_answer and not conflicts, 5 if "
            "same_answer and conflicts, else 0; with log-probabilities rating = p_same * (10 - 5 * p_conflicts)",
    edge_cases=("no reference -> undefined (None), reason 'no reference answer'", "empty answer -> 0.0",
                HARD_FALLBACK, "the one-word decision (default): a first token other than yes/no -> the larger "
                "of P(yes), P(no) with log-probabilities, else JudgeParseError"),
    requires=("answer", "reference"),
    calls="1",
    undefined="undefined (None) when the sample has no reference answer",
    params=(replace(SCALE, default="binary", description="binary (default): yes/no decisions (see decision); "
                    "graded: the judge rates 0-10 directly"),
            DECISION,
            SCORING),
    version="5",
    check=LabelCheck(label="correct", at_least=4.0, data=JUDGE_VALIDATION, default=True, hard=hard_correctness),
    answer_preference=1,
)
