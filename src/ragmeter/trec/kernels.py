"""Vectorised kernels for trec_eval's measures beyond the shared retrieval kernels.

Every kernel reads a :class:`~ragmeter.trec.engine.TrecBatch` and returns one value per query
(or one column per cutoff). Notation, per query, following trec_eval 10.0's ``m_*.c``:
``g_i`` the qrels grade at rank ``i`` (NaN: not in the qrels; negative: in the pool but unjudged),
``rel_i`` = ``g_i >= l`` (``l`` the relevance level, ``-l``), ``nonrel_i`` = ``0 <= g_i < l``,
``R`` relevant judgements, ``N`` judged non-relevant judgements (``0 <= grade < l``),
``ret`` documents retrieved, ``rr`` relevant retrieved, ``P(i)`` = relevant in top ``i`` / ``i``.

Sums run in rank order (``np.bincount`` adds sequentially), as trec_eval's loops do, and every
expression keeps trec_eval's operation order, so values agree to the last bit on the same input.
The gain-based measures (G, ndcg with gains, ndcg_rel, Rndcg, rbp) are in :mod:`ragmeter.trec.gains`.
"""

from __future__ import annotations

from typing import cast

import numpy as np
from numpy.typing import NDArray

from .engine import TrecBatch

FloatArray = NDArray[np.float64]
MIN_GEO_MEAN = 0.00001  # trec_eval: values are floored here before the log of gm_map / gm_bpref
INFAP_EPSILON = 0.00001


# ---- helpers -------------------------------------------------------------------------------------------------
def seg_before(tb: TrecBatch, mask: NDArray[np.bool_]) -> NDArray[np.int64]:
    """Per position: how many earlier positions of the same query satisfy ``mask``."""
    b = tb.batch
    c = np.cumsum(mask, dtype=np.int64)
    base = np.concatenate(([0], c))[b.offsets[:-1]]
    return c - mask - np.repeat(base, b.lengths)


def seg_cumsum(values: FloatArray, offsets: NDArray[np.int64]) -> FloatArray:
    """Per position: the running sum of ``values`` within its segment (CSR ``offsets``), added in order.

    Exact sequential sums through a padded ``(segments, depth)`` matrix when that is not much larger
    than the data; otherwise a global running sum minus each segment's base (error ~1e-16 of the total).
    """
    n = len(values)
    if n == 0:
        return np.zeros(0)
    lengths = np.diff(offsets)
    nseg, width = len(lengths), int(lengths.max())
    if nseg * width <= 4 * n + 4096:
        seg = np.repeat(np.arange(nseg), lengths)
        col = np.arange(n) - np.repeat(offsets[:-1], lengths)
        mat = np.zeros((nseg, width))
        mat[seg, col] = values
        np.cumsum(mat, axis=1, out=mat)
        return mat[seg, col]
    c = np.cumsum(values)
    base = np.concatenate(([0.0], c))[offsets[:-1]]
    return c - np.repeat(base, lengths)


def _div(num: FloatArray, den: FloatArray, where: NDArray[np.bool_]) -> FloatArray:
    out = np.zeros(np.broadcast(num, den).shape)
    np.divide(num, den, out=out, where=where)
    return out


def counts(tb: TrecBatch) -> tuple[FloatArray, FloatArray, FloatArray]:
    """``(ret, R, rr)`` per query as floats."""
    return tb.num_ret.astype(np.float64), tb.num_rel, tb.num_rel_ret


def hits_within(tb: TrecBatch, cut: NDArray[np.integer]) -> FloatArray:
    """Relevant documents in the top ``cut[q]`` of each query (``cut`` per query)."""
    b = tb.batch
    pos = np.flatnonzero(b.rel)
    seg = b.seg[pos]
    ok = b.rank[pos] <= cut[seg]
    return np.bincount(seg[ok], minlength=b.n).astype(np.float64)


# ---- single-valued measures ------------------------------------------------------------------------------------
def log_floor(values: FloatArray) -> FloatArray:
    """``log(max(v, 0.00001))``: the per-query value behind gm_map and gm_bpref (summary: exp of the mean)."""
    return np.log(np.maximum(values, MIN_GEO_MEAN))


def infap(tb: TrecBatch) -> FloatArray:
    """infAP (Yilmaz & Aslam): for each relevant document at 0-based position ``j > 0`` with ``r``, ``n``,
    ``u`` judged relevant / judged non-relevant / pooled-unjudged documents above it, add
    ``1/(j+1) + (j/(j+1)) * ((r+n+u)/j) * ((r+ε)/(r+n+2ε))`` (1 at ``j = 0``), ε = 0.00001; divided by R."""
    b, g = tb.batch, tb.grade
    nonrel_b = seg_before(tb, (g >= 0) & (g < tb.rel_level))
    unj_b = seg_before(tb, g < 0)
    pos = np.flatnonzero(b.rel)
    seg = b.seg[pos]
    fj = (b.rank[pos] - 1).astype(np.float64)
    rb = (b.cum_rel[pos] - 1).astype(np.int64)
    nb = nonrel_b[pos]
    ub = unj_b[pos]
    with np.errstate(divide="ignore", invalid="ignore"):
        term = 1.0 / (fj + 1.0) + (fj / (fj + 1.0)) * ((rb + nb + ub) / fj) * (
            (rb + INFAP_EPSILON) / ((rb + nb) + 2 * INFAP_EPSILON))
    term = np.where(fj == 0, 1.0, term)
    total = cast(FloatArray, np.bincount(seg, weights=term, minlength=b.n))  # weights: float64
    return _div(total, b.num_rel, b.num_rel > 0)


def bin_g(tb: TrecBatch) -> FloatArray:
    """binG = (1/R) Σ_{rel_i} 1 / log2(2 + non-relevant documents above ``i``); 0 when none is retrieved."""
    b = tb.batch
    pos = np.flatnonzero(b.rel)
    seg = b.seg[pos]
    i = (b.rank[pos] - 1).astype(np.int64)
    term = 1.0 / np.log2((3 + i - b.cum_rel[pos]).astype(np.float64))
    total = cast(FloatArray, np.bincount(seg, weights=term, minlength=b.n))  # weights: float64
    return _div(total, b.num_rel, b.num_rel > 0)


def set_p(tb: TrecBatch) -> FloatArray:
    """set_P = rr / ret (0 when nothing is retrieved)."""
    ret, _, rr = counts(tb)
    return _div(rr, ret, ret > 0)


def set_relative_p(tb: TrecBatch) -> FloatArray:
    """set_relative_P = rr / min(ret, R) (0 when either is 0)."""
    ret, r, rr = counts(tb)
    return _div(rr, np.minimum(ret, r), (ret > 0) & (r > 0))


def set_recall(tb: TrecBatch) -> FloatArray:
    """set_recall = rr / R (0 when R = 0)."""
    _, r, rr = counts(tb)
    return _div(rr, r, r > 0)


def set_map(tb: TrecBatch) -> FloatArray:
    """set_map = (rr * rr) / (ret * R) (0 when either is 0)."""
    ret, r, rr = counts(tb)
    return _div(rr * rr, ret * r, (ret > 0) & (r > 0))


def set_f(tb: TrecBatch, beta: float) -> FloatArray:
    """set_F = (β + 1) P R / (β P + R) with P = rr/ret, R = rr/R (β as given, not squared); 0 when rr = 0."""
    ret, r, rr = counts(tb)
    ok = rr > 0
    p = _div(rr, ret, ok)
    rc = _div(rr, r, ok)
    return _div((beta + 1.0) * p * rc, beta * p + rc, ok)


def num_nonrel_judged_ret(tb: TrecBatch) -> FloatArray:
    """Retrieved documents judged non-relevant (``0 <= g_i < l``)."""
    b = tb.batch
    return b.seg_sum(np.ones(len(b.nonrel)), b.nonrel)


def utility(tb: TrecBatch, coef: tuple[float, ...], num_docs: int = 0) -> FloatArray:
    """utility = c1·rr + c2·(ret - rr) + c3·(R - rr) + c4·(D + rr - ret - R), D the collection size (``-N``)."""
    ret, r, rr = counts(tb)
    c1, c2, c3, c4 = coef
    return c1 * rr + c2 * (ret - rr) + c3 * (r - rr) + c4 * (num_docs + rr - ret - r)


# ---- measures with cutoffs (one column per cutoff) -------------------------------------------------------------
def relative_p(tb: TrecBatch, cutoffs: tuple[int, ...]) -> FloatArray:
    """relative_P_k = relevant in top k / min(k, R); 0 when R = 0."""
    b = tb.batch
    out = np.zeros((b.n, len(cutoffs)))
    for j, k in enumerate(cutoffs):
        hits = hits_within(tb, np.full(b.n, k))
        out[:, j] = _div(hits, np.minimum(float(k), b.num_rel), b.num_rel > 0)
    return out


def unjudged(tb: TrecBatch, cutoffs: tuple[int, ...]) -> FloatArray:
    """unj_k = documents in the top k that are not judged (absent from the qrels or negative grade) / k."""
    b, g = tb.batch, tb.grade
    unj = ~(g >= 0)
    out = np.zeros((b.n, len(cutoffs)))
    for j, k in enumerate(cutoffs):
        out[:, j] = b.seg_sum(np.ones(len(g)), unj & (b.rank <= k)) / k
    return out


def rprec_mult(tb: TrecBatch, mults: tuple[float, ...]) -> FloatArray:
    """Rprec_mult_m = relevant in top c / c with c = ⌊m·R + 0.9⌋ (nonrelevant fill beyond ``ret``); 0 when c = 0."""
    b = tb.batch
    out = np.zeros((b.n, len(mults)))
    for j, m in enumerate(mults):
        cut = np.floor(m * b.num_rel + 0.9)
        hits = hits_within(tb, cut.astype(np.int64))
        out[:, j] = _div(hits, cut, cut > 0)
    return out


def _interpolated(tb: TrecBatch) -> tuple[FloatArray, NDArray[np.int64]]:
    """IP(k) = max_{i >= rank of the k-th relevant} P(i), for every relevant retrieved document in
    rank order, and the index of each query's first one (a segmented suffix maximum by doubling)."""
    b = tb.batch
    pos = np.flatnonzero(b.rel)
    seg = b.seg[pos]
    v = b.cum_rel[pos] / b.rank[pos].astype(np.float64)
    rr = np.bincount(seg, minlength=b.n)
    start = np.concatenate(([0], np.cumsum(rr)[:-1])).astype(np.int64)
    step, longest = 1, int(rr.max()) if len(rr) else 0
    while step < longest:
        same = seg[step:] == seg[:-step]
        v[:-step] = np.where(same, np.maximum(v[:-step], v[step:]), v[:-step])
        step *= 2
    return v, start


def recall_points(tb: TrecBatch, fractions: tuple[float, ...], *, v9_rounding: bool = False) -> FloatArray:
    """Interpolated precision at recall fractions, trec_eval's iprec_at_recall / 11pt_avg walk.

    Each fraction ``f`` becomes a count of relevant documents ``c = lround(f·R)``; walking the
    fractions from the last to the first, a count reached by the ranking (``1 <= c <= rr``, not above
    the previous one) gets IP(c); a count above ``rr`` at the start is skipped (value 0); any other
    count, and every one after it, gets the final interpolated precision (IP(1), or ``rr / ret`` when
    nothing relevant was retrieved: 0, NaN when nothing was retrieved, as trec_eval prints ``-nan``).
    ``v9_rounding`` uses trec_eval 9's ``c = (long)(f·R + 0.9)`` instead (what pytrec_eval computes).
    """
    b = tb.batch
    ret, r, rr = counts(tb)
    ip, start = _interpolated(tb)
    has = rr >= 1
    first = np.zeros(b.n)
    first[has] = ip[start[has]]
    with np.errstate(divide="ignore", invalid="ignore"):
        final = np.where(has, first, rr / ret)
    out = np.zeros((b.n, len(fractions)))
    skipping = np.ones(b.n, dtype=bool)
    stuck = np.zeros(b.n, dtype=bool)
    kpos = rr.copy()
    for j in range(len(fractions) - 1, -1, -1):
        x = fractions[j] * r
        if v9_rounding:
            cut = np.floor(x + 0.9)
        else:
            cut = np.floor(x)
            cut += (x - cut) >= 0.5  # lround: half away from zero (x >= 0)
        skipping &= cut > rr
        live = ~skipping & ~stuck
        match = live & (cut >= 1) & (cut <= kpos)
        idx = np.flatnonzero(match)
        out[idx, j] = ip[start[idx] + cut[idx].astype(np.int64) - 1]
        kpos = np.where(match, cut, kpos)
        stuck |= live & ~match
        out[stuck, j] = final[stuck]
    return out


def eleven_pt_avg(tb: TrecBatch, fractions: tuple[float, ...], *, v9_rounding: bool = False) -> FloatArray:
    """11pt_avg = mean of the interpolated precisions at the given recall fractions (summed last first)."""
    pts = recall_points(tb, fractions, v9_rounding=v9_rounding)
    total = np.zeros(tb.batch.n)
    for j in range(len(fractions) - 1, -1, -1):
        total = total + pts[:, j]
    return total / len(fractions)


# ---- relstring ---------------------------------------------------------------------------------------------------
def relstring(tb: TrecBatch, length: float) -> NDArray[np.object_]:
    """The grades of the top ``length`` documents as a string: the digit for 0-9, ``>`` above 9, ``-`` for a
    document absent from the qrels, ``.`` for a negative grade (in the pool, unjudged)."""
    b, g = tb.batch, tb.grade
    n = int(length)
    keep = b.rank <= max(n, 0)
    gk = g[keep]
    chars = np.full(len(gk), "-", dtype="<U1")
    neg = gk < 0
    chars[neg] = "."
    ok = gk >= 0
    lv = np.trunc(gk[ok]).astype(np.int64)
    chars[ok] = np.where(lv > 9, ">", np.char.mod("%d", np.minimum(lv, 9)))
    per = np.bincount(b.seg[keep], minlength=b.n)
    ends = np.cumsum(per)
    flat = chars.tolist()
    out = np.empty(b.n, dtype=object)
    start = 0
    for q, end in enumerate(ends.tolist()):
        out[q] = "".join(flat[start:end])
        start = end
    return out
