"""R-precision (trec_eval ``Rprec``): precision at rank R, R = number of labelled relevant items.

.. math:: \\mathrm{RPrec} = \\frac{|C_R \\cap G|}{R}, \\quad R = |G|

Edge cases: no labels -> undefined (NaN); R = 0 -> 0; fewer than R retrieved still divides by R.
"""

from __future__ import annotations

from ._batch import FloatArray, RankedList, RelevanceBatch, safe_div
from .base import register_retrieval


def r_precision_single(ranked: RankedList) -> float:
    """Relevant items among the first R, divided by R."""
    if ranked.num_rel != ranked.num_rel:
        return float("nan")
    r = int(ranked.num_rel)
    return sum(ranked.rel[:r]) / r if r else 0.0


def r_precision(batch: RelevanceBatch) -> FloatArray:
    """Vectorised :func:`r_precision_single`."""
    num_rel = batch.num_rel.copy()
    limit = num_rel[batch.seg]
    mask = batch.rel & (batch.rank <= limit)  # NaN compares False
    return safe_div(batch.seg_sum(batch.rel.astype(float), mask), num_rel)

register_retrieval(
    "r_precision",
    r_precision,
    reference=r_precision_single,
    role="retrieval",
    summary="Precision at rank R, R = number of labelled relevant chunks (trec_eval Rprec).",
    formula="RPrec = |C_R ∩ G| / R, R = |G|",
    edge_cases=("no labels -> undefined", "R = 0 -> 0", "fewer than R retrieved: still divided by R"),
    needs_labels=True,
    cutoff="none",
    aliases=("rprec",),
    default_names=("r_precision",),
    trec_name="Rprec",
)
