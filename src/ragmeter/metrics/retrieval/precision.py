"""Precision@k: the share of the top k that is relevant.

.. math:: \\mathrm{Precision@k} = \\frac{|C_k \\cap G|}{k}

The divisor is k even when fewer than k items were retrieved (trec_eval's ``P_k``). Without a
cutoff, the divisor is the number retrieved. Edge cases: empty ranking -> 0.
"""

from __future__ import annotations

import numpy as np

from ._batch import FloatArray, RankedList, RelevanceBatch, safe_div
from .base import register_retrieval


def precision_single(ranked: RankedList, k: int | None = None) -> float:
    """Relevant items among the first ``k``, divided by ``k`` (by the list length if k is None)."""
    top = ranked.rel if k is None else ranked.rel[:k]
    den = len(ranked.rel) if k is None else k
    return sum(top) / den if den else 0.0


def precision(batch: RelevanceBatch, k: int | None = None) -> FloatArray:
    """Vectorised :func:`precision_single`."""
    mask = np.flatnonzero(batch.rel if k is None else batch.rel & (batch.rank <= k))  # the relevant ranks only
    hits = np.bincount(batch.seg[mask], minlength=batch.n).astype(np.float64)
    den = batch.lengths.astype(np.float64) if k is None else np.full(batch.n, float(k))
    return safe_div(hits, den)

register_retrieval(
    "precision",
    precision,
    reference=precision_single,
    role="retrieval",
    summary="Share of the top k that is relevant; divides by k even when fewer were retrieved.",
    formula="Precision@k = |C_k ∩ G| / k  (no cutoff: / number retrieved)",
    edge_cases=("empty context list -> 0", "k larger than the list: still divided by k",
                "no labels: relevance from the reference answer", "no labels and no reference -> undefined"),
    needs_labels=False,
    aliases=("p",),
    default_names=("precision@5",),
    trec_name="P",
)
