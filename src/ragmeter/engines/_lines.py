"""Formatting ``results.jsonl`` lines for the columnar fast path (:mod:`.columnar`).

A fast row's line is the one :meth:`ragmeter.results.RunWriter.add` would write for it
(``json.dumps`` of ``{"id", "metrics": {name: MetricResult.to_record()}}``). Rows that share a
pattern (ranking length, relevant ranks, labelled count) share every byte but the score, so each
pattern is formatted once per metric and each row adds only ``repr(score)``.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from json.encoder import encode_basestring  # type: ignore[attr-defined]
from typing import Any

import numpy as np
from numpy.typing import NDArray

from ..io._fields import absent_result
from ..metrics.retrieval.base import RetrievalEvaluator
from ..results import record_json
from ..types import MetricResult

#: Rankings longer than this get their details built one by one (the pattern key is a bitmask).
MASK_BITS = 52


class LineMaker:
    """Builds the ``results.jsonl`` line of a fast row, memoising the parts shared by many rows."""

    def __init__(self, evaluators: Sequence[RetrievalEvaluator]) -> None:
        self.evaluators = evaluators
        self._memo: dict[tuple[Any, ...], tuple[str, str, str]] = {}
        # a row without labels (relevant null, no reference): the undefined result the Sample path
        # gives it (the field-absence rule of ragmeter.io._fields)
        self._none = [f"{encode_basestring(ev.name)}: " + json.dumps(
            absent_result(ev.name, ev.version, no_labels_field(ev)).to_record(), ensure_ascii=False)
            for ev in evaluators]

    @staticmethod
    def _part(ev: RetrievalEvaluator, score: str, reason_json: str, details_json: str) -> str:
        return (f"{encode_basestring(ev.name)}: {{\"score\": {score}, \"reason\": {reason_json}, "
                f"\"error\": null, \"details\": {details_json}, \"version\": {encode_basestring(ev.version)}}}")

    def pieces(self, i: int, length: int, ranks: tuple[int, ...], num_rel: int) -> tuple[str, str, str]:
        """(prefix, scored suffix, undefined part) of metric ``i`` for a row with this pattern."""
        key = (i, length, ranks, num_rel)
        got = self._memo.get(key)
        if got is not None:
            return got
        ev = self.evaluators[i]
        matched = ", ".join('"id"' if (p + 1) in set(ranks) else "null" for p in range(length))
        details = (f'{{"relevance_from": "labels", "relevant_ranks": {list(ranks)}, "retrieved": {length}, '
                   f'"matched_by": [{matched}], "labelled_relevant": {num_rel}}}')
        if length == 0:
            reason = "no contexts retrieved: scored 0"
        else:
            reason = f"relevant at rank(s) {list(ranks)[:10]}" if ranks else "no relevant context"
            reason += f" of {length} retrieved; {num_rel} labelled relevant"
        name, ver = encode_basestring(ev.name), encode_basestring(ev.version)
        prefix = f'{name}: {{"score": '
        suffix = (f', "reason": {json.dumps(reason, ensure_ascii=False)}, "error": null, '
                  f'"details": {details}, "version": {ver}}}')
        undefined = self._part(ev, "null", json.dumps(ev.undefined_reason, ensure_ascii=False), details)
        got = (prefix, suffix, undefined)
        self._memo[key] = got
        if len(self._memo) > 200_000:
            self._memo.clear()
        return got


def no_labels_field(ev: RetrievalEvaluator) -> str:
    """The absent field a row with neither ``relevant`` nor ``reference`` is undefined for."""
    return "relevant" if "relevant" in ev.spec.requires else "|".join(ev.spec.requires_any)


def record_line(sample_id: str, results: dict[str, MetricResult], names: Sequence[str]) -> str:
    """The ``results.jsonl`` line (without newline) of a row scored on the Sample path."""
    record = {"id": sample_id, "metrics": {m: results[m].to_record() for m in names}}
    return record_json(record)


@dataclass
class Patterns:
    """Fast rows grouped by (ranking length, relevant-rank bitmask, labelled count, no labels)."""

    inv: list[int]
    uniq: list[tuple[int, int, int, bool]]
    length: NDArray[np.int64]
    nrel: NDArray[np.int64]
    none: NDArray[np.bool_]
    starts: NDArray[np.int64]


def row_patterns(x: Any, r: Any, rows: NDArray[np.int64]) -> Patterns:
    n = len(x.ctx_len)
    row_c = np.repeat(np.arange(n, dtype=np.int64), x.ctx_len)
    starts = np.zeros(n + 1, dtype=np.int64)
    np.cumsum(x.ctx_len, out=starts[1:])
    rank0 = np.arange(len(row_c), dtype=np.int64) - starts[row_c]
    w = np.where(r.rel & (rank0 < MASK_BITS), np.exp2(np.minimum(rank0, MASK_BITS)), 0.0)
    mask = np.bincount(row_c, weights=w, minlength=n)[rows].astype(np.int64)
    length = x.ctx_len[rows]
    nrel = np.nan_to_num(r.num_rel[rows]).astype(np.int64)
    none = x.rel_none[rows]
    # one int64 key when it fits (the usual case), else rows of a 2-D key
    clen = np.minimum(length, 63)
    top = int(nrel.max(initial=0)) + 2
    if int(mask.max(initial=0)) < (2**62 // 64) // top and int(nrel.min(initial=0)) >= 0:
        key = ((mask * 64 + clen) * top + np.where(none, 0, nrel + 1))
        uk, inv = np.unique(key, return_inverse=True)
        tag = uk % top
        base = uk // top
        uniq = list(zip((base % 64).tolist(), (base // 64).tolist(), np.maximum(tag - 1, 0).tolist(),
                        (tag == 0).tolist(), strict=True))
    else:
        key2 = np.stack([clen, mask, nrel, none.astype(np.int64)], axis=1)
        u2, inv = np.unique(key2, axis=0, return_inverse=True)
        uniq = [(a, b, c, bool(d)) for a, b, c, d in u2.tolist()]
    return Patterns(inv.reshape(-1).tolist(), uniq, length, nrel, none, starts)


def metric_parts(k: int, ev: RetrievalEvaluator, r: Any, rows: NDArray[np.int64], pat: Patterns,
                  values: NDArray[np.float64], maker: LineMaker) -> list[str]:
    """Metric ``k``'s ``"name": {...}`` text for each of ``rows`` (fast rows, in order): each
    distinct pattern is formatted once, then only the score differs."""
    pre: list[str] = []
    suf: list[str] = []
    und: list[str] = []
    for ln, m, nr, nn in pat.uniq:
        if nn:
            p, sfx, u = "", "", maker._none[k]
        elif ln > MASK_BITS:
            p, sfx, u = "", "", ""  # formatted row by row below
        else:
            ranks = tuple(q + 1 for q in range(ln) if (m >> q) & 1)
            p, sfx, u = maker.pieces(k, ln, ranks, nr)
        pre.append(p)
        suf.append(sfx)
        und.append(u)
    nan = (np.isnan(values) | pat.none).tolist()
    out = [und[p] if bad else pre[p] + repr(v) + suf[p]
           for p, v, bad in zip(pat.inv, values.tolist(), nan, strict=True)]
    for j in np.flatnonzero(pat.length > MASK_BITS).tolist():
        row = int(rows[j])
        ranks = tuple(int(q) + 1 for q in np.flatnonzero(r.rel[pat.starts[row]:pat.starts[row + 1]]))
        p, sfx, u = maker.pieces(k, int(pat.length[j]), ranks, int(pat.nrel[j]))
        out[j] = maker._none[k] if pat.none[j] else (u if nan[j] else p + repr(float(values[j])) + sfx)
    return out
