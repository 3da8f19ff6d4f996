"""The LLM-judged metrics at a glance: where each job lives, and the shared steps.

Every judge call goes through :class:`ragmeter.judges.Judge` (cache, retries, parsing, cost).
The machinery is split by job:

=======================  =======================================================================
module                   job
=======================  =======================================================================
``_prompting``           prompt template files (``prompts/*.prompt``), reply skeletons
``_schema``              reply-model building blocks: ``YesNo``, ``sized``, ``align``, ``Graded``
``_memo``                the single-flight memo that shares a step between metrics
``_answer_steps``        ``analyse_answer`` / ``decompose`` with their reply models
``_claim_steps``         ``verify`` (claim verdicts) with its reply model
``_chunk_steps``         ``rate_chunks`` (graded ratings or binary relevance) with its models
``_verdict``             probability-weighted verdicts and ratings, ``faithfulness(mode=direct)``
``_checkworthy``         which answer sentences are claims to check (no model)
``_evidence``            evidence windows: the context sentences most related to a claim (no model)
``_sentence_steps``      ``faithfulness(mode=sentences)``: one word per claim, offline veto
``_base``                ``JudgedEvaluator`` and ``register_judged``
one module per metric    the metric, and the reply models of prompts only it uses
=======================  =======================================================================

Steps that several metrics need on the same sample are computed once per run and shared
(single-flight memo keyed by judge, event loop, step and content):

============================  =========================  ==========================================
step                          reads                      used by
============================  =========================  ==========================================
``decompose_answer``          query, answer              faithfulness, hallucination_rate,
                                                         faithfulness_nli (claims; the default)
``analyse_answer``            query, answer              answer_relevancy(method=questions)
                                                         (questions, noncommittal), and the claims
                                                         of the three above with ``steps=shared``
``verify_claims``             claims, contexts           faithfulness, hallucination_rate
(``verify_claims_bare`` with                             (one verdict per claim)
verdicts=bare)
``rate_chunks``               query, contexts            context_relevancy, context_precision_llm
(``chunk_relevance`` if                                  (0-10 per chunk; yes/no with scale=binary)
binary)
============================  =========================  ==========================================

So the canonical set ``faithfulness, answer_relevancy, context_relevancy, context_recall`` costs 4
judge calls per sample (context_recall is text matched; answer_relevancy's default yes/no decision
is its own call); with RAGAS's ``answer_relevancy(method=questions)`` 4 as well, or 3 with
``faithfulness(steps=shared)``, whose claims then come from the same analysis call. The claim
call of its own is faithfulness's default because the analysis writes questions nobody else
reads when answer_relevancy uses its default decision (method log section 25: 39% less time on
the design short answers, AUROC not lower). ``steps=separate`` on
answer_relevancy(method=questions) uses its own question prompt.

``scale=graded`` (the default of context_relevancy, context_precision_llm and correctness) asks
the judge for the 0-10 rating itself; ``scale=binary`` asks for yes/no decisions and derives the
rating. Neither separated good from bad with a 0.5B judge (bench/results/README.md), so the default is
the specified 0-10 rating; answer_relevancy's default is ``scale=binary``, measured far better
than its 0-10 rating with a 1.5B judge (AUROC 0.931 vs 0.666, bench/results/README.md).

Reply models are strict about content (:mod:`._schema`); an unreadable reply is a recorded
:class:`~ragmeter.errors.JudgeParseError` on the sample after one repair, never a score.

This module re-exports the names above for code written against the former single module.
"""

from __future__ import annotations

from ._answer_steps import NO_CLAIM_UNDEFINED, AnswerAnalysis, Claims, analyse_answer, decompose
from ._base import SCALE, STEPS, JudgedEvaluator, register_judged
from ._chunk_steps import ChunkVerdict, ChunkVerdicts, Rating, Ratings, rate_chunks
from ._claim_steps import EVIDENCE_SLOT, Verdict, Verdicts, verify
from ._memo import shared
from ._prompting import PROMPTS, joined_context, numbered, reply_shape, template
from ._schema import Graded, YesNo, align, sized

__all__ = [
    "EVIDENCE_SLOT", "NO_CLAIM_UNDEFINED", "PROMPTS", "SCALE", "STEPS", "AnswerAnalysis", "ChunkVerdict",
    "ChunkVerdicts", "Claims", "Graded", "JudgedEvaluator", "Rating", "Ratings", "Verdict", "Verdicts", "YesNo",
    "align", "analyse_answer", "decompose", "joined_context", "numbered", "rate_chunks", "register_judged",
    "reply_shape", "shared", "sized", "template", "verify",
]
