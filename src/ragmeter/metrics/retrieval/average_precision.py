"""Average precision (MAP over queries; trec_eval ``map`` and ``map_cut_k``).

.. math:: \\mathrm{AP@k} = \\frac{1}{|G|} \\sum_{i \\le k} \\Delta\\mathrm{found}_i \\cdot \\mathrm{Precision@}i

For each relevant item at rank i, add (relevant so far) / i; divide by the number of labelled
relevant items |G| (trec_eval's denominator, so relevant items never retrieved count as
precision 0). ``Δfound_i`` is 1 at a relevant rank with id matching; a text chunk that covers
several labelled chunks counts each. Edge cases: no labels -> undefined (NaN); |G| = 0 -> 0;
empty ranking -> 0.
"""

from __future__ import annotations

from typing import cast

import numpy as np

from ._batch import FloatArray, RankedList, RelevanceBatch, safe_div
from .base import register_retrieval


def average_precision_single(ranked: RankedList, k: int | None = None) -> float:
    """AP over the first ``k`` items, divided by ``num_rel``."""
    if ranked.num_rel != ranked.num_rel:
        return float("nan")
    if ranked.num_rel == 0:
        return 0.0
    total, hits = 0.0, 0
    for i, (r, c) in enumerate(zip(ranked.rel, ranked.covered, strict=True), start=1):
        if k is not None and i > k:
            break
        if r:
            hits += 1
            total += c * hits / i
    return total / ranked.num_rel


def average_precision(batch: RelevanceBatch, k: int | None = None) -> FloatArray:
    """Vectorised :func:`average_precision_single`."""
    mask = np.flatnonzero(batch.rel if k is None else batch.rel & (batch.rank <= k))
    # relevant items at or above each relevant rank (cum_rel there): every one of them is in ``mask``, so
    # it is the 1-based position within the query's run of ``mask``
    seg = batch.seg[mask]
    first = np.flatnonzero(np.concatenate(([True], seg[1:] != seg[:-1])))
    hits = np.arange(1, len(mask) + 1) - np.repeat(first, np.diff(np.append(first, len(mask))))
    contrib = batch.covered[mask] * hits / batch.rank[mask]  # only the relevant ranks
    return safe_div(cast(FloatArray, np.bincount(seg, weights=contrib, minlength=batch.n)), batch.num_rel)

register_retrieval(
    "map",
    average_precision,
    reference=average_precision_single,
    role="retrieval",
    summary="Average precision over the relevant ranks, divided by the number of labelled relevant chunks.",
    formula="AP@k = (1/|G|) Σ_{i<=k, rel_i} Precision@i",
    edge_cases=("no labels -> undefined", "|G| = 0 -> 0", "empty context list -> 0",
                "relevant chunks never retrieved contribute 0 (trec_eval's denominator)"),
    needs_labels=True,
    aliases=("average_precision", "ap"),
    default_names=("map",),
    trec_name="map",
)
