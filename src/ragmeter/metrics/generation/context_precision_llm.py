"""Context precision with judged relevance: RAGAS's rank-weighted precision when no labels exist.

.. math:: \\mathrm{CP@k} = \\frac{\\sum_{i \\le k} \\mathrm{Precision@}i \\cdot rel_i}{\\sum_{i \\le k} rel_i},
   \\qquad rel_i = [r_i \\ge \\tau]

where r_i is the judge's rating of chunk i from the same calls as context_relevancy. By default
(``scale=binary``, ``decision=direct``, ``scoring=auto``) each chunk is asked alone for a one-word
yes/no and r_i = 10 * P(yes) / (P(yes) + P(no)) with log-probabilities (10 / 0 from the word
without), so with τ the ``threshold`` parameter (default 5) a chunk counts as relevant when
P(yes) >= 0.5. Chosen by measurement (bench/results/README.md, "Chunk relevance: one word per chunk by
default"): with Qwen2.5-Coder-1.5B, AUROC 0.901 against the human context precision (= 1 or not, 72
rows) for the one-word decisions, 0.812 for the former default (0-10 ratings of every chunk in one
call, hard). RAGAS makes one reasoned call per chunk; so does this default, with a one-token reply.

The one-call forms (shared with context_relevancy): ``scale=graded`` (0-10 ratings, prompt
``rate_chunks``) and ``scale=binary,decision=reasoned`` (one JSON reply deciding every chunk). For
them ``scoring=hard`` (the ratings the judge wrote) measured far better than the
probability-weighted ratings (0.801 vs 0.465 on 56 rows), because the mass a small judge puts on
"0" pulls a relevant chunk's expected rating under τ; τ = 5 is the rating prompt's anchor "on topic
but does not answer it" (with a 1.5B judge the hard ratings are 0, 5 or 10, and 49 of the 96
human-relevant chunks got a 5; bench/results/README.md "Repeat penalty"). Edge cases: empty context
list -> 0.0; no relevant chunk in the top k -> 0.0; a one-word reply that is neither yes nor no ->
read from the two words' probabilities when there are any, else a JudgeParseError; in the one-call
forms a rating count other than the chunk count is a JudgeParseError (after one repair).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ...contract import PlannedStep
from ...registry import LabelCheck, Param
from ...types import MetricResult, Sample
from ..retrieval import RankedList
from ..retrieval.context_precision import context_precision_single
from ._base import DECISION, JUDGE_VALIDATION, JudgedEvaluator, check_decision, register_judged
from ._chunk_steps import CHUNK_SCALE, CHUNK_SCORING, chunk_steps, rate_chunks
from ._verdict import HARD_FALLBACK, scoring_of


class ContextPrecisionLLM(JudgedEvaluator):
    """See the module docstring."""

    def __init__(self, *args: Any) -> None:
        super().__init__(*args)
        check_decision(self.name, self.params, self.params["scale"] == "binary")

    def planned_calls(self, sample: Sample) -> list[PlannedStep]:
        """The chunk decisions or ratings (:func:`._chunk_steps.chunk_steps`)."""
        return chunk_steps(sample, self.params["scale"], self.params["scoring"], self.params["decision"])

    async def ascore(self, sample: Sample) -> MetricResult:
        """Score one sample."""
        if not sample.contexts:
            return self.result(0.0, "no contexts retrieved")
        chunks = await rate_chunks(self.judge, sample, "context_precision_llm", self.params["scale"],
                                   self.params["scoring"], self.params["decision"])
        ratings = [c.rating for c in chunks]
        tau = self.params["threshold"]
        rel = [r >= tau for r in ratings]
        ranked = RankedList(rel, [float(x) for x in rel], [int(x) for x in rel], float("nan"))
        score = context_precision_single(ranked, self.cutoff)
        ranks = [i + 1 for i, x in enumerate(rel) if x]
        return self.result(score, f"judged relevant at rank(s) {ranks} (rating >= {tau:g})" if ranks
                           else "no chunk judged relevant", relevant_ranks=ranks, ratings=ratings,
                           hard_ratings=[c.hard for c in chunks],
                           scoring=scoring_of([c.scoring == "probability" for c in chunks]))


def chunk_ratings(details: Mapping[str, Any]) -> tuple[list[float], list[float]]:
    """``(ratings, hard ratings)`` per chunk (0-10) from ``details.ratings`` / ``hard_ratings``; an
    unrated chunk counts 0, a chunk without a hard value its rating."""
    used = [float(r or 0.0) for r in details.get("ratings") or []]
    hard = details.get("hard_ratings") or used
    return used, [float(h) if h is not None else u for h, u in zip(hard, used, strict=True)]


register_judged(
    "context_precision_llm",
    ContextPrecisionLLM,
    role="context",
    summary="RAGAS rank-weighted context precision with each chunk's relevance judged (rating >= threshold).",
    formula="CP@k = Σ_{i<=k} Precision@i · rel_i / Σ_{i<=k} rel_i, rel_i = [rating_i >= threshold]",
    edge_cases=("empty context list -> 0.0", "no relevant chunk in the top k -> 0.0",
                "a rating count other than the chunk count -> JudgeParseError after one repair",
                "per chunk: " + HARD_FALLBACK),
    requires=("query", "contexts"),
    calls="1 per chunk (default; shared with context_relevancy); 1 for all chunks with scale=graded or "
          "decision=reasoned",
    params=(Param("threshold", float, 5.0, "rating (0-10) at or above which a chunk is relevant", minimum=0),
            CHUNK_SCALE, DECISION, CHUNK_SCORING),
    version="8",
    cutoff="optional",
    check=LabelCheck(label="context_relevance", unit="chunk", data=JUDGE_VALIDATION, chunk_ratings=chunk_ratings),
)
