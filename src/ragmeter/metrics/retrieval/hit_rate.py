"""Hit rate (trec_eval ``success``): did any relevant item make the top k?

.. math:: \\mathrm{HitRate@k} = \\mathbb{1}[\\exists\\, i \\le k: rel_i]

Edge cases: an empty ranking scores 0. Labels are not needed: with texts only, a context that
contains the reference answer is relevant.
"""

from __future__ import annotations

import numpy as np

from ._batch import FloatArray, RankedList, RelevanceBatch
from .base import register_retrieval


def hit_rate_single(ranked: RankedList, k: int | None = None) -> float:
    """1.0 when any of the first ``k`` items is relevant, else 0.0."""
    top = ranked.rel if k is None else ranked.rel[:k]
    return 1.0 if any(top) else 0.0


def hit_rate(batch: RelevanceBatch, k: int | None = None) -> FloatArray:
    """Vectorised :func:`hit_rate_single` over every query of ``batch``."""
    mask = batch.rel if k is None else batch.rel & (batch.rank <= k)
    return (np.bincount(batch.seg[mask], minlength=batch.n) > 0).astype(np.float64)

register_retrieval(
    "hit_rate",
    hit_rate,
    reference=hit_rate_single,
    role="retrieval",
    summary="1 when a relevant context is in the top k, else 0 (trec_eval success_k).",
    formula="HitRate@k = 1[exists i <= k: rel_i]",
    edge_cases=("empty context list -> 0", "no labels: a context containing the reference answer is relevant",
                "no labels and no reference -> undefined"),
    needs_labels=False,
    aliases=("hit", "success", "hitrate"),
    default_names=("hit_rate@5",),
    reference_level=0.5,
    trec_name="success",
)
