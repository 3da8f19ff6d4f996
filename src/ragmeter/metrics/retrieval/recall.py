"""Recall@k: the share of labelled relevant items found in the top k.

.. math:: \\mathrm{Recall@k} = \\frac{|C_k \\cap G|}{|G|}

``G`` is the set of labelled items with grade >= the relevance threshold. A labelled item is
counted once, at the first rank where it is found (duplicated contexts do not count twice).
Edge cases: no labels at all -> undefined (NaN); labels but none relevant (|G| = 0) -> 0, as
trec_eval; empty ranking -> 0.
"""

from __future__ import annotations

from ._batch import FloatArray, RankedList, RelevanceBatch, safe_div
from .base import register_retrieval


def recall_single(ranked: RankedList, k: int | None = None) -> float:
    """``sum(covered[:k]) / num_rel``; NaN without labels, 0 when num_rel is 0."""
    if ranked.num_rel != ranked.num_rel:  # NaN: no labels
        return float("nan")
    if ranked.num_rel == 0:
        return 0.0
    top = ranked.covered if k is None else ranked.covered[:k]
    return sum(top) / ranked.num_rel


def recall(batch: RelevanceBatch, k: int | None = None) -> FloatArray:
    """Vectorised :func:`recall_single`."""
    covers = batch.covered != 0  # sum only the positions that cover something (cheaper, same sum)
    found = batch.seg_sum(batch.covered, covers if k is None else covers & (batch.rank <= k))
    return safe_div(found, batch.num_rel)

register_retrieval(
    "recall",
    recall,
    reference=recall_single,
    role="retrieval",
    summary="Share of the labelled relevant chunks found in the top k.",
    formula="Recall@k = |C_k ∩ G| / |G|",
    edge_cases=("no labels -> undefined", "|G| = 0 -> 0 (as trec_eval)", "empty context list -> 0",
                "a labelled chunk retrieved twice counts once"),
    needs_labels=True,
    default_names=("recall@5",),
    reference_level=0.5,
    trec_name="recall",
)
