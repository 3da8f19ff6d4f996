"""trec_eval's ranking of a run's rows: by query, then score descending, then docid descending.

:func:`rank_rows` is the one ranking both the evaluation (:mod:`.engine`) and the run writer
(:meth:`.io.Run.save`) use, so a saved run lists its rows in the order they are scored.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from numpy.typing import NDArray


def _group_perm(q: NDArray[np.int64]) -> NDArray[np.int64]:
    """A permutation that sorts rows by ``q``, keeping the input order within a query.

    When each query's rows are contiguous (every real run file), only the blocks are reordered.
    """
    n = len(q)
    if n < 2 or bool((q[1:] >= q[:-1]).all()):
        return np.arange(n, dtype=np.int64)
    starts = np.concatenate(([0], np.flatnonzero(q[1:] != q[:-1]) + 1))
    heads = q[starts]
    if len(np.unique(heads)) != len(heads):  # interleaved queries
        return np.argsort(q, kind="stable").astype(np.int64)
    lengths = np.diff(np.concatenate((starts, [n])))
    order = np.argsort(heads, kind="stable")
    new_lengths = lengths[order]
    new_starts = np.concatenate(([0], np.cumsum(new_lengths)[:-1]))
    return np.arange(n, dtype=np.int64) + np.repeat(starts[order] - new_starts, new_lengths)


def _break_ties(perm: NDArray[np.int64], tie: NDArray[np.bool_], docids: NDArray[Any]) -> NDArray[np.int64]:
    """Reorder every run of equal scores (``tie[i]``: positions i and i+1 tie) by docid descending."""
    n = len(perm)
    member = np.zeros(n, dtype=bool)
    member[:-1] |= tie
    member[1:] |= tie
    pos = np.flatnonzero(member)
    starts = np.ones(len(pos), dtype=bool)
    starts[1:] = ~tie[pos[1:] - 1]
    group = np.cumsum(starts)
    _, strrank = np.unique(docids[perm[pos]], return_inverse=True)  # str order == strcmp order
    order = np.lexsort((-strrank.ravel(), group))
    perm = perm.copy()
    perm[pos] = perm[pos][order]
    return perm


def rank_rows(q: NDArray[np.int64], scores: NDArray[np.float64], docids: NDArray[Any]) -> NDArray[np.int64]:
    """Row permutation ordering by query code, then trec_eval's ranking (score desc, docid desc)."""
    n = len(q)
    if n == 0:
        return np.zeros(0, dtype=np.int64)
    identity = n < 2 or bool((q[1:] >= q[:-1]).all())
    perm = np.arange(0) if identity else _group_perm(q)  # identity: rows already grouped in order
    qs = q if identity else q[perm]
    starts = np.concatenate(([0], np.flatnonzero(qs[1:] != qs[:-1]) + 1))
    lengths = np.diff(np.concatenate((starts, [n])))
    nseg, width = len(starts), int(lengths.max())
    if nseg * width == n:  # every query has the same depth (the usual run): a plain 2-d sort
        mat = (scores if identity else scores[perm]).reshape(nseg, width)
        asc = np.argsort(mat, axis=1)
        order = asc[:, ::-1]  # descending; ties are reordered by docid below
        order += starts[:, None]
        flat = order.flatten()  # a copy: ``asc`` is free again, and holds the sorted scores next
        srt = np.take(mat.ravel(), flat, out=asc.view(np.float64).ravel())
        del mat, order
        tie = np.empty(n - 1, dtype=bool)
        np.equal(srt[1:], srt[:-1], out=tie)
        tie[width - 1 :: width] = False  # the last of a query never ties with the next query's first
        del srt
        perm = flat if identity else perm[flat]
    else:
        if nseg * width <= 4 * n + 4096:
            # one row per query, padded with NaN (argsort puts NaN last); scores are never NaN
            mat = np.full((nseg, width), np.nan)
            seg = np.repeat(np.arange(nseg), lengths)
            col = np.arange(n) - np.repeat(starts, lengths)
            mat[seg, col] = -(scores if identity else scores[perm])
            order = np.argsort(mat, axis=1)
            valid = np.arange(width)[None, :] < lengths[:, None]
            flat = (order + starts[:, None])[valid]
            perm = flat if identity else perm[flat]
        else:
            flat = np.lexsort((-(scores if identity else scores[perm]), qs))
            perm = flat if identity else perm[flat]
        s = scores[perm]
        qs = q[perm]
        tie = (s[1:] == s[:-1]) & (qs[1:] == qs[:-1])
    if tie.any():
        perm = _break_ties(perm, tie, docids)
    return perm
