"""Ranked relevance: the one structure every retrieval metric reads.

A query's ranking is reduced to three numbers per retrieved position (in rank order)
and two per query:

* ``rel[i]``     -- binary relevance of the item at rank ``i + 1`` (grade >= the relevance threshold);
* ``gain[i]``    -- graded relevance of that item (used by nDCG), 0 for non-relevant or unjudged;
* ``covered[i]`` -- how many labelled relevant items are *first* found at this rank (0 or 1 when
  relevance is decided by id; a text chunk can cover several labelled chunks);
* ``num_rel``    -- number of labelled relevant items (the recall / AP denominator), NaN when
  there are no labels at all (metrics that need labels are then undefined);
* ``ideal``      -- the labelled grades, sorted descending (for IDCG);
* ``nonrel[i]``  -- the item at rank ``i + 1`` is *judged non-relevant*: labelled with a grade ``g``,
  ``0 <= g < rel_level``, and not relevant (trec_eval's judged non-relevant document). An item that is
  neither relevant nor judged non-relevant is *unjudged*: no label, or only a negative grade (trec_eval's
  "in the pool, unjudged"). Metrics such as bpref skip unjudged items;
* ``num_nonrel`` -- number of judged non-relevant labels (``0 <= g < rel_level``; bpref's N), NaN when
  there are no labels at all.

:class:`RankedList` holds one query in plain Python (what the readable per-query functions
take); :class:`RelevanceBatch` holds many in flat CSR arrays (what the vectorised batch
functions take). Both the sample evaluator and the TREC engine build a batch, so one set
of kernels computes every number ragmeter reports.
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import cast

import numpy as np
from numpy.typing import NDArray

FloatArray = NDArray[np.float64]


@dataclass(frozen=True)
class RankedList:
    """One query's ranked relevance (see module docstring)."""

    rel: Sequence[bool]
    gain: Sequence[float]
    covered: Sequence[int]
    num_rel: float  # NaN when the query has no labels
    ideal: Sequence[float] = field(default_factory=tuple)
    nonrel: Sequence[bool] = field(default_factory=tuple)  # empty: no item judged non-relevant
    num_nonrel: float = float("nan")  # NaN when the query has no labels

    @classmethod
    def from_grades(
        cls, retrieved: Sequence[float], labelled: Sequence[float] | None, rel_level: float = 1.0
    ) -> RankedList:
        """Build from per-rank grades and the labelled grades (None = no labels).

        Each retrieved grade >= ``rel_level`` is relevant and covers one labelled item; a retrieved
        grade ``0 <= g < rel_level`` is judged non-relevant; NaN marks an unlabelled (unjudged) item.
        """
        rel = [g >= rel_level for g in retrieved]
        gain = [g if g > 0 else 0.0 for g in retrieved]
        nonrel = [0 <= g < rel_level for g in retrieved]
        if labelled is None:
            return cls(rel, gain, [int(r) for r in rel], float("nan"), sorted(gain, reverse=True), nonrel)
        num_rel = sum(1 for g in labelled if g >= rel_level)
        num_nonrel = sum(1 for g in labelled if 0 <= g < rel_level)
        ideal = sorted((g for g in labelled if g > 0), reverse=True)
        return cls(rel, gain, [int(r) for r in rel], float(num_rel), ideal, nonrel, float(num_nonrel))


class RelevanceBatch:
    """Many queries' ranked relevance in flat arrays (CSR layout).

    ``offsets`` has ``n + 1`` entries; query ``q`` owns positions ``offsets[q]:offsets[q+1]``.
    ``ideal_offsets`` indexes ``ideal`` the same way. ``nonrel`` (per position) and ``num_nonrel``
    (per query) tell judged non-relevant items from unjudged ones (module docstring); every builder
    must give them, so no metric can read a judged/unjudged distinction that was never made.
    """

    __slots__ = ("_cache", "covered", "gain", "ideal", "ideal_offsets", "nonrel", "num_nonrel", "num_rel",
                 "offsets", "rel")

    def __init__(
        self,
        offsets: NDArray[np.int64],
        rel: NDArray[np.bool_],
        gain: FloatArray,
        covered: FloatArray,
        num_rel: FloatArray,
        ideal_offsets: NDArray[np.int64],
        ideal: FloatArray,
        *,
        nonrel: NDArray[np.bool_],
        num_nonrel: FloatArray,
    ) -> None:
        self.offsets = np.asarray(offsets, dtype=np.int64)
        self.rel = np.asarray(rel, dtype=bool)
        self.gain = np.asarray(gain, dtype=np.float64)
        self.covered = np.asarray(covered, dtype=np.float64)
        self.num_rel = np.asarray(num_rel, dtype=np.float64)
        self.ideal_offsets = np.asarray(ideal_offsets, dtype=np.int64)
        self.ideal = np.asarray(ideal, dtype=np.float64)
        self.nonrel = np.asarray(nonrel, dtype=bool)
        self.num_nonrel = np.asarray(num_nonrel, dtype=np.float64)
        if self.nonrel.shape != self.rel.shape or self.num_nonrel.shape != self.num_rel.shape:
            raise ValueError(f"RelevanceBatch: nonrel needs one entry per position ({len(self.rel)}), "
                             f"num_nonrel one per query ({len(self.num_rel)}); got {len(self.nonrel)}, "
                             f"{len(self.num_nonrel)}")
        self._cache: dict[str, NDArray] = {}

    @classmethod
    def from_lists(cls, lists: Sequence[RankedList]) -> RelevanceBatch:
        """Pack per-query :class:`RankedList` objects into one batch (an empty ``nonrel``: none judged
        non-relevant)."""
        lengths = np.fromiter((len(x.rel) for x in lists), dtype=np.int64, count=len(lists))
        ilengths = np.fromiter((len(x.ideal) for x in lists), dtype=np.int64, count=len(lists))
        offsets = np.zeros(len(lists) + 1, dtype=np.int64)
        np.cumsum(lengths, out=offsets[1:])
        ioffsets = np.zeros(len(lists) + 1, dtype=np.int64)
        np.cumsum(ilengths, out=ioffsets[1:])

        def flat(attr: str, dtype: type) -> NDArray:
            out = [v for x in lists for v in getattr(x, attr)]
            return np.asarray(out, dtype=dtype)

        return cls(
            offsets,
            flat("rel", bool),
            flat("gain", np.float64),
            flat("covered", np.float64),
            np.asarray([x.num_rel for x in lists], dtype=np.float64),
            ioffsets,
            flat("ideal", np.float64),
            nonrel=np.asarray([v for x in lists for v in (x.nonrel or itertools.repeat(False, len(x.rel)))],
                              dtype=bool),
            num_nonrel=np.asarray([x.num_nonrel for x in lists], dtype=np.float64),
        )

    # ---- derived arrays, computed once per batch -------------------------------------------------
    @property
    def n(self) -> int:
        """Number of queries."""
        return len(self.offsets) - 1

    @property
    def lengths(self) -> NDArray[np.int64]:
        """Retrieved items per query."""
        return np.diff(self.offsets)

    def _segments(self, offsets: NDArray[np.int64], key: str) -> tuple[NDArray[np.int64], NDArray[np.integer]]:
        if key not in self._cache:
            lengths = np.diff(offsets)
            seg = np.repeat(np.arange(len(lengths), dtype=np.int64), lengths)
            # int32 (half the memory of the cached array) unless the batch holds 2**31 positions
            itype = np.int32 if offsets[-1] < 2**31 - 1 else np.int64
            if len(lengths) and (lengths == lengths[0]).all():  # every query the same depth: no repeat needed
                rank = np.tile(np.arange(1, lengths[0] + 1, dtype=itype), len(lengths))
            else:
                rank = np.arange(1, offsets[-1] + 1, dtype=itype)
                rank -= np.repeat(offsets[:-1].astype(itype), lengths)
            self._cache[key] = seg
            self._cache[key + "_rank"] = rank
        return self._cache[key], self._cache[key + "_rank"]

    @property
    def seg(self) -> NDArray[np.int64]:
        """Query index of every position."""
        return self._segments(self.offsets, "seg")[0]

    @property
    def rank(self) -> NDArray[np.integer]:
        """1-based rank of every position within its query (int32 unless the batch has 2**31 positions)."""
        return self._segments(self.offsets, "seg")[1]

    @property
    def ideal_seg(self) -> NDArray[np.int64]:
        """Query index of every ideal grade."""
        return self._segments(self.ideal_offsets, "iseg")[0]

    @property
    def ideal_rank(self) -> NDArray[np.integer]:
        """1-based rank of every ideal grade within its query (int32 unless it has 2**31 grades)."""
        return self._segments(self.ideal_offsets, "iseg")[1]

    @property
    def cum_rel(self) -> NDArray[np.integer]:
        """Relevant items at or above each position, within its query."""
        if "cum_rel" not in self._cache:
            itype = np.int32 if len(self.rel) < 2**31 - 1 else np.int64
            c: NDArray[np.integer] = np.cumsum(self.rel, dtype=itype)
            base = np.concatenate((np.zeros(1, dtype=itype), c))[self.offsets[:-1]]
            c -= np.repeat(base, self.lengths)
            self._cache["cum_rel"] = c
        return self._cache["cum_rel"]

    def seg_sum(self, values: NDArray, mask: NDArray[np.bool_] | None = None) -> FloatArray:
        """Per-query sum of ``values`` over positions where ``mask`` holds."""
        # np.bincount with weights gives float64 (numpy's stubs say intp whatever the weights)
        if mask is None:
            return cast(FloatArray, np.bincount(self.seg, weights=values, minlength=self.n))
        rows = np.flatnonzero(mask)  # one pass over the mask, then two gathers of (usually few) rows
        return cast(FloatArray, np.bincount(self.seg[rows], weights=values[rows], minlength=self.n))

    def within(self, k: int | None) -> NDArray[np.bool_] | None:
        """Mask of positions at rank <= k (None for no cutoff)."""
        return None if k is None else self.rank <= k


def safe_div(num: FloatArray, den: FloatArray, when_zero: float = 0.0) -> FloatArray:
    """``num / den`` elementwise with ``when_zero`` where ``den == 0``; NaN in ``den`` stays NaN."""
    num = np.asarray(num, dtype=np.float64)
    den = np.asarray(den, dtype=np.float64)
    out = np.full(np.broadcast(num, den).shape, when_zero, dtype=np.float64)
    np.divide(num, den, out=out, where=den != 0)
    out[np.isnan(den)] = np.nan
    return out
