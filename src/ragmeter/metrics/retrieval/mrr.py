"""Mean reciprocal rank (trec_eval ``recip_rank``): 1 / rank of the first relevant item.

.. math:: \\mathrm{RR@k} = \\frac{1}{\\min\\{i \\le k : rel_i\\}}, \\quad 0 \\text{ if none}

The mean over queries is taken by the evaluator. Edge cases: no relevant item in the top k, or
an empty ranking -> 0.
"""

from __future__ import annotations

import numpy as np

from ._batch import FloatArray, RankedList, RelevanceBatch
from .base import register_retrieval


def mrr_single(ranked: RankedList, k: int | None = None) -> float:
    """Reciprocal rank of the first relevant item within the first ``k``, 0 if none."""
    for i, r in enumerate(ranked.rel, start=1):
        if k is not None and i > k:
            break
        if r:
            return 1.0 / i
    return 0.0


def mrr(batch: RelevanceBatch, k: int | None = None) -> FloatArray:
    """Vectorised :func:`mrr_single`."""
    mask = np.flatnonzero(batch.rel if k is None else batch.rel & (batch.rank <= k))  # the relevant ranks only
    seg = batch.seg[mask]
    out = np.zeros(batch.n, dtype=np.float64)
    if seg.size:
        first = np.flatnonzero(np.concatenate(([True], seg[1:] != seg[:-1])))
        out[seg[first]] = 1.0 / batch.rank[mask][first]
    return out

register_retrieval(
    "mrr",
    mrr,
    reference=mrr_single,
    role="retrieval",
    summary="Reciprocal rank of the first relevant context (mean over samples = MRR).",
    formula="RR@k = 1 / min{i <= k : rel_i}, 0 when none",
    edge_cases=("no relevant context in the top k -> 0", "empty context list -> 0",
                "no labels and no reference -> undefined"),
    needs_labels=False,
    aliases=("recip_rank", "reciprocal_rank"),
    default_names=("mrr",),
    trec_name="recip_rank",
)
