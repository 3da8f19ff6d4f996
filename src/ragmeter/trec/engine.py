"""Turn a :class:`~ragmeter.trec.io.Qrels` and a :class:`~ragmeter.trec.io.Run` into a
:class:`~ragmeter.metrics.retrieval.RelevanceBatch`, with trec_eval's semantics, fully vectorised.

trec_eval's rules, as reproduced here (trec_eval 10.0, ``form_res_rels.c`` and ``trec_eval.c``):

* **Ranking**: by score descending, ties broken by docid descending in ``strcmp`` order (Python's
  ``str`` order is code-point order, which equals UTF-8 byte order, so it is ``strcmp``'s). The
  rank column of a run file is ignored. ``max_ret`` (``-M``) cuts every ranking after sorting.
* **Relevance**: a retrieved document is relevant when it is judged with a grade ``>= rel_level``
  and ``>= 0``. Negative grades are "judged non-relevant" (trec_eval's "unjudged in pool"), never
  relevant and never a gain. Unjudged documents are non-relevant. ``num_rel`` counts the
  judgements with grade ``>= max(rel_level, 0)``. nDCG gains are the grades themselves (``> 0``),
  independent of ``rel_level``, and the ideal ranking is every positive judgement sorted.
* **Queries**: a run query absent from the qrels is ignored. A qrels query absent from the run is
  scored 0 on every measure and counted in the mean when ``missing="zero"`` (trec_eval ``-c``),
  dropped when ``missing="skip"`` (trec_eval's default), an error when ``missing="error"``. A qrels
  query without any relevant judgement is evaluated like any other (its recall, AP, nDCG... are 0
  by the kernels' edge-case rules) and counts in the mean, as in trec_eval.
* **Duplicates**: a docid retrieved twice for one query (within the first ``max_ret``) or judged
  twice for one query is an error, as in trec_eval ("duplicate docs").

Work per row is numpy only (plus one C-level ``map(hash, docids)`` unless the docids are an Arrow column,
hashed from their bytes: :mod:`ragmeter.trec.ids`): query ids are mapped to
integer codes, rows are ordered with one 2-d ``argsort`` over the (padded) score matrix, or a
``lexsort``, ties are fixed with a second small sort of the tied rows only, and run rows are joined
to the judgements on 64-bit (query, docid-hash) keys with ``searchsorted``, every match confirmed
on the strings (a hash collision can never join the wrong document).
"""

from __future__ import annotations

import itertools
from collections import deque
from collections.abc import Mapping
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any, Literal, cast

import numpy as np
from numpy.typing import NDArray

from ..errors import InputError, InvalidParameterError
from ..metrics.retrieval import RelevanceBatch
from .ids import HashKind, compact_strings, hash_kind, id_hashes, take_ids
from .io import Qrels, Run
from .ranking import rank_rows

Missing = Literal["zero", "skip", "error"]
MISSING_POLICIES = ("zero", "skip", "error")
_HASH_MIX = np.uint64(0x9E3779B97F4A7C15)


class TrecBatch:
    """A :class:`RelevanceBatch` plus what trec_eval's other measures read (batch order: run order,
    then absent qrels queries).

    * ``grade[i]`` -- the qrels grade of the document at position ``i`` (NaN: not in the qrels, trec_eval's
      "not in pool"; negative: "in pool, unjudged");
    * ``bogus[q]`` -- query ``q`` is a qrels query absent from the run, evaluated (``missing="zero"``, trec_eval
      ``-c``) as trec_eval does: a ranking of one unjudged document;
    * ``judged_offsets`` / ``judged_grades`` -- every judgement of each query (CSR, grades in qrels order);
    * ``rel_level`` -- the relevance threshold; ``num_rel_positive`` -- judgements with grade > 0 in the
      whole qrels (trec_eval's ``num_rel`` summary under ``-c``).
    """

    __slots__ = ("_cache", "batch", "bogus", "grade", "judged_grades", "judged_offsets", "num_rel_positive",
                 "qids", "rel_level", "runid")

    def __init__(self, batch: RelevanceBatch, qids: NDArray[Any], runid: str, *, grade: NDArray[np.float64],
                 bogus: NDArray[np.bool_], judged_offsets: NDArray[np.int64], judged_grades: NDArray[np.float64],
                 rel_level: float = 1.0, num_rel_positive: int = 0) -> None:
        self.batch = batch
        self.qids = qids
        self.runid = runid
        self.grade = grade
        self.bogus = bogus
        self.judged_offsets = judged_offsets
        self.judged_grades = judged_grades
        self.rel_level = rel_level
        self.num_rel_positive = num_rel_positive
        self._cache: dict[Any, Any] = {}

    @property
    def num_ret(self) -> NDArray[np.int64]:
        """Documents retrieved per query (after ``max_ret`` and ``judged_only``)."""
        return self.batch.lengths

    @property
    def num_rel(self) -> NDArray[np.float64]:
        """Relevant judgements per query."""
        return self.batch.num_rel

    @property
    def num_rel_ret(self) -> NDArray[np.float64]:
        """Relevant documents retrieved per query."""
        return self.batch.seg_sum(self.batch.rel.astype(np.float64))


def _lookup(table: dict[str, int], values: NDArray[Any]) -> NDArray[np.int64]:
    """``table[v]`` for every value, -1 when absent (a C-level loop over Python's dict)."""
    return np.fromiter(map(table.get, values, itertools.repeat(-1)), dtype=np.int64, count=len(values))


def _pair_keys(q: NDArray[np.int64], h: NDArray[np.uint64], nq: int) -> NDArray[np.uint64]:
    """One 64-bit key per (query, docid): the query index in the top 24 bits, 40 bits of the docid hash.

    ``h`` (the docid hashes) is overwritten with the keys.

    Keys sort by query first, so the ranked rows (grouped by query) search a narrow, cache-friendly
    range of the sorted judgements. Equal pairs have equal keys; two docids of one query collide
    with probability 2**-40, and every match is confirmed on the strings, so a collision can never
    join the wrong document (and a collision between two judgements switches to an exact dict join).
    With ``nq`` >= 2**24 queries, the query is mixed into the hash instead.
    """
    if nq >= 1 << 24:
        return (h * _HASH_MIX) ^ q.astype(np.uint64)
    h &= np.uint64((1 << 40) - 1)  # in place: callers pass a fresh array they no longer need
    qk = q.astype(np.uint64)
    qk <<= np.uint64(40)
    h |= qk
    return h


def _check_duplicates(q: NDArray[np.int64], docids: NDArray[Any], rows: NDArray[np.int64],
                      keys: NDArray[np.uint64], qids: NDArray[Any], what: str) -> None:
    """Raise InputError when a (query, docid) pair occurs twice (keys first, strings to confirm); each query's
    rows are contiguous in ``q``."""
    n = len(keys)
    if n < 2:
        return
    # a pair can repeat only within its query (rows grouped by query): when every query has the same number of
    # rows (the usual run), each query's keys are sorted on their own, ~3x faster than one sort of them all
    bounds = np.flatnonzero(q[1:] != q[:-1]) + 1
    width = int(bounds[0]) if len(bounds) else n
    if n % width == 0 and len(bounds) == n // width - 1 and bool((bounds == np.arange(width, n, width)).all()):
        ks = np.sort(keys.reshape(-1, width), axis=1).ravel()  # keys equal across two queries: confirmed below
    else:
        ks = np.sort(keys)
    dup = ks[1:][ks[1:] == ks[:-1]]
    if not dup.size:
        return
    seen: set[tuple[int, str]] = set()
    for i in np.flatnonzero(np.isin(keys, dup)).tolist():
        pair = (int(q[i]), docids[rows[i]])
        if pair in seen:
            raise InputError(
                f"query {qids[pair[0]]!r}: docid {pair[1]!r} appears twice in the {what}; trec_eval refuses "
                "duplicate documents in a query (\"duplicate docs\"): keep one line per (qid, docid)",
                field="docid",
            )
        seen.add(pair)


def _grades_from_dicts(qrels: Mapping[str, Any], run: Mapping[str, Any], n: int) -> NDArray[np.float64] | None:
    """The grade of every run row in dict order (NaN when unjudged): per query, ``map(qd.get, docids)``;
    None when a docid of a judged query is not a str (its ``str()`` is what the qrels would match).

    Every loop is a C-level ``map``, run over ``_CHUNK`` queries at a time: a C loop never lets go of the
    GIL, and the ranking thread (:func:`_rank`) needs it between its numpy calls."""
    nan = float("nan")
    judged = [qrels.get(q) for q in run]
    inner = list(run.values())
    lookups = [_EMPTY.get if j is None else j.get for j in judged]
    out = np.empty(n, dtype=np.float64)
    start = 0
    for a in range(0, len(inner), _CHUNK):
        part = inner[a:a + _CHUNK]
        try:  # a TypeError unless every docid of a judged query is a str (cheap: the strings are read next)
            deque(map("".join, itertools.compress(part, judged[a:a + _CHUNK])), maxlen=0)
        except TypeError:
            return None
        rows = map(map, lookups[a:a + _CHUNK], part, itertools.repeat(itertools.repeat(nan)))
        count = sum(map(len, part))
        out[start:start + count] = np.fromiter(itertools.chain.from_iterable(rows), dtype=np.float64, count=count)
        start += count
    return out


#: Queries per C-level pass of :func:`_grades_from_dicts` (~1-2 ms of work each).
_CHUNK = 1024
_EMPTY: dict[str, float] = {}


# ---- qrels preparation (cached on the Qrels object) ---------------------------------------------
@dataclass(frozen=True)
class _PreparedQrels:
    qids: NDArray[Any]  # distinct qids in strcmp order
    qid_index: dict[str, int]  # qid -> rank in ``qids``
    keys: NDArray[np.uint64]  # sorted pair keys (see _pair_keys)
    docids: NDArray[Any]  # docids aligned with keys
    rels: NDArray[np.float64]  # grades aligned with keys
    key_query: NDArray[np.int64]  # query rank aligned with keys
    unique_keys: bool  # False only after a 64-bit collision between two judgements: join by dict then
    key_filter: NDArray[np.bool_]  # see _key_filter


def _prepare(qrels: Qrels, kind: HashKind | None) -> _PreparedQrels:
    """The judgements prepared for joining, computed once per :class:`Qrels` and hash function (kept with
    :meth:`~ragmeter.trec.io.Qrels.derived`); pair keys hash the docids with ``kind`` (the run's
    :func:`~ragmeter.trec.ids.hash_kind`), none are computed when ``kind`` is None (judgements read through
    the source dicts)."""
    return qrels.derived(f"prepared-{kind}", lambda: _prepare_now(qrels, kind))


def _prepare_now(qrels: Qrels, kind: HashKind | None) -> _PreparedQrels:
    nq = qrels.num_queries
    ids = compact_strings(qrels.qids.tolist())
    order = np.fromiter(sorted(range(nq), key=ids.__getitem__), dtype=np.int64, count=nq)  # strcmp order, and
    rank_of_code = np.empty(nq, dtype=np.int64)  # ~8x faster than numpy's argsort of an object array
    rank_of_code[order] = np.arange(nq)
    rq = rank_of_code[qrels.qid_codes]
    qids = np.array(ids, dtype=object)[order]
    if kind is None:  # judgements joined through the source dicts: no keys (a dict has no duplicates)
        return _PreparedQrels(qids, dict(zip(qids.tolist(), itertools.count())), np.zeros(0, np.uint64),
                              qrels.docids, qrels.values, rq, unique_keys=True, key_filter=np.zeros(0, bool))
    key = _pair_keys(rq, id_hashes(qrels.docids, kind), nq)
    o = np.argsort(key, kind="stable")
    keys = key[o]
    docids, rq = qrels.docids[o], rq[o]
    same = np.flatnonzero(keys[1:] == keys[:-1])
    real = same[(rq[same] == rq[same + 1]) & (docids[same] == docids[same + 1])]
    if real.size:
        i = o[real[0]]
        raise InputError(
            f"query {qrels.qid[i]!r}: docid {qrels.docids[i]!r} is judged twice in the qrels; trec_eval refuses "
            "duplicate judgements (\"duplicate docs\"): keep one line per (qid, docid)",
            field="docid",
        )
    return _PreparedQrels(qids, dict(zip(qids.tolist(), itertools.count())), keys, docids,
                          qrels.values[o], rq, unique_keys=not same.size, key_filter=_key_filter(keys))


def _key_filter(keys: NDArray[np.uint64]) -> NDArray[np.bool_]:
    """A bitmap over the low bits of the pair keys (hash bits), at least 8 slots per key: False at
    ``key & (len - 1)`` proves a key absent, so only about one unjudged run row in 8 is searched for."""
    size = 1 << min(26, max(16, (8 * len(keys)).bit_length()))
    bits = np.zeros(size, dtype=bool)
    bits[keys & np.uint64(size - 1)] = True
    return bits


def _join(pq: _PreparedQrels, q: NDArray[np.int64], keys: NDArray[np.uint64], docids: NDArray[Any],
          rows: NDArray[np.int64]) -> NDArray[np.int64]:
    """Index into the prepared judgements of every ranked row (``docids[rows]``), -1 when unjudged."""
    if not pq.unique_keys:  # a hash collision among the judgements: exact dict join (never in practice)
        table = {(int(a), b): i for i, (a, b) in enumerate(zip(pq.key_query.tolist(), pq.docids.tolist(),
                                                                strict=True))}
        pairs = zip(q.tolist(), np.asarray(docids[rows]).tolist(), strict=True)
        return np.fromiter((table.get(p, -1) for p in pairs), dtype=np.int64, count=len(q))
    cand = np.flatnonzero(pq.key_filter[keys & np.uint64(len(pq.key_filter) - 1)])
    pos = np.searchsorted(pq.keys, keys[cand])
    np.minimum(pos, len(pq.keys) - 1, out=pos)
    same = pq.keys[pos] == keys[cand]
    hit, pos = cand[same], pos[same]
    ok = (pq.key_query[pos] == q[hit]) & (pq.docids[pos] == docids[rows[hit]])
    out = np.full(len(q), -1, dtype=np.int64)
    out[hit[ok]] = pos[ok]
    return out


# ---- the batch -----------------------------------------------------------------------------------
def _check_options(rel_level: float, max_ret: int | None, missing: str) -> float:
    """Validate build_batch's options; ``rel_level`` as a float."""
    if missing not in MISSING_POLICIES:
        raise InvalidParameterError(f"missing: expected one of {', '.join(MISSING_POLICIES)}, got {missing!r}")
    if max_ret is not None and (isinstance(max_ret, bool) or not isinstance(max_ret, int | np.integer)
                                or max_ret < 1):
        raise InvalidParameterError(f"max_ret: expected a positive integer or None, got {max_ret!r}")
    try:
        return float(rel_level)
    except (TypeError, ValueError):
        raise InvalidParameterError(f"rel_level: expected a number, got {rel_level!r}") from None


def _query_order(pq: _PreparedQrels, run: Run, missing: Missing) -> tuple[NDArray[np.int64], NDArray[np.int64]]:
    """``qmap`` (run query code -> qrels query rank, -1: not judged, ignored) and the batch's query order
    (qrels ranks): the judged run queries in run order, then (``missing="zero"``) the absent ones."""
    qmap = _lookup(pq.qid_index, run.qids)
    judged = qmap >= 0
    present = np.zeros(len(pq.qids), dtype=bool)
    present[qmap[judged]] = True
    if missing == "error" and not present.all():
        absent = pq.qids[~present]
        shown = ", ".join(repr(x) for x in absent[:5].tolist())
        raise InputError(
            f"{len(absent)} qrels queries have no results in the run ({shown}"
            f"{', ...' if len(absent) > 5 else ''}); pass missing='zero' to score them 0 "
            "or missing='skip' to leave them out",
            field="qid",
        )
    order_q = qmap[judged]
    if missing == "zero":
        order_q = np.concatenate((order_q, np.flatnonzero(~present)))
    if not len(order_q):
        raise InputError(
            "no query has both results and relevance judgements: check that the run's qids match the qrels' "
            f"(qrels: {', '.join(map(repr, pq.qids[:3].tolist()))}; run: "
            f"{', '.join(map(repr, run.qids[:3].tolist()))})",
            field="qid",
        )
    return qmap, order_q


@dataclass
class _Ranked:
    """The judged run rows in ranked order: ``codes`` (run query code per position), ``src`` (row of
    ``run.docids`` per position) and ``grades`` (the grade per position when read through the source
    dicts) or ``hashes`` (docid hashes per position, for the key join)."""

    codes: NDArray[np.int64]
    src: NDArray[np.int64]
    grades: NDArray[np.float64] | None
    hashes: NDArray[np.uint64] | None


def _rank(run: Run, qmap: NDArray[np.int64], sources: tuple[Mapping[str, Any], Mapping[str, Any]] | None,
          max_ret: int | None, kind: HashKind | None) -> _Ranked:
    """Rank the judged run rows (trec_eval's order), cut each ranking after ``max_ret``, and read every
    position's grade through ``sources`` or (``sources`` None, or a docid in them not a str) hash its docid
    with ``kind``."""
    judged = qmap >= 0
    docids = run.docids
    if judged.all():
        codes, scores, rows = run.qid_codes, run.values, None
    else:
        rows = np.flatnonzero(judged[run.qid_codes])
        codes, scores = run.qid_codes[rows], run.values[rows]
    if np.isnan(scores).any():
        raise InputError("run scores must be numbers, got NaN", field="score")
    subset = docids if rows is None else take_ids(docids, rows)
    # rank within each run query (rows stay grouped by run query code) in a worker thread: numpy's
    # sorts release the GIL, so it overlaps with hashing the docids (or reading grades), which holds it
    grades = hashes = None
    with ThreadPoolExecutor(max_workers=1) as pool:
        ranking = pool.submit(rank_rows, codes, scores, subset)
        if sources is not None:
            grades = _grades_from_dicts(*sources, len(run.values))
        if grades is None:  # not read through the dicts, or a docid that is not a str: hashed for the key join
            hashes = id_hashes(subset, kind or "python")
        elif rows is not None:
            grades = grades[rows]
        perm = ranking.result()
    del subset
    if len(codes) > 1 and not bool((codes[1:] >= codes[:-1]).all()):
        codes = codes[perm]  # (already grouped rows: perm only moves rows within a query)
    if max_ret is not None and len(codes):
        starts = np.concatenate(([True], codes[1:] != codes[:-1]))
        first = np.maximum.accumulate(np.where(starts, np.arange(len(codes)), 0))
        cut = (np.arange(len(codes)) - first) < max_ret
        if not cut.all():
            perm, codes = perm[cut], codes[cut]
    src = perm if rows is None else rows[perm]
    return _Ranked(codes, src, None if grades is None else grades[perm], None if hashes is None else hashes[perm])


def _position_grades(pq: _PreparedQrels, run: Run, ranked: _Ranked, qmap: NDArray[np.int64]) -> NDArray[np.float64]:
    """The qrels grade of every ranked position (NaN: not in the qrels); ``qmap`` maps run query codes to
    qrels query ranks. Joins on (query, docid-hash) keys unless the grades were read through the source dicts."""
    if ranked.grades is not None:
        return ranked.grades
    assert ranked.hashes is not None
    q = qmap[ranked.codes]
    keys = _pair_keys(q, ranked.hashes, len(pq.qids))
    ranked.hashes = None  # overwritten by the keys
    if not run.unique or getattr(run.docids, "converted", False):  # 1 and "1" are one docid
        _check_duplicates(q, run.docids, ranked.src, keys, pq.qids, "run")
    pos = _join(pq, q, keys, run.docids, ranked.src)
    del keys
    grades = np.full(len(q), np.nan)
    found = np.flatnonzero(pos >= 0)
    grades[found] = pq.rels[pos[found]]
    return grades


def _keep_judged(offsets: NDArray[np.int64], grades: NDArray[np.float64]) -> NDArray[np.float64]:
    """trec_eval ``-J``: drop positions not in the qrels or with a negative grade (``offsets`` updated in place)."""
    keep = grades >= 0  # NaN compares False
    if keep.all():
        return grades
    nb = len(offsets) - 1
    seg = np.repeat(np.arange(nb), np.diff(offsets))
    np.cumsum(np.bincount(seg[keep], minlength=nb), out=offsets[1:])
    return grades[keep]


def build_batch(qrels: Qrels, run: Run, *, rel_level: float = 1.0, max_ret: int | None = None,
                missing: Missing = "zero", judged_only: bool = False,
                sources: tuple[Mapping[str, Any], Mapping[str, Any]] | None = None) -> TrecBatch:
    """Rank ``run``, judge it against ``qrels`` and pack the result as a :class:`TrecBatch`.

    Parameters follow trec_eval: ``rel_level`` is ``-l``, ``max_ret`` is ``-M``, ``missing="zero"``
    is ``-c`` and ``missing="skip"`` its default, ``judged_only`` is ``-J`` (documents absent from the qrels
    or judged with a negative grade are removed from each ranking after ``max_ret``, ranks closing up).
    Raises :class:`InputError` for duplicates, for ``missing="error"`` with a qrels query absent from
    the run, and when no query has both results and judgements.

    ``sources`` -- the ``(qrels, run)`` dicts that ``qrels`` and ``run`` were just built from
    (:func:`~ragmeter.trec.api.evaluate_trec` passes them): each run row's grade is then read with
    one C-level ``dict.get`` per row from the query's (small) qrels dict, which is cheaper than
    hashing every docid and joining on keys. The result is identical.
    """
    rel_level = _check_options(rel_level, max_ret, missing)
    if len(qrels) == 0:
        raise InputError("the qrels hold no judgements; expected at least one 'qid 0 docid rel' line")
    via_dicts = sources is not None and qrels.plain and run.plain
    kind = None if via_dicts else hash_kind(run.docids)
    pq = _prepare(qrels, kind)
    qmap, order_q = _query_order(pq, run, missing)
    nb, n_present = len(order_q), int((qmap >= 0).sum())
    ranked = _rank(run, qmap, sources if via_dicts else None, max_ret, kind)
    if ranked.grades is None and kind is None:  # a run docid that is not a str: the key join after all
        pq = _prepare(qrels, "python")
    # query i of the batch (i < n_present) is the i-th judged run query code: count positions per code
    offsets = np.zeros(nb + 1, dtype=np.int64)
    np.cumsum(np.bincount(ranked.codes, minlength=len(qmap))[qmap >= 0], out=offsets[1:n_present + 1])
    offsets[n_present + 1:] = offsets[n_present]
    grades = _position_grades(pq, run, ranked, qmap)
    del ranked
    if judged_only:
        grades = _keep_judged(offsets, grades)
    absent = np.zeros(nb, dtype=bool)
    absent[n_present:] = missing == "zero"
    extra = nb - n_present
    if missing == "zero" and not judged_only and extra:
        # trec_eval -c evaluates an absent query as a ranking of one document outside the qrels
        offsets[-extra:] += np.arange(1, extra + 1)
        grades = np.concatenate((grades, np.full(extra, np.nan)))
    rel = (grades >= rel_level) & (grades >= 0)
    gain = np.where(grades > 0, grades, 0.0)
    nonrel = (grades >= 0) & (grades < rel_level)  # judged non-relevant; NaN (not in the qrels) compares False
    num_rel, num_nonrel, joffsets, jgrades, ioffsets, ideal = _judgements(pq, order_q, nb, rel_level)
    batch = RelevanceBatch(offsets, rel, gain, rel.astype(np.float64), num_rel, ioffsets, ideal,
                           nonrel=nonrel, num_nonrel=num_nonrel)
    return TrecBatch(batch, pq.qids[order_q], run.name, grade=grades, bogus=absent, judged_offsets=joffsets,
                     judged_grades=jgrades, rel_level=rel_level, num_rel_positive=int((pq.rels > 0).sum()))


def _judgements(pq: _PreparedQrels, order_q: NDArray[np.int64], nb: int, rel_level: float) -> tuple[
        NDArray[np.float64], NDArray[np.float64], NDArray[np.int64], NDArray[np.float64], NDArray[np.int64],
        NDArray[np.float64]]:
    """Per batch query: relevant judgements (num_rel), judged non-relevant ones (num_nonrel: grade in
    ``[0, rel_level)``), every judgement's grade (CSR offsets, grades) and the ideal ranking (CSR offsets,
    positive grades descending)."""
    nq = len(pq.qids)
    judged_rel = (pq.rels >= rel_level) & (pq.rels >= 0)
    # np.bincount with weights gives float64 (numpy's stubs say intp whatever the weights)
    num_rel = cast(NDArray[np.float64], np.bincount(pq.key_query, weights=judged_rel.astype(np.float64),
                                                    minlength=nq))[order_q]
    judged_nonrel = (pq.rels >= 0) & (pq.rels < rel_level)
    num_nonrel = cast(NDArray[np.float64], np.bincount(pq.key_query, weights=judged_nonrel.astype(np.float64),
                                                       minlength=nq))[order_q]
    batch_of_rank = np.full(nq, -1, dtype=np.int64)
    batch_of_rank[order_q] = np.arange(nb)
    jb = batch_of_rank[pq.key_query]
    jrows = np.flatnonzero(jb >= 0)
    jorder = jrows[np.argsort(jb[jrows], kind="stable")]
    joffsets = np.zeros(nb + 1, dtype=np.int64)
    np.cumsum(np.bincount(jb[jrows], minlength=nb), out=joffsets[1:])
    positive = pq.rels > 0
    ib, ivals = jb[positive], pq.rels[positive]
    ivals, ib = ivals[ib >= 0], ib[ib >= 0]
    io_ = np.lexsort((-ivals, ib))
    ioffsets = np.zeros(nb + 1, dtype=np.int64)
    np.cumsum(np.bincount(ib, minlength=nb), out=ioffsets[1:])
    return num_rel, num_nonrel, joffsets, pq.rels[jorder], ioffsets, ivals[io_]
