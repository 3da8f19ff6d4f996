"""Binary preference (trec_eval ``bpref``; Buckley & Voorhees, SIGIR 2004).

.. math:: \\mathrm{bpref} = \\frac{1}{R} \\sum_{\\text{relevant } r}
          \\Bigl(1 - \\frac{\\min(n_r, R)}{\\min(N, R)}\\Bigr)

``R`` is the number of labelled relevant items, ``N`` the number of labelled *judged non-relevant*
items (grade ``0 <= g < rel_level``), ``n_r`` the number of judged non-relevant items ranked above the
relevant item ``r``; a term is 1 when ``n_r = 0``. Only judgements count: an unjudged item (no label,
or a negative grade: trec_eval's "in the pool, unjudged") is skipped, neither relevant nor non-relevant,
so bpref does not assume that what nobody judged is non-relevant. Put another way: of the preferences
"each relevant item above each of the first R judged non-relevant items", the share the ranking keeps.

As in trec_eval's ``m_bpref.c``; a text chunk that covers several labelled relevant chunks adds one term
for each (as it counts for each in R). Edge cases:

- no labels -> undefined (NaN);
- R = 0 (no labelled relevant item) -> 0;
- N = 0 (nothing judged non-relevant) -> every retrieved relevant item adds 1: bpref = relevant retrieved / R;
- R > N: the denominator is N, so a relevant item ranked below every judged non-relevant item adds 0;
- relevant items never retrieved add 0 (they still count in R); an empty ranking -> 0.
"""

from __future__ import annotations

import itertools

import numpy as np

from ._batch import FloatArray, RankedList, RelevanceBatch, safe_div
from .base import register_retrieval


def bpref_single(ranked: RankedList) -> float:
    """bpref of one ranking: each relevant item scores 1 - min(n, R) / min(N, R) (1 when n = 0), sum / R."""
    if ranked.num_rel != ranked.num_rel:
        return float("nan")
    r = ranked.num_rel
    if r == 0:
        return 0.0
    total, nonrel_above = 0.0, 0
    nonrel = ranked.nonrel or itertools.repeat(False)
    for rel, covered, judged_nonrel in zip(ranked.rel, ranked.covered, nonrel, strict=False):
        if rel:
            term = 1.0 if nonrel_above == 0 else 1.0 - min(nonrel_above, r) / min(ranked.num_nonrel, r)
            total += covered * term
        elif judged_nonrel:
            nonrel_above += 1
    return total / r


def bpref(batch: RelevanceBatch) -> FloatArray:
    """Vectorised :func:`bpref_single`."""
    counts = np.cumsum(batch.nonrel, dtype=np.int64)
    base = np.concatenate(([0], counts))[batch.offsets[:-1]]
    above = counts - batch.nonrel - np.repeat(base, batch.lengths)  # judged non-relevant above each position
    pos = np.flatnonzero(batch.rel)
    seg = batch.seg[pos]
    n = above[pos].astype(np.float64)
    r = batch.num_rel[seg]
    with np.errstate(divide="ignore", invalid="ignore"):
        term = np.where(n > 0, 1.0 - np.minimum(n, r) / np.minimum(batch.num_nonrel[seg], r), 1.0)
    total = np.bincount(seg, weights=term * batch.covered[pos], minlength=batch.n).astype(np.float64)
    return safe_div(total, batch.num_rel)


register_retrieval(
    "bpref",
    bpref,
    reference=bpref_single,
    role="retrieval",
    summary="Binary preference: how often relevant chunks rank above judged non-relevant ones; unjudged "
            "chunks are skipped (trec_eval bpref).",
    formula="bpref = (1/R) Σ_{relevant r} (1 - min(n_r, R) / min(N, R)), n_r judged non-relevant above r, "
            "N judged non-relevant labels (grade in [0, rel_level))",
    edge_cases=("no labels -> undefined", "R = 0 -> 0", "no judged non-relevant label (N = 0) -> relevant "
                "retrieved / R", "R > N: divided by N, so a relevant chunk below all N judged non-relevant adds 0",
                "unlabelled chunks and negative grades are unjudged: skipped",
                "relevant chunks never retrieved add 0", "empty context list -> 0"),
    needs_labels=True,
    cutoff="none",
    trec_name="bpref",
)
