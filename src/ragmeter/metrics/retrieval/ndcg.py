"""Normalised discounted cumulative gain, graded (trec_eval ``ndcg``, ``ndcg_cut_k``).

.. math::

   \\mathrm{DCG@k} = \\sum_{i \\le k} \\frac{g(r_i)}{\\log_2(i + 1)}, \\qquad
   \\mathrm{nDCG@k} = \\frac{\\mathrm{DCG@k}}{\\mathrm{IDCG@k}}

``gain='exp'`` (default, Burges et al. 2005): g(r) = 2^r - 1. ``gain='linear'``: g(r) = r, what
trec_eval's ``ndcg_cut`` computes. IDCG@k is the DCG of the labelled grades sorted descending
(not of what was retrieved), cut at k. Grades <= 0 give no gain. Fractional grades are used as
they are, never truncated. A query's gains are divided by a common factor where its largest grade
would overflow a float's sums (a grade of 1,024 or more with exp gain): the ratio is unchanged.
Edge cases: IDCG = 0 (no positive labels) -> 0; no labels and no
reference -> undefined; with texts but no labels, a context's grade is its content-word overlap
with the reference answer and IDCG is taken from the retrieved grades sorted descending, plus a
grade of 1 when no retrieved context contains the reference (so a miss is never a perfect score).
"""

from __future__ import annotations

import math
from typing import Any, cast

import numpy as np

from ...registry import Param
from ._batch import FloatArray, RankedList, RelevanceBatch, safe_div
from .base import register_retrieval

GAINS = ("exp", "linear")


#: the largest exponent (gain=exp) and value (gain=linear) a query's gains are scaled down to, so
#: that its DCG and IDCG stay finite sums (2^1024 is beyond a float)
_EXP_ROOM, _LINEAR_ROOM = 512.0, 1e300


def _g(values: Any, gain: str, top: Any = 0.0) -> Any:
    """g(values) divided by a factor that keeps the query's sums finite, given ``top``, the query's
    largest grade: 2^s with s = max(top - 512, 0) for gain=exp, max(top / 1e300, 1) for linear.
    DCG / IDCG is unchanged by the factor, and it is 1 (no change) for every ordinary grade."""
    if gain == "exp":
        shift = np.maximum(np.asarray(top, dtype=np.float64) - _EXP_ROOM, 0.0)
        return np.exp2(values - shift) - np.exp2(-shift)
    return values / np.maximum(np.asarray(top, dtype=np.float64) / _LINEAR_ROOM, 1.0)


def ndcg_single(ranked: RankedList, k: int | None = None, gain: str = "exp") -> float:
    """nDCG of one ranking; see the module docstring for the formula."""
    most = max((*ranked.gain, *ranked.ideal), default=0.0)

    def g(r: float) -> float:
        return float(_g(r, gain, most))

    top = ranked.gain if k is None else ranked.gain[:k]
    ideal = ranked.ideal if k is None else ranked.ideal[:k]
    dcg = sum(g(r) / math.log2(i + 1) for i, r in enumerate(top, start=1) if r > 0)
    idcg = sum(g(r) / math.log2(i + 1) for i, r in enumerate(ideal, start=1) if r > 0)
    return dcg / idcg if idcg > 0 else 0.0


def ndcg(batch: RelevanceBatch, k: int | None = None, gain: str = "exp") -> FloatArray:
    """Vectorised :func:`ndcg_single`."""
    pos = np.flatnonzero(batch.gain > 0)  # the positions with a gain (few): everything below reads only them
    most = np.zeros(batch.n)  # each query's largest grade, which scales its gains (_g); it starts at 0
    np.maximum.at(most, batch.seg[pos], batch.gain[pos])
    np.maximum.at(most, batch.ideal_seg, batch.ideal)
    mask = pos if k is None else pos[batch.rank[pos] <= k]  # discount only what counts
    seg = batch.seg[mask]
    dcg = np.bincount(seg, weights=_g(batch.gain[mask], gain, most[seg]) / np.log2(batch.rank[mask] + 1.0),
                      minlength=batch.n)
    ipos = batch.ideal > 0
    imask = ipos if k is None else ipos & (batch.ideal_rank <= k)
    iseg = batch.ideal_seg[imask]
    ivals = _g(batch.ideal[imask], gain, most[iseg]) / np.log2(batch.ideal_rank[imask] + 1.0)
    idcg = np.bincount(iseg, weights=ivals, minlength=batch.n)
    return safe_div(cast(FloatArray, dcg), cast(FloatArray, idcg))  # bincount with weights: float64

register_retrieval(
    "ndcg",
    ndcg,
    reference=ndcg_single,
    role="retrieval",
    summary="Normalised discounted cumulative gain with graded relevance (exponential or linear gain).",
    formula="nDCG@k = DCG@k / IDCG@k, DCG@k = Σ_{i<=k} g(r_i) / log2(i+1), g(r) = 2^r - 1 (gain=exp) or r "
            "(gain=linear, trec_eval ndcg_cut); IDCG from the labelled grades sorted descending",
    edge_cases=("IDCG = 0 -> 0", "grades <= 0 give no gain", "fractional grades used as they are",
                "no labels: gain = content-word overlap with the reference, IDCG from the retrieved gains "
                "(plus a gain of 1 when no context contains the reference)",
                "no labels and no reference -> undefined", "empty context list -> 0"),
    needs_labels=False,
    params=(Param("gain", str, "exp", "gain function: exp (2^r - 1) or linear (r, as trec_eval)",
                  choices=GAINS),),
    default_names=("ndcg@5",),
    trec_name="ndcg_cut",
    trec_params=(("gain", "linear"),),
)
