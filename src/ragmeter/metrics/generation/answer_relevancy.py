"""Answer relevancy: does the answer respond to the question that was asked?

With an embedder (RAGAS's method): the judge back-generates up to 3 questions that the answer
directly responds to (shared with faithfulness's claim decomposition: one call reads query and
answer) and flags a noncommittal answer;

.. math:: \\mathrm{AnswerRelevancy} = \\frac{1}{|Q|} \\sum_{q_i \\in Q} \\cos(e(q), e(q_i))

clipped at 0. Without an embedder, the judge decides whether the answer responds to the
question: with ``scale=binary`` (the default) one yes/no decision, score 1 or 0; with
``scale=graded`` a 0-10 rating, score rating / 10.
Edge cases: a noncommittal answer -> 0 (whatever the similarity); an empty answer -> 0 (no call);
no generated question -> 0, flagged. Raw cosine similarities of sentence embeddings run high even
for loosely related questions (see the semantic_similarity metric's baseline normalisation).
"""

from __future__ import annotations

import numpy as np

from ...types import MetricResult, Sample
from ._judged import (
    SCALE,
    STEPS,
    Graded,
    JudgedEvaluator,
    Responds,
    analyse_answer,
    register_judged,
    shared,
    template,
)


class AnswerRelevancy(JudgedEvaluator):
    """See the module docstring."""

    async def ascore(self, sample: Sample) -> MetricResult:
        """Score one sample."""
        if not (sample.answer or "").strip():
            return self.result(0.0, "empty answer")
        if self.embedder is None:
            return await self._graded(sample)
        questions, noncommittal = await self._questions(sample)
        if noncommittal:
            return self.result(0.0, "noncommittal answer", questions=questions, noncommittal=True)
        if not questions:
            return self.result(0.0, "the judge generated no question from the answer", questions=[],
                               noncommittal=False)
        vectors = await self.embedder.aembed([sample.query, *questions])
        sims = np.clip(vectors[1:] @ vectors[0], 0.0, 1.0)
        return self.result(float(sims.mean()),
                           f"mean similarity of {len(questions)} generated question(s) to the query",
                           questions=[{"question": q, "similarity": float(s)} for q, s in zip(questions, sims,
                                                                                                 strict=True)],
                           noncommittal=False)

    async def _questions(self, sample: Sample) -> tuple[list[str], bool]:
        if self.params["steps"] == "shared":
            a = await analyse_answer(self.judge, sample, "answer_relevancy")
            return [q for q in a.questions if q.strip()][:3], a.noncommittal
        from ._judged import Questions

        t = template("generate_questions")

        async def run() -> tuple[list[str], bool]:
            r = await self.judge.judge(t.messages(answer=sample.answer or ""), Questions, tag="answer_relevancy",
                                       template_version=t.cache_version)
            return [q for q in r.value.questions if q.strip()][:3], r.value.noncommittal

        return await shared(self.judge, t.cache_version, (sample.answer,), run)

    async def _graded(self, sample: Sample) -> MetricResult:
        if self.params["scale"] == "binary":
            t = template("answer_addresses")
            v = await self.judge.judge(t.messages(question=sample.query, answer=sample.answer or ""), Responds,
                                       tag="answer_relevancy", template_version=t.cache_version)
            ok = v.value.responds
            return self.result(1.0 if ok else 0.0,
                               v.value.reason or ("responds to the question" if ok else "does not respond"),
                               responds=ok, method="judge decision (no embedder)")
        t = template("answer_match")
        r = await self.judge.judge(t.messages(question=sample.query, answer=sample.answer or ""), Graded,
                                   tag="answer_relevancy", template_version=t.cache_version)
        return self.result(r.value.rating / 10, r.value.reason or f"judge rating {r.value.rating:g}/10",
                           rating=r.value.rating, method="judge rating (no embedder)")


register_judged(
    "answer_relevancy",
    AnswerRelevancy,
    summary="How directly the answer responds to the query: back-generated questions vs the query "
            "(embeddings), or a judged yes/no (binary) or 0-10 rating (graded) without an embedder.",
    formula="answer_relevancy = mean_i cos(e(query), e(q_i)) over <= 3 generated questions; "
            "without embedder: 1 if the judge says the answer responds else 0 (binary), rating / 10 (graded)",
    edge_cases=("noncommittal answer -> 0", "empty answer -> 0", "no generated question -> 0"),
    requires=("query", "answer"),
    calls="1, shared with faithfulness's claim decomposition (plus 1 embedding batch)",
    params=(STEPS, SCALE),
    version="2",
)
