"""Context recall, text matched: the share of labelled relevant chunks that appear anywhere in the retrieved set.

.. math:: \\mathrm{ContextRecall} = \\frac{|C \\cap G|}{|G|}

This is Recall with no cutoff, with relevance decided by id or by the text-matching rule of
:mod:`ragmeter.metrics.retrieval.relevance` (no LLM). Edge cases: no labels -> undefined (None) with
reason "recall undefined: no labelled relevant chunks"; |G| = 0 -> 0; empty context list -> 0.
"""

from __future__ import annotations

from ._batch import FloatArray, RankedList, RelevanceBatch
from .base import register_retrieval
from .recall import recall, recall_single


def context_recall_single(ranked: RankedList) -> float:
    """Recall over the whole retrieved list."""
    return recall_single(ranked, None)


def context_recall(batch: RelevanceBatch) -> FloatArray:
    """Vectorised :func:`context_recall_single`."""
    return recall(batch, None)


register_retrieval(
    "context_recall",
    context_recall,
    reference=context_recall_single,
    role="retrieval",
    summary="Share of labelled relevant chunks found anywhere in the retrieved contexts (id or text match).",
    formula="ContextRecall = |C ∩ G| / |G|",
    edge_cases=("no labels -> undefined, reason 'recall undefined: no labelled relevant chunks'",
                "|G| = 0 -> 0", "empty context list -> 0"),
    needs_labels=True,
    cutoff="none",
    default_names=("context_recall",),
    undefined_reason="recall undefined: no labelled relevant chunks",
)
