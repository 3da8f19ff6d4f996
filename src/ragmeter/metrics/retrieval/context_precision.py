"""Context precision, RAGAS style: precision at every relevant rank, averaged over relevant ranks.

.. math:: \\mathrm{CP@k} = \\frac{\\sum_{i \\le k} \\mathrm{Precision@}i \\cdot rel_i}{\\sum_{i \\le k} rel_i}

Unlike average precision, the denominator is the number of relevant items *retrieved* in the top
k, so it needs no labels (a context that contains the reference answer is relevant). Edge cases:
no relevant item in the top k, or an empty ranking -> 0.
"""

from __future__ import annotations

from ._batch import FloatArray, RankedList, RelevanceBatch, safe_div
from .base import register_retrieval


def context_precision_single(ranked: RankedList, k: int | None = None) -> float:
    """Mean of Precision@i over the relevant ranks i <= k; 0 when none is relevant."""
    hits, total = 0, 0.0
    for i, r in enumerate(ranked.rel, start=1):
        if k is not None and i > k:
            break
        if r:
            hits += 1
            total += hits / i
    return total / hits if hits else 0.0


def context_precision(batch: RelevanceBatch, k: int | None = None) -> FloatArray:
    """Vectorised :func:`context_precision_single`."""
    mask = batch.rel if k is None else batch.rel & (batch.rank <= k)
    num = batch.seg_sum(batch.cum_rel / batch.rank, mask)
    den = batch.seg_sum(batch.rel.astype(float), mask)
    return safe_div(num, den)

register_retrieval(
    "context_precision",
    context_precision,
    reference=context_precision_single,
    role="retrieval",
    summary="RAGAS-style rank-weighted context precision: mean Precision@i over the relevant ranks i <= k.",
    formula="CP@k = Σ_{i<=k} Precision@i · rel_i / Σ_{i<=k} rel_i",
    edge_cases=("no relevant context in the top k -> 0", "empty context list -> 0",
                "no labels: relevance from the reference answer", "no labels and no reference -> undefined"),
    needs_labels=False,
    default_names=("context_precision",),
)
