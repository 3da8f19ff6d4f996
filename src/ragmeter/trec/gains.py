"""trec_eval's gain-based measures: ``ndcg`` with gain parameters, ``G``, ``ndcg_rel``, ``Rndcg``, ``rbp``.

Gains (trec_eval's ``gain_init.c``): a relevance level's gain is the level itself unless a
parameter ``level=gain`` (``-m ndcg.1=3,2=9``) says otherwise; a document outside the qrels has
level -1, a negative grade level -2 (gain 0 unless given). The query's gain list -- the parameter
levels in the order given, then the levels ``0..max grade`` not among them -- is sorted by gain with
trec_eval's comparison (the gain difference truncated to an integer) and glibc's stable merge sort.
The **ideal ranking** walks that list from its end: empty levels are skipped, the walk stops at the
first non-empty level whose gain is <= 0, and each level contributes its judged documents at its gain.
Without gain parameters this is every positive grade in descending order.

``rbp`` normalises the query's gain list to [0, 1] (``(g - min) / (max - min)``) when a gain lies
outside it; trec_eval leaves ``min``/``max`` uninitialised before that loop, ragmeter starts them at
the list's own extremes (which reproduces trec_eval's test outputs).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TypeVar, cast

import numpy as np
from numpy.typing import NDArray

from ..errors import InvalidParameterError
from .engine import TrecBatch
from .kernels import FloatArray, seg_cumsum

Pairs = tuple[tuple[str, float], ...]
T = TypeVar("T")


def valid_int(text: str) -> bool:
    """trec_eval's ``valid_int``: an optional sign then at least one digit, nothing else."""
    body = text[1:] if text[:1] in "+-" else text
    return bool(body) and body.isascii() and body.isdigit()


def merge_sort(items: list[T], cmp: Callable[[T, T], int]) -> list[T]:
    """glibc's ``msort``: top-down merge sort, left half ``n // 2``, ties (``cmp <= 0``) from the left."""
    if len(items) <= 1:
        return list(items)
    n1 = len(items) // 2
    left, right = merge_sort(items[:n1], cmp), merge_sort(items[n1:], cmp)
    out: list[T] = []
    i = j = 0
    while i < len(left) and j < len(right):
        if cmp(left[i], right[j]) <= 0:
            out.append(left[i])
            i += 1
        else:
            out.append(right[j])
            j += 1
    return out + left[i:] + right[j:]


def _gain_list(pairs: Pairs, num_levels: int) -> tuple[list[tuple[int, float]], dict[int, int]]:
    """The sorted gain list for a query whose grades go up to ``num_levels - 1``, and for each level
    ``0..num_levels-1`` the sorted position of the entry that holds its judged documents."""
    entries = [(int(name), float(value)) for name, value in pairs if valid_int(name)]
    given = {lv for lv, _ in entries}
    entries += [(lv, float(lv)) for lv in range(num_levels) if lv not in given]
    owner: dict[int, int] = {}
    for idx, (lv, _) in enumerate(entries):
        owner.setdefault(lv, idx)
    order = merge_sort(list(range(len(entries))), lambda a, b: int(entries[a][1] - entries[b][1]))
    where = {idx: k for k, idx in enumerate(order)}
    return [entries[i] for i in order], {lv: where[owner[lv]] for lv in range(num_levels)}


def _levels(tb: TrecBatch) -> tuple[NDArray[np.int64], NDArray[np.float64], NDArray[np.int64]]:
    """Per judgement: its batch query and grade; per query: the number of levels (max grade + 1, 0 if none)."""
    jg = tb.judged_grades
    jseg = np.repeat(np.arange(tb.batch.n), np.diff(tb.judged_offsets))
    nonneg = jg >= 0
    top = np.full(tb.batch.n, -1.0)
    np.maximum.at(top, jseg[nonneg], jg[nonneg])
    return jseg, jg, (top + 1).astype(np.int64)


def _position_levels(g: FloatArray) -> NDArray[np.int64]:
    """trec_eval's relevance value of a retrieved document: its grade, -1 outside the qrels, -2 negative."""
    lv = np.where(np.isnan(g), -1.0, np.where(g < 0, -2.0, g))
    return lv.astype(np.int64)


def gain_tables(tb: TrecBatch, pairs: Pairs, normalise: bool = False
                ) -> tuple[FloatArray, NDArray[np.int64], FloatArray]:
    """``(gain per retrieved position, ideal offsets, ideal gains)`` under the gain parameters ``pairs``.

    ``normalise`` applies rbp's rescaling of each query's gain list to [0, 1].
    """
    key = ("gains", pairs, normalise)
    if key in tb._cache:
        return tb._cache[key]
    b, g = tb.batch, tb.grade
    int_pairs = tuple((n, v) for n, v in pairs if valid_int(n))
    if not int_pairs:  # default gains: the grade itself; ideal = positive grades, descending
        gain = np.where(g > 0, g, 0.0)
        if normalise:
            jg, jseg = tb.judged_grades, np.repeat(np.arange(b.n), np.diff(tb.judged_offsets))
            top = np.zeros(b.n)
            np.maximum.at(top, jseg[jg >= 0], jg[jg >= 0])
            scale = np.where(top > 1, top, 1.0)[b.seg]
            gain = np.where(g >= 0, np.where(g > 0, g, 0.0) / scale, 0.0)
        out = (gain, b.ideal_offsets, b.ideal)
        tb._cache[key] = out
        return out
    jseg, jg, nlev = _levels(tb)
    if not np.array_equal(jg, np.floor(jg)):
        raise InvalidParameterError(
            f"gain parameters {','.join(f'{n}={v:g}' for n, v in pairs)} map integer relevance levels, "
            "but the qrels hold fractional grades; round the grades or drop the gain parameters")
    gain = np.zeros(len(g))
    plev = _position_levels(g)
    ideal_q: list[NDArray[np.int64]] = []
    ideal_v: list[FloatArray] = []
    for L in np.unique(nlev).tolist():
        entries, slot = _gain_list(int_pairs, L)
        gains = np.array([v for _, v in entries])
        if normalise and len(gains):
            lo, hi = gains.min(), gains.max()
            if lo < 0 or hi > 1:
                gains = (gains - lo) / (hi - lo)
        queries = np.flatnonzero(nlev == L)
        member = np.zeros(b.n, dtype=bool)
        member[queries] = True
        # gain of a retrieved level: the first entry of the sorted list with that level
        levels = [lv for lv, _ in entries]
        lo_lv, hi_lv = -2, max([L - 1, *levels, -2])
        table = np.zeros(hi_lv - lo_lv + 1)
        for k in range(len(entries) - 1, -1, -1):
            if lo_lv <= levels[k] <= hi_lv:
                table[levels[k] - lo_lv] = gains[k]
        pos = np.flatnonzero(member[b.seg])
        pl = plev[pos]
        ok = (pl >= lo_lv) & (pl <= hi_lv)
        gain[pos[ok]] = table[pl[ok] - lo_lv]
        if normalise or not len(entries):
            continue
        # ideal: counts per (query, sorted entry), walked from the highest entry down
        row = np.full(b.n, -1)
        row[queries] = np.arange(len(queries))
        sel = member[jseg] & (jg >= 0)
        cols = np.array([slot[int(x)] for x in range(L)], dtype=np.int64)
        cnt = np.zeros((len(queries), len(entries)), dtype=np.int64)
        np.add.at(cnt, (row[jseg[sel]], cols[jg[sel].astype(np.int64)]), 1)
        cnt, desc = cnt[:, ::-1], gains[::-1]
        stop = (cnt > 0) & (desc <= 0)
        alive = np.logical_and.accumulate(~stop, axis=1) & (desc > 0) & (desc[0] > 0)
        eff = (cnt * alive).ravel()
        ideal_q.append(np.repeat(np.repeat(queries, len(entries)), eff))
        ideal_v.append(np.repeat(np.tile(desc, len(queries)), eff))
    iq = np.concatenate(ideal_q) if ideal_q else np.zeros(0, dtype=np.int64)
    iv = np.concatenate(ideal_v) if ideal_v else np.zeros(0)
    o = np.argsort(iq, kind="stable")
    ioff = np.zeros(b.n + 1, dtype=np.int64)
    np.cumsum(np.bincount(iq, minlength=b.n), out=ioff[1:])
    out = (gain, ioff, iv[o])
    tb._cache[key] = out
    return out


def _at(cum: FloatArray, offsets: NDArray[np.int64], count: NDArray[np.int64]) -> FloatArray:
    """The running sum after ``count[q]`` items of each segment (0 for none)."""
    out = np.zeros(len(count))
    ok = count > 0
    out[ok] = cum[offsets[:-1][ok] + count[ok] - 1]
    return out


def _dcg_parts(tb: TrecBatch, pairs: Pairs) -> tuple[FloatArray, FloatArray, NDArray[np.int64],
                                                     NDArray[np.int64], FloatArray]:
    """(gain, running DCG per position, ideal offsets, ideal count, running ideal DCG)."""
    b = tb.batch
    gain, ioff, ival = gain_tables(tb, pairs)
    dcg = seg_cumsum(gain / np.log2(b.rank + 1.0), b.offsets)
    irank = np.arange(len(ival)) - np.repeat(ioff[:-1], np.diff(ioff)) + 1
    idcg = seg_cumsum(ival / np.log2(irank + 1.0), ioff)
    return gain, dcg, ioff, np.diff(ioff), idcg


def ndcg_gains(tb: TrecBatch, pairs: Pairs) -> FloatArray:
    """ndcg = Σ_i gain_i / log2(i + 1) / the same sum over the ideal ranking (0 when that is 0)."""
    b = tb.batch
    gain, ioff, ival = gain_tables(tb, pairs)
    nz = np.flatnonzero(gain != 0)
    dcg = np.bincount(b.seg[nz], weights=gain[nz] / np.log2(b.rank[nz] + 1.0), minlength=b.n)
    irank = np.arange(len(ival)) - np.repeat(ioff[:-1], np.diff(ioff)) + 1
    iseg = np.repeat(np.arange(b.n), np.diff(ioff))
    idcg = np.bincount(iseg, weights=ival / np.log2(irank + 1.0), minlength=b.n)
    out = np.zeros(b.n)
    np.divide(dcg, idcg, out=out, where=idcg > 0)
    return out


def g_measure(tb: TrecBatch, pairs: Pairs) -> FloatArray:
    """G = Σ_{gain_i != 0} gain_i / log2(2 + C_i - S_i) / Σ ideal gains, with ``S_i`` the gain retrieved
    through rank ``i`` and ``C_i`` the cost through ``i``: max(ideal gain at ``i``, 1) while the ideal
    ranking lasts, 1 after it."""
    b = tb.batch
    gain, ioff, ival = gain_tables(tb, pairs)
    n_ideal = np.diff(ioff)
    t = b.rank - 1
    inside = t < n_ideal[b.seg]
    cost = np.ones(len(gain))
    cost[inside] = np.maximum(ival[ioff[:-1][b.seg[inside]] + t[inside]], 1.0)
    c = seg_cumsum(cost, b.offsets)
    s = seg_cumsum(gain, b.offsets)
    nz = np.flatnonzero(gain != 0)
    term = gain[nz] / np.log2((2 + c[nz]) - s[nz])
    total = np.bincount(b.seg[nz], weights=term, minlength=b.n)
    ideal = np.bincount(np.repeat(np.arange(b.n), n_ideal), weights=ival, minlength=b.n)
    out = np.zeros(b.n)
    np.divide(total, ideal, out=out, where=ideal > 0)
    return out


def ndcg_rel(tb: TrecBatch, pairs: Pairs) -> FloatArray:
    """ndcg_rel: nDCG averaged over the ``n`` ideal (positive-gain) documents: each retrieved positive-gain
    document at rank ``i`` adds DCG@i / IDCG@min(i, n); each of the others adds DCG@ret / IDCG@n; divided by
    ``n`` (0 when the sum is not positive)."""
    b = tb.batch
    gain, dcg, ioff, n_ideal, idcg = _dcg_parts(tb, pairs)
    pos = np.flatnonzero(gain > 0)
    seg = b.seg[pos]
    j = np.minimum(b.rank[pos].astype(np.int64), n_ideal[seg])
    id_at = np.zeros(len(pos))
    okj = j > 0
    id_at[okj] = idcg[ioff[:-1][seg[okj]] + j[okj] - 1]
    with np.errstate(divide="ignore", invalid="ignore"):
        total = cast(FloatArray, np.bincount(seg, weights=dcg[pos] / id_at, minlength=b.n))  # weights: float64
        found = np.bincount(seg, minlength=b.n)
        d_end = _at(dcg, b.offsets, b.lengths)
        id_end = _at(idcg, ioff, n_ideal)
        total = total + ((n_ideal - found).astype(np.float64) * d_end) / id_end
        out = np.where(total > 0, total / n_ideal, 0.0)
    return out


def rndcg(tb: TrecBatch, pairs: Pairs) -> FloatArray:
    """Rndcg: nDCG averaged at the ideal ranking's gain boundaries: at every ``t`` in ``1..n`` where the
    ideal gain changes (and at ``t = n``), DCG@min(t, ret) / IDCG@t; plus DCG@ret / IDCG@n when
    ``n + 1 < ret`` (trec_eval's loop); 0 when R = 0."""
    b = tb.batch
    _, dcg, ioff, n_ideal, idcg = _dcg_parts(tb, pairs)
    ival = gain_tables(tb, pairs)[2]
    iseg = np.repeat(np.arange(b.n), n_ideal)
    irank = np.arange(len(ival)) - np.repeat(ioff[:-1], n_ideal) + 1  # t = irank: boundary before item t+1
    last = irank == n_ideal[iseg]
    change = last | (np.concatenate((ival[1:], [0.0])) != ival)
    pts = np.flatnonzero(change)
    q, t = iseg[pts], irank[pts]
    x = np.minimum(t, b.lengths[q])
    d_at = np.zeros(len(pts))
    okx = x > 0
    d_at[okx] = dcg[b.offsets[:-1][q[okx]] + x[okx] - 1]
    with np.errstate(divide="ignore", invalid="ignore"):
        total = np.bincount(q, weights=d_at / idcg[pts], minlength=b.n)
        count = np.bincount(q, minlength=b.n).astype(np.float64)
        extra = (n_ideal + 1 < b.lengths) & (n_ideal > 0)
        d_end = _at(dcg, b.offsets, b.lengths)
        id_end = _at(idcg, ioff, n_ideal)
        total = total + np.where(extra, d_end / np.where(extra, id_end, 1.0), 0.0)
        count = count + extra
        out = total / count
    return np.where(b.num_rel > 0, out, 0.0)


def _powers(p: float, n: int) -> FloatArray:
    """``p**i`` for ``i = 0..n`` by repeated multiplication, as trec_eval's loop."""
    steps = np.full(n + 1, p)
    steps[0] = 1.0
    return np.cumprod(steps)


#: rbp's persistence when no ``p=`` parameter is given (trec_eval's default).
RBP_P = 0.9


def rbp_p(pairs: Pairs) -> float:
    """The persistence ``p`` of rbp / rbp_resid: the last ``p=...`` parameter, :data:`RBP_P` by default."""
    p = RBP_P
    for name, value in pairs:
        if name == "p":
            p = value
    return p


def rbp(tb: TrecBatch, pairs: Pairs) -> FloatArray:
    """Rank-biased precision: (1 - p) Σ_i gain_i · p^(i-1), gains rescaled to [0, 1] (see module doc)."""
    b = tb.batch
    p = rbp_p(pairs)
    gain = gain_tables(tb, pairs, normalise=True)[0]
    pw = _powers(p, int(b.lengths.max()) if b.n else 0)
    nz = np.flatnonzero(gain != 0)
    total = cast(FloatArray, np.bincount(b.seg[nz], weights=gain[nz] * pw[b.rank[nz] - 1], minlength=b.n))
    return (1.0 - p) * total


def rbp_resid(tb: TrecBatch, pairs: Pairs) -> FloatArray:
    """rbp's residual: p^ret + (1 - p) Σ_{unjudged i} p^(i-1) when a retrieved document is unjudged, else 0."""
    b, g = tb.batch, tb.grade
    p = rbp_p(pairs)
    pw = _powers(p, int(b.lengths.max()) if b.n else 0)
    unj = np.flatnonzero(~(g >= 0))
    total = np.bincount(b.seg[unj], weights=pw[b.rank[unj] - 1], minlength=b.n)
    any_unj = np.bincount(b.seg[unj], minlength=b.n) > 0
    return np.where(any_unj, pw[b.lengths] + (1 - p) * total, 0.0)


def parse_pairs(base: str, text: str) -> Pairs:
    """trec_eval's ``name=value,...`` parameters (``ndcg.1=3,2=9``, ``rbp.p=0.8``)."""
    out = []
    for part in text.split(","):
        name, eq, value = part.partition("=")
        if not eq or not name or "=" in value:
            raise InvalidParameterError(
                f"measure {base}.{text}: expected comma-separated level=gain pairs such as {base}.1=3,2=9, "
                f"got {part!r}")
        try:
            out.append((name, float(value)))
        except ValueError:
            raise InvalidParameterError(f"measure {base}.{text}: expected a number after '=', got {value!r}") from None
    return tuple(out)


__all__: Sequence[str] = ("g_measure", "gain_tables", "ndcg_gains", "ndcg_rel", "parse_pairs", "rbp", "rbp_resid",
                          "rndcg")
