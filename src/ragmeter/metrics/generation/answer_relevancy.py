"""Answer relevancy: does the answer respond to the question that was asked?

**Default (``method=judge``, ``scale=binary``, ``decision=direct``): one yes/no decision by the
judge, answered in one word**, prompt ``answer_addresses_direct`` (``max_tokens`` 1, no reason):
does the answer respond to the question (give what was asked, not only talk about its topic)?
The score is P(yes) / (P(yes) + P(no)) over that token's alternatives where the backend returns
log-probabilities (``scoring=auto``, the default; :mod:`._verdict`), else 1 or 0 from the word;
the hard ``responds`` and ``p_yes`` stay in the details. A first token other than yes/no is read
from the two words' probabilities when there are any, else it is a ``JudgeParseError``.

``decision=reasoned`` asks for a JSON reply with a short reason written before the ``responds``
verdict (prompt ``answer_addresses``), scored the same way from the verdict token. With
``scale=graded`` the judge rates it 0-10 (prompt ``answer_match``), score rating / 10,
probability-weighted as G-Eval's :math:`r = \\sum_{k=0}^{10} k\\,P(k) / \\sum_{k=0}^{10} P(k)`
over the rating token's alternatives (the hard ``rating``, ``weighted_rating``, ``distribution``
and ``scoring`` in the details), else the hard rating.

Chosen by measurement (bench/results/README.md, "answer_relevancy: a judged decision by default" and
"answer_relevancy: the one-word decision by default"): with Qwen2.5-Coder-1.5B on the 72-row
validation set, AUROC 0.983 for the one-word decision, 0.931 for the reasoned one (at 4.6x the
time: the reason's tokens and their log-probabilities), 0.666 for the 0-10 rating, and about 0.6
for RAGAS's method below (which cannot see an answer that stays on the question's topic without
answering it: its back-generated questions sit close to the query).

``method=questions`` (RAGAS's method, needs an embedder): the judge back-generates up to 3
questions that the answer directly responds to (shared with faithfulness's claim decomposition:
one call reads query and answer) and flags a noncommittal answer;

.. math:: \\mathrm{AnswerRelevancy} = \\frac{1}{|Q|} \\sum_{q_i \\in Q} \\cos(e(q), e(q_i))

clipped at 0. Edge cases: an empty answer -> 0 (no call); with ``method=questions`` a noncommittal
answer (the judge's explicit ``evasive: yes``) -> 0 (whatever the similarity) and no generated
question for an answer the judge did not call evasive -> undefined, with the reason (the judge
did not do what was asked).

**Baseline normalisation** (``method=questions,normalize=baseline``). Raw cosines of sentence
embeddings run high even for unrelated questions on the same topic, so a raw 0.8 says little.
As for semantic_similarity, the raw score is rescaled against the mean cosine b of negative pairs
drawn from the same batch, the query of one row against the generated questions of the others:

.. math:: b = \\operatorname{mean}_{(x, y) \\in N} \\cos(e(\\mathrm{query}_x), e(\\mathrm{question}_y)),
   \\qquad s = \\mathrm{clip}\\Big(\\frac{\\mathrm{raw} - b}{1 - b}, 0, 1\\Big)

over pairs of generated questions x, y (each with its row's query) whose rows' queries differ
(after trimming and case-folding); a noncommittal answer and an empty answer stay 0, an answer
without questions stays undefined, and none of them enters the baseline. 0 means "no closer to its own query than to a
random query of this dataset". Both numbers are in the details (``cosine``, ``normalized``,
``baseline_mean``, ``baseline_pairs``, ``score_is``). The batch is the runner's chunk (2,048
rows by default); fewer than 5 rows with generated questions, or no negative pair, leave the
normalised score undefined (a single :meth:`evaluate` call is therefore undefined).
"""

from __future__ import annotations

import asyncio
from collections.abc import Mapping, Sequence
from dataclasses import replace
from typing import Any

import numpy as np
from pydantic import AliasChoices, BaseModel, Field

from ...contract import PlannedStep
from ...errors import InvalidParameterError, MissingBackendError
from ...registry import LabelCheck, Param
from ...types import MetricResult, Sample
from ..embedding.semantic_similarity import MIN_BASELINE_ROWS, baseline_mean, normalise, same_text_key
from ._answer_steps import analyse_answer, decompose_step
from ._base import DECISION, JUDGE_VALIDATION, SCALE, STEPS, JudgedEvaluator, check_decision, noted, register_judged
from ._memo import shared
from ._prompting import template
from ._schema import Graded, YesNo
from ._verdict import (
    HARD_FALLBACK,
    SCORING,
    asked_logprobs,
    field_verdict_share,
    rating_details,
    reply_rating,
    word_reason,
    word_verdict,
)


class Questions(BaseModel):
    """Reply of ``generate_questions`` (``evasive`` in the prompt)."""

    questions: list[str]
    noncommittal: YesNo = Field(validation_alias=AliasChoices("evasive", "noncommittal"))


class Responds(BaseModel):
    """Reply of ``answer_addresses``: does the answer respond to the question?"""

    reason: str
    responds: YesNo


class AnswerRelevancy(JudgedEvaluator):
    """See the module docstring."""

    def __init__(self, *args: Any) -> None:
        super().__init__(*args)
        if self.params["normalize"] == "baseline" and self.params["method"] != "questions":
            raise InvalidParameterError(f"metric {self.name!r}: normalize=baseline rescales the embedding cosine of "
                                        "method=questions; use answer_relevancy(method=questions,normalize=baseline)")
        check_decision(self.name, self.params, (self.params["method"], self.params["scale"]) == ("judge", "binary"),
                       "method=judge, scale=binary")
        if self.params["method"] == "questions" and self.embedder is None:
            raise MissingBackendError(f"metric {self.name!r} compares embeddings: pass embedder=... in Python or "
                                      "--embedder SPEC on the command line (e.g. --embedder bert:all-MiniLM-L6-v2)")

    @property
    def whole_chunk(self) -> bool:
        """True with ``normalize=baseline`` (the chunk is the baseline's population)."""
        return bool(self.params["normalize"] == "baseline")

    async def aevaluate(self, sample: Sample) -> MetricResult:
        """Score ``sample`` alone (with ``normalize=baseline`` a single row has no baseline: undefined).
        A judge error propagates, as from every judged metric."""
        if self.params["normalize"] != "baseline":
            return await noted(self.ascore(sample))
        return (await self.aevaluate_batch([sample]))[0]

    async def aevaluate_batch(self, samples: Sequence[Sample]) -> list[MetricResult]:
        """Score every sample (judge calls concurrent); with ``normalize=baseline`` rescale against the
        batch's negative pairs. A sample whose scoring raised gets that error as its result."""

        async def one(i: int, sample: Sample) -> MetricResult:
            try:
                return await noted(self._score(sample, vectors, i))
            except Exception as exc:
                return MetricResult.from_error(self.name, self.version, exc)

        vectors: dict[int, tuple[np.ndarray, np.ndarray]] = {}  # row -> (query, questions), this call only
        results = list(await asyncio.gather(*(one(i, s) for i, s in enumerate(samples))))
        if self.params["normalize"] != "baseline":
            return results
        return self._normalised(samples, results, vectors)

    def _normalised(self, samples: Sequence[Sample], results: list[MetricResult],
                    vectors: dict[int, tuple[np.ndarray, np.ndarray]]) -> list[MetricResult]:
        rows = sorted(vectors)
        queries, questions, groups = [], [], []
        group_of: dict[str, int] = {}
        for i in rows:
            q, qs = vectors[i]
            g = group_of.setdefault(same_text_key(samples[i].query), len(group_of))
            queries += [q] * len(qs)
            questions += list(qs)
            groups += [g] * len(qs)
        b, pairs = (float("nan"), 0)
        if len(rows) >= MIN_BASELINE_ROWS:
            b, pairs = baseline_mean(np.asarray(queries), np.asarray(questions), groups)
        defined = bool(np.isfinite(b)) and b < 1.0
        out = []
        for i, r in enumerate(results):
            if r.error is not None or r.score is None:
                out.append(r)
                continue
            base = {"cosine": r.score, "baseline_mean": b if defined else None, "baseline_pairs": pairs,
                    "score_is": "normalized"}
            if i not in vectors:  # noncommittal / empty: 0 either way
                out.append(r.model_copy(update={"details": {**r.details, **base, "normalized": 0.0}}))
            elif not defined:
                why = (f"undefined: the baseline needs >= {MIN_BASELINE_ROWS} rows with generated questions and "
                       f"a pair of rows with different queries ({len(rows)} rows here)")
                out.append(r.model_copy(update={"score": None, "reason": why,
                                                "details": {**r.details, **base, "normalized": None}}))
            else:
                n = float(normalise(r.score, b))
                out.append(r.model_copy(update={
                    "score": n, "reason": f"{r.reason}: {r.score:.3f}, {n:.3f} against the batch baseline {b:.3f}",
                    "details": {**r.details, **base, "normalized": n}}))
        return out

    def planned_calls(self, sample: Sample) -> list[PlannedStep]:
        """None for an empty answer; the judge's decision or rating; or the generated questions
        (the shared answer analysis with ``steps=shared``)."""
        if not (sample.answer or "").strip():
            return []
        if self.params["method"] == "judge" or self.embedder is None:
            return [PlannedStep(("answer_relevancy", self.name, sample.id, sample.query, sample.answer))]
        if self.params["steps"] == "shared":
            return [decompose_step(sample, "shared")]
        return [PlannedStep(("generate_questions", sample.answer))]

    async def ascore(self, sample: Sample) -> MetricResult:
        """Score one sample (raw cosine; see :meth:`aevaluate_batch` for the normalised score)."""
        return await self._score(sample, {}, -1)

    async def _score(self, sample: Sample, sink: dict[int, tuple[np.ndarray, np.ndarray]], i: int) -> MetricResult:
        if not (sample.answer or "").strip():
            return self.result(0.0, "empty answer")
        if self.params["method"] == "judge" or self.embedder is None:
            return await self._graded(sample)
        questions, noncommittal = await self._questions(sample)
        if noncommittal:
            return self.result(0.0, "noncommittal answer", questions=questions, noncommittal=True)
        if not questions:
            return self.result(None, "undefined: the judge generated no question from a non-empty answer it "
                               "did not call evasive", questions=[], noncommittal=False)
        vectors = np.asarray(await self.embedder.aembed([sample.query, *questions]), dtype=np.float64)
        sims = np.clip(vectors[1:] @ vectors[0], 0.0, 1.0)
        sink[i] = (vectors[0], vectors[1:])
        return self.result(float(sims.mean()),
                           f"mean similarity of {len(questions)} generated question(s) to the query",
                           questions=[{"question": q, "similarity": float(s)} for q, s in zip(questions, sims,
                                                                                                 strict=True)],
                           noncommittal=False)

    async def _questions(self, sample: Sample) -> tuple[list[str], bool]:
        if self.params["steps"] == "shared":
            a = await analyse_answer(self.judge, sample, "answer_relevancy")
            return [q for q in a.questions if q.strip()][:3], a.noncommittal
        t = template("generate_questions")

        async def run() -> tuple[list[str], bool]:
            r = await self.judge.judge(t.messages(answer=sample.answer or ""), Questions, tag="answer_relevancy",
                                       template_version=t.cache_version)
            return [q for q in r.value.questions if q.strip()][:3], r.value.noncommittal

        return await shared(self.judge, t.cache_version, (sample.answer,), run)

    async def _graded(self, sample: Sample) -> MetricResult:
        if self.params["scale"] == "binary" and self.params["decision"] == "direct":
            t = template("answer_addresses_direct")
            d = await word_verdict(self.judge, t.messages(question=sample.query, answer=sample.answer or ""),
                                   "answer_relevancy", t.cache_version, self.params["scoring"])
            return self.result(d["support"], f"the judge's one-word decision: {word_reason(d)}",
                               responds=d["verdict"] == "yes", p_yes=d["p_yes"], scoring=d["scoring"],
                               method="judge decision, direct")
        if self.params["scale"] == "binary":
            t = template("answer_addresses")
            v = await self.judge.judge(t.messages(question=sample.query, answer=sample.answer or ""), Responds,
                                       tag="answer_relevancy", template_version=t.cache_version,
                                       top_logprobs=asked_logprobs(self.params["scoring"]))
            ok = v.value.responds
            p = field_verdict_share(v.logprobs, v.raw, "responds", ok) if self.params["scoring"] == "auto" else None
            return self.result(p if p is not None else float(ok),
                               v.value.reason or ("responds to the question" if ok else "does not respond"),
                               responds=ok, p_yes=p, scoring="probability" if p is not None else "hard",
                               method="judge decision")
        t = template("answer_match")
        scoring = self.params["scoring"]
        r = await self.judge.judge(t.messages(question=sample.query, answer=sample.answer or ""), Graded,
                                   tag="answer_relevancy", template_version=t.cache_version,
                                   top_logprobs=asked_logprobs(scoring))
        w = reply_rating(r, "rating", r.value.rating, (0, 10), scoring)
        rating = w.mean if w is not None else r.value.rating
        return self.result(rating / 10, r.value.reason or f"judge rating {r.value.rating:g}/10",
                           **rating_details(r.value.rating, w), method="judge rating")


METHOD = Param("method", str, "judge", "judge (default): the judge decides whether the answer responds to the "
               "question (scale=binary, the default: yes/no; scale=graded: 0-10); questions: RAGAS's method, "
               "questions back-generated from the answer against the query by embedding cosine (needs an embedder)",
               choices=("judge", "questions"))
#: answer_relevancy's own ``scale``: binary by default (measured: AUROC 0.931 vs 0.666 graded, bench/results/README.md)
AR_SCALE = replace(SCALE, default="binary", description="with method=judge: binary (default), one yes/no decision, "
                   "score P(yes); graded, a 0-10 rating, score rating / 10")


def _uses_embedder(params: dict[str, Any]) -> bool:
    """Whether answer_relevancy with these (non-default) parameters reads embeddings."""
    return params.get("method") == "questions"


def hard_relevancy(details: Mapping[str, Any]) -> float | None:
    """The hard value: the 0-10 ``rating`` / 10 (scale=graded), else the one-word decision
    ``responds`` as 1/0; None when the details keep neither (an embedder score)."""
    if isinstance(details.get("rating"), int | float):
        return float(details["rating"]) / 10
    if isinstance(details.get("responds"), bool):
        return float(details["responds"])
    return None


register_judged(
    "answer_relevancy",
    AnswerRelevancy,
    role="answer",
    summary="Does the answer respond to the query: the judge's one-word yes/no decision (default, P(yes)), the "
            "same decision after a short reason (decision=reasoned), a judged 0-10 rating (scale=graded), or RAGAS's "
            "back-generated questions vs the query (method=questions, embeddings).",
    formula="answer_relevancy = P(yes)/(P(yes)+P(no)) of the judge's one-word yes/no (default; decision=reasoned: "
            "of its 'responds' verdict) with log-probabilities, else 1 if it says the answer responds, else 0; "
            "scale=graded: rating / 10, rating = "
            "sum_k k P(k) / sum_k P(k) over the rating token's alternatives; method=questions: "
            "mean_i cos(e(query), e(q_i)) over <= 3 generated questions",
    edge_cases=("empty answer -> 0 (no call)", HARD_FALLBACK,
                "the one-word decision (default): a first token other than yes/no -> the larger of P(yes), "
                "P(no) with log-probabilities, else JudgeParseError",
                "method=questions: noncommittal answer -> 0; no generated question (answer not called evasive) "
                "-> undefined"),
    requires=("query", "answer"),
    calls="1 (method=questions: 1 shared with faithfulness's claim decomposition, plus 1 embedding batch)",
    params=(METHOD, AR_SCALE, DECISION, STEPS,
            Param("normalize", str, "none", "none: raw mean cosine; baseline: rescaled against negative pairs of "
                  "the batch (method=questions only)", choices=("none", "baseline")),
            SCORING),
    version="7",
    undefined="method=questions only: undefined (None) when the judge generates no question for an answer it did "
              "not call evasive; with normalize=baseline also when the batch has too few rows for a baseline",
    extra={"uses_embedder": _uses_embedder},
    check=LabelCheck(label="relevant", data=JUDGE_VALIDATION, default=True, hard=hard_relevancy),
    answer_preference=3,
)
