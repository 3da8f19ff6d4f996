"""The columnar fast path: retrieval metrics over id-labelled Parquet data without a ``Sample`` per row.

:func:`evaluate_parquet` reads a Parquet file record batch by record batch with pyarrow. For the
rows whose relevance is decided by ids alone it builds the
:class:`~ragmeter.metrics.retrieval._batch.RelevanceBatch` CSR arrays directly with vectorised
Arrow / numpy operations (list offsets, flatten, a dictionary-encoded join of each row's retrieved
ids to its labelled ids) and runs the same kernels the :class:`Sample` path runs. Every other row
(text contexts with a label not found by id, a reference answer without labels, anything
:class:`~ragmeter.types.Sample` would reject) takes the ordinary path: the reader's
:class:`~ragmeter.io._records.RowConverter` and :func:`ragmeter.evaluator.score_chunk`. The output
(``results.jsonl`` line for line, ``summary.json``) is the one :func:`ragmeter.evaluate` writes.

A row is *fast* when all of these hold (relevance rule 1 of
:mod:`ragmeter.metrics.retrieval.relevance` then only ever matches by id):

* ``contexts`` is a list of ``{id, text, score}`` structs (or null), each with an id or a text;
* ``relevant`` is a list of ids (grade 1 each) or a map id -> numeric grade (no null or NaN grade,
  no key twice), or null with no ``reference`` (every retrieval metric is then undefined);
* every label is found among the row's context ids, or no context of the row has a text;
* ``query`` / ``answer`` / ``reference`` are strings or null, ``metadata`` a struct, map or null;
* at least one evaluable field is set, and the id is new.

Why it is exact: the kernels reduce per query with ``np.bincount`` and per-position arithmetic,
so a query's score does not depend on which other queries share its batch, and the arrays built
here hold the same values, in the same order, as :meth:`RelevanceBatch.from_lists` builds from
:func:`~ragmeter.metrics.retrieval.relevance.judge_relevance` (``tests/engines/test_columnar.py``
checks it on random data).
"""

from __future__ import annotations

import asyncio
import os
import time
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field
from json.encoder import encode_basestring  # type: ignore[attr-defined]
from pathlib import Path
from typing import Any

import numpy as np
from numpy.typing import NDArray

from ..errors import InputError, InvalidParameterError
from ..evaluator import bad_row_id, finish_info, plan, score_chunk
from ..io import read_samples
from ..io._fields import FieldPresence
from ..io._records import (
    DEFAULT_MAX_TEXT_CHARS,
    EVALUABLE_FIELDS,
    RowConverter,
    canonical,
    check_columns,
    check_field_map,
)
from ..metrics.retrieval._batch import RelevanceBatch
from ..metrics.retrieval.base import RetrievalEvaluator
from ..metrics.retrieval.relevance import SPACED_LABEL
from ..registry import get_evaluator
from ..results import ERROR, SCORED, UNDEFINED, RunResult
from ..types import MAX_STORED_ITEMS, MetricResult, Sample
from ._lines import LineMaker, metric_parts, no_labels_field, record_line, row_patterns

#: Rows per Parquet record batch read by the fast path.
BATCH_ROWS = 65536


def columnar_supported(metrics: Sequence[str] | None) -> bool:
    """True when every metric in ``metrics`` is a retrieval metric (what the fast path computes)."""
    if not metrics:
        return False
    try:
        return all(isinstance(get_evaluator(m), RetrievalEvaluator) for m in metrics)
    except Exception:  # an unknown or judged metric: the ordinary path raises the right error
        return False


# ---- the vectorised relevance join --------------------------------------------------------------


@dataclass
class IdLabels:
    """One record batch's contexts and labels as flat arrays (see :func:`id_relevance`).

    ``ctx_len[r]`` contexts per row, ``ctx_code`` each context's id code (-1: no id),
    ``lab_len[r]`` labels per row, ``lab_code`` / ``lab_grade`` each label's id code and grade,
    ``rel_none[r]`` True where the row has no labels at all (``relevant`` is null).
    """

    ctx_len: NDArray[np.int64]
    ctx_code: NDArray[np.int64]
    lab_len: NDArray[np.int64]
    lab_code: NDArray[np.int64]
    lab_grade: NDArray[np.float64]
    rel_none: NDArray[np.bool_]


@dataclass
class IdRelevance:
    """Per-position ``rel``/``gain``/``covered``, per-row ``num_rel``, and where each label was found."""

    rel: NDArray[np.bool_]
    gain: NDArray[np.float64]
    covered: NDArray[np.float64]
    num_rel: NDArray[np.float64]
    label_found: NDArray[np.bool_]
    ideal_row: NDArray[np.int64] = field(repr=False)
    ideal: NDArray[np.float64] = field(repr=False)


def id_relevance(x: IdLabels, rel_level: float) -> IdRelevance:
    """Relevance rule 1 (labels matched by id) for every row of ``x`` at once.

    A label is found at the first position of its row whose context id equals it; a position's
    gain is the highest grade found there (0 if none is positive), it is relevant when a label with
    grade >= ``rel_level`` is found there and covers that many labels; ``num_rel`` counts the
    row's labels with grade >= ``rel_level``; ``ideal`` holds each row's positive grades, grouped
    by row (``ideal_row``) and sorted descending within it.
    """
    n = len(x.ctx_len)
    n_ctx = len(x.ctx_code)
    row_c = np.repeat(np.arange(n, dtype=np.int64), x.ctx_len)
    row_l = np.repeat(np.arange(n, dtype=np.int64), x.lab_len)
    width = int(max(x.ctx_code.max(initial=-1), x.lab_code.max(initial=-1))) + 2
    has_id = np.flatnonzero(x.ctx_code >= 0)
    keys_c = row_c[has_id] * width + x.ctx_code[has_id]
    uniq, first = np.unique(keys_c, return_index=True)  # the first position of each (row, id)
    keys_l = row_l * width + x.lab_code
    j = np.searchsorted(uniq, keys_l)
    jc = np.minimum(j, max(len(uniq) - 1, 0))
    found = (j < len(uniq)) & (uniq[jc] == keys_l) if len(uniq) else np.zeros(len(keys_l), dtype=bool)
    where = has_id[first[jc[found]]] if len(uniq) else np.zeros(0, dtype=np.int64)
    grades = x.lab_grade[found]
    gain = np.zeros(n_ctx, dtype=np.float64)
    np.maximum.at(gain, where, grades)  # starts at 0: a grade <= 0 leaves no gain
    hit = grades >= rel_level
    covered = np.bincount(where[hit], minlength=n_ctx).astype(np.float64)
    num_rel = np.bincount(row_l, weights=(x.lab_grade >= rel_level).astype(np.float64), minlength=n)
    positive = x.lab_grade > 0
    prow, pgrade = row_l[positive], x.lab_grade[positive]
    order = np.lexsort((-pgrade, prow))
    return IdRelevance(covered > 0, gain, covered, num_rel.astype(np.float64), found,
                       prow[order], pgrade[order])


def select_batch(x: IdLabels, r: IdRelevance, rows: NDArray[np.bool_]) -> RelevanceBatch:
    """The :class:`RelevanceBatch` of the rows selected by ``rows`` (in order); a row without labels
    gets an empty ranking and NaN ``num_rel``, as the Sample path gives it."""
    keep = rows & ~x.rel_none
    row_c = np.repeat(keep, x.ctx_len)
    lengths = np.where(keep, x.ctx_len, 0)[rows]
    offsets = np.zeros(len(lengths) + 1, dtype=np.int64)
    np.cumsum(lengths, out=offsets[1:])
    ikeep = keep[r.ideal_row]
    ilen = np.bincount(r.ideal_row[ikeep], minlength=len(rows))[rows]
    ioffsets = np.zeros(len(ilen) + 1, dtype=np.int64)
    np.cumsum(ilen, out=ioffsets[1:])
    num_rel = np.where(x.rel_none, np.nan, r.num_rel)[rows]
    return RelevanceBatch(offsets, r.rel[row_c], r.gain[row_c], r.covered[row_c], num_rel, ioffsets,
                          r.ideal[ikeep])


# ---- reading one record batch ---------------------------------------------------------------------


@dataclass
class _Columns:
    """Which column gives which canonical field, and whether its type suits the fast path."""

    by_field: dict[str, str]
    fast_types: bool
    max_text_chars: int | None = DEFAULT_MAX_TEXT_CHARS


def _resolve_columns(schema: Any, fmap: dict[str, str]) -> _Columns:
    import pyarrow as pa

    by_field: dict[str, str] = {}
    for name in schema.names:
        target = canonical(fmap.get(name, name))
        by_field.setdefault(target, name)
    ok = True
    ctx = by_field.get("contexts")
    if ctx is None:
        ok = False
    else:
        t = schema.field(ctx).type
        if not (pa.types.is_list(t) or pa.types.is_large_list(t)) or not pa.types.is_struct(t.value_type):
            ok = False
        else:
            st = t.value_type
            names = {st.field(i).name for i in range(st.num_fields)}
            if "id" not in names or not names <= {"id", "text", "score"}:
                ok = False
            else:
                ok = _is_str_or_int(st.field("id").type)
                if "text" in names:
                    ok = ok and _is_str(st.field("text").type)
                if "score" in names:
                    tt = st.field("score").type
                    ok = ok and (pa.types.is_floating(tt) or pa.types.is_integer(tt) or pa.types.is_null(tt))
    rel = by_field.get("relevant")
    if rel is not None:
        t = schema.field(rel).type
        if pa.types.is_map(t):
            vt = t.item_type
            ok = ok and _is_str_or_int(t.key_type) and (pa.types.is_floating(vt) or pa.types.is_integer(vt))
        elif pa.types.is_list(t) or pa.types.is_large_list(t):
            ok = ok and _is_str_or_int(t.value_type)
        else:
            ok = False
    if "id" in by_field:
        ok = ok and _is_str_or_int(schema.field(by_field["id"]).type)
    return _Columns(by_field, ok)


def _is_str(t: Any) -> bool:
    import pyarrow as pa

    return bool(pa.types.is_string(t) or pa.types.is_large_string(t) or pa.types.is_null(t))


def _is_str_or_int(t: Any) -> bool:
    import pyarrow as pa

    return _is_str(t) or bool(pa.types.is_integer(t))


def _np_bool(arr: Any) -> NDArray[np.bool_]:
    return np.asarray(arr.to_numpy(zero_copy_only=False), dtype=bool)


def _lengths(col: Any) -> NDArray[np.int64]:

    return np.asarray(col.value_lengths().fill_null(0).to_numpy(zero_copy_only=False), dtype=np.int64)


def _per_row_any(flags: NDArray[np.bool_], lengths: NDArray[np.int64]) -> NDArray[np.bool_]:
    rows = np.repeat(np.arange(len(lengths)), lengths)
    return np.bincount(rows[flags], minlength=len(lengths)) > 0


@dataclass
class _RowFlags:
    """Per-row / per-label facts :func:`_run_batch` needs to route a row (see :func:`_extract`)."""

    has_text: NDArray[np.bool_]  # a context with a non-empty text
    has_id: NDArray[np.bool_]  # a context with an id
    label_spaced: NDArray[np.bool_]  # per label: it has inner whitespace (a text, not an id)


def _extract(batch: Any, cols: _Columns) -> tuple[IdLabels, NDArray[np.bool_], _RowFlags]:
    """The flat arrays of one record batch, the rows that must take the Sample path, and the
    facts that send more rows there once labels are matched (:class:`_RowFlags`)."""
    import pyarrow as pa
    import pyarrow.compute as pc

    n = batch.num_rows
    slow = np.zeros(n, dtype=bool)
    get = cols.by_field.get

    def column(fieldname: str) -> Any:
        name = get(fieldname)
        return None if name is None else batch.column(batch.schema.get_field_index(name))

    # rows Sample would reject or treat otherwise: a string field of another type, odd metadata
    present = np.zeros(n, dtype=bool)
    for f in EVALUABLE_FIELDS:
        c = column(f)
        if c is None:
            continue
        valid = _np_bool(c.is_valid())
        present |= valid
        if f in ("query", "answer", "reference") and not _is_str(c.type):
            slow |= valid
        elif f in ("query", "answer", "reference") and cols.max_text_chars and not pa.types.is_null(c.type):
            slow |= _np_bool(pc.greater(pc.utf8_length(c), cols.max_text_chars).fill_null(False))
    slow |= ~present  # "every field is empty": an InputError
    meta = column("metadata")
    if meta is not None and not (pa.types.is_struct(meta.type) or pa.types.is_map(meta.type)):
        slow |= _np_bool(meta.is_valid())

    ctx = column("contexts")
    slow |= ~_np_bool(ctx.is_valid())  # contexts absent: undefined ("no contexts field") on that path
    ctx_len = _lengths(ctx)
    slow |= ctx_len > MAX_STORED_ITEMS  # a ranking longer than the details budget: cut on that path
    flat = pc.list_flatten(ctx)
    ctx_null = _np_bool(flat.is_null())
    ids = pc.cast(flat.field("id"), pa.string())
    id_valid = _np_bool(ids.is_valid()) & ~ctx_null
    names = {flat.type.field(i).name for i in range(flat.type.num_fields)}
    if "text" in names:
        text = flat.field("text")
        text_valid = _np_bool(text.is_valid())
        text_len = np.asarray(pc.utf8_length(text).fill_null(0).to_numpy(zero_copy_only=False), dtype=np.int64)
        text_nonempty = text_valid & (text_len > 0)
        if cols.max_text_chars:  # a text over the limit: the input error is worded on the Sample path
            slow |= _per_row_any(text_len > cols.max_text_chars, ctx_len)
    else:
        text_valid = text_nonempty = np.zeros(len(flat), dtype=bool)
    bad_ctx = ctx_null | (~id_valid & ~text_valid)
    slow |= _per_row_any(bad_ctx, ctx_len)
    row_has_text = _per_row_any(text_nonempty & ~ctx_null, ctx_len)
    row_has_id = _per_row_any(id_valid, ctx_len)

    rel = column("relevant")
    if rel is None:
        rel_none = np.ones(n, dtype=bool)
        lab_len = np.zeros(n, dtype=np.int64)
        keys = pa.array([], pa.string())
        grades = np.zeros(0, dtype=np.float64)
    else:
        rel_none = ~_np_bool(rel.is_valid())
        if pa.types.is_map(rel.type):
            entries = pa.list_(pa.struct([("key", rel.type.key_type), ("value", rel.type.item_type)]))
            rel_list = rel.cast(entries)
            lab_len = _lengths(rel_list)
            flat_rel = pc.list_flatten(rel_list)
            keys = pc.cast(flat_rel.field("key"), pa.string())
            items = flat_rel.field("value")
            gvalid = _np_bool(items.is_valid())
            grades = np.array(pc.cast(items, pa.float64()).fill_null(0.0).to_numpy(zero_copy_only=False),
                                dtype=np.float64)
            bad_grade = ~gvalid | ~np.isfinite(grades)
            slow |= _per_row_any(bad_grade, lab_len)
            grades[bad_grade] = 0.0  # those rows take the Sample path, which words the error
        else:
            lab_len = _lengths(rel)
            keys = pc.cast(pc.list_flatten(rel), pa.string())
            slow |= _per_row_any(~_np_bool(keys.is_valid()), lab_len)
            grades = np.ones(len(keys), dtype=np.float64)
    ref = column("reference")
    if ref is not None:
        slow |= rel_none & _np_bool(ref.is_valid())  # relevance from the reference answer: texts

    both = pa.concat_arrays([ids.combine_chunks() if hasattr(ids, "combine_chunks") else ids,
                             keys.combine_chunks() if hasattr(keys, "combine_chunks") else keys])
    codes = both.dictionary_encode().indices
    codes_np = np.asarray(pc.fill_null(codes, -1).to_numpy(zero_copy_only=False), dtype=np.int64)
    n_ctx = len(ids)
    ctx_code = np.where(id_valid, codes_np[:n_ctx], -1)
    lab_code = codes_np[n_ctx:]
    if rel is not None and pa.types.is_map(rel.type) and len(lab_code):
        # a key given twice in one row: the Sample path keeps the last grade; leave it to that path
        lrow = np.repeat(np.arange(n, dtype=np.int64), lab_len)
        pair = lrow * (int(lab_code.max()) + 1) + lab_code
        u, counts = np.unique(pair, return_counts=True)
        dup_rows = np.unique(u[counts > 1] // (int(lab_code.max()) + 1))
        slow[dup_rows] = True
    x = IdLabels(ctx_len, ctx_code, lab_len, lab_code, grades, rel_none)
    spaced = _np_bool(pc.match_substring_regex(keys, SPACED_LABEL.pattern).fill_null(False)) if len(keys) \
        else np.zeros(0, dtype=bool)
    return x, slow, _RowFlags(row_has_text, row_has_id, spaced)


# ---- the run ------------------------------------------------------------------------------------


def evaluate_parquet(
    path: str | os.PathLike[str],
    metrics: Sequence[str],
    *,
    out_dir: str | os.PathLike[str],
    on_error: str = "raise",
    field_map: dict[str, str] | None = None,
    batch_rows: int = BATCH_ROWS,
    progress: Callable[[int], None] | None = None,
    on_bad_row: Callable[[InputError], None] | None = None,
    run_info: dict[str, Any] | None = None,
    max_text_chars: int | None = DEFAULT_MAX_TEXT_CHARS,
) -> RunResult:
    """Evaluate retrieval ``metrics`` over the Parquet file ``path`` on the columnar fast path.

    Writes ``out_dir/results.jsonl`` and ``out_dir/summary.json`` exactly as
    ``ragmeter.evaluate(read_samples(path, on_error=..., field_map=...), metrics, out_dir=...,
    keep_records=False)`` does, and returns the same :class:`~ragmeter.results.RunResult`
    (``records`` None). ``on_bad_row`` is called with each bad row's InputError (``on_error="skip"``).

    Raises
    ------
    InvalidParameterError
        A metric is not a retrieval metric (use :func:`ragmeter.evaluate`), or one is asked twice.
    InputError
        As :func:`~ragmeter.io.read_samples` raises it.
    """

    evaluators = [get_evaluator(m) for m in metrics]
    if not all(isinstance(ev, RetrievalEvaluator) for ev in evaluators):
        raise InvalidParameterError(
            f"metrics: expected retrieval metrics only for the columnar path, got {list(metrics)}; "
            "use ragmeter.evaluate for the others")
    run = plan(metrics, evaluators=evaluators, run_info=run_info)
    revs: list[RetrievalEvaluator] = evaluators  # type: ignore[assignment]
    names, info = run.names, run.info
    read_samples(path, on_error=on_error, field_map=field_map, format="parquet")  # type: ignore[arg-type]  # file-level checks
    spath = os.fspath(path)
    fmap = check_field_map(field_map)
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    conv = RowConverter(spath, fmap, unit="row", max_text_chars=max_text_chars)
    pf, cols, map_cols = _open(spath, fmap, max_text_chars)
    levels = sorted({ev.rel_level for ev in revs})
    maker = LineMaker(revs)
    ids: list[str] = []
    scores: dict[str, list[NDArray[np.float64]]] = {m: [] for m in names}
    status: dict[str, list[NDArray[np.int8]]] = {m: [] for m in names}
    t0 = time.perf_counter()
    fast_count = [0]
    bad_rows = [0]
    presence = FieldPresence()
    # the file is written by a second thread (the OS write releases the GIL) while the next
    # record batch is scored; at most one batch waits to be written
    with open(out / "results.jsonl", "wb") as fh, ThreadPoolExecutor(1, thread_name_prefix="ragmeter-write") as pool:
        pending: Future[int] | None = None
        for row0, batch in _record_batches(pf, batch_rows, spath):
            lines = _run_batch(batch, row0, cols, conv, revs, levels, maker, map_cols, on_error,
                               on_bad_row, ids, scores, status, fast_count, presence, bad_rows)
            data = "".join(lines).encode("utf-8")
            if pending is not None:
                pending.result()
            pending = pool.submit(fh.write, data)
            if progress is not None:
                progress(batch.num_rows)
        if pending is not None:
            pending.result()
    engine = info.setdefault("engine", {"name": "local", "path": "columnar"})
    if isinstance(engine, dict):
        engine["columnar_rows"] = fast_count[0]
    finish_info(info, t0=t0, input_errors=bad_rows[0], presence=presence, judge_stats=None)
    result = RunResult(ids, {m: np.concatenate(scores[m]) for m in names},
                       {m: np.concatenate(status[m]) for m in names}, None, info)
    result.write_summary(out / "summary.json")
    presence.check(path=spath, keys=list(pf.schema_arrow.names))
    return result


def _open(spath: str, fmap: dict[str, str], max_text_chars: int | None) -> tuple[Any, _Columns, list[str]]:
    """The Parquet file, its columns resolved for the fast path, and its map-typed columns."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    pf = pq.ParquetFile(spath)
    check_columns(list(pf.schema_arrow.names), fmap, path=spath)
    cols = _resolve_columns(pf.schema_arrow, fmap)
    cols.max_text_chars = max_text_chars
    return pf, cols, [f.name for f in pf.schema_arrow if pa.types.is_map(f.type)]


def _record_batches(pf: Any, batch_rows: int, spath: str) -> Iterator[tuple[int, Any]]:
    """``(rows before it, record batch)`` of the file; a read failure is an InputError naming the row,
    a file without rows an EmptyInputError."""
    import pyarrow as pa

    row0 = 0
    batches = pf.iter_batches(batch_size=batch_rows)
    while True:
        try:
            batch = next(batches, None)
        except (pa.ArrowException, OSError) as exc:
            raise InputError(f"cannot read the Parquet file after row {row0}: {exc}", path=spath,
                             line=row0 + 1) from exc
        if batch is None:
            break
        yield row0, batch
        row0 += batch.num_rows
    if row0 == 0:
        from ..errors import EmptyInputError

        raise EmptyInputError("the file holds no samples: expected at least one row", path=spath)


def _run_batch(batch: Any, row0: int, cols: _Columns, conv: RowConverter, revs: list[RetrievalEvaluator],
               levels: list[float], maker: LineMaker, map_cols: list[str], on_error: str,
               on_bad_row: Callable[[InputError], None] | None, ids: list[str],
               scores: dict[str, list[NDArray[np.float64]]], status: dict[str, list[NDArray[np.int8]]],
               fast_count: list[int], presence: FieldPresence, bad_rows: list[int]) -> list[str]:
    """Score one record batch; returns its ``results.jsonl`` lines in row order."""

    n = batch.num_rows
    names = [ev.name for ev in revs]
    x, rels, slow = _route(batch, cols, levels)
    # ids, in order, and the duplicate-id check shared with the Sample path
    row_ids, slow_items = _batch_ids(batch, row0, cols, conv, slow, map_cols, on_error)
    fast = ~slow
    # scores of the fast rows, per metric
    values: dict[str, NDArray[np.float64]] = {}
    if x is not None and fast.any():
        for lvl in levels:
            b = select_batch(x, rels[lvl], fast)
            for ev in revs:
                if ev.rel_level == lvl:
                    values[ev.name] = np.asarray(ev.kernel_scores(b), dtype=np.float64)
    # the Sample path for the rest
    good = [it for it in slow_items.values() if isinstance(it, Sample)]
    scored = asyncio.run(score_chunk(revs, good)) if good else {}
    good_pos = {id(s): k for k, s in enumerate(good)}
    # assemble the lines and the score table, in row order
    batch_scores = {m: np.full(n, np.nan) for m in names}
    batch_status = {m: np.full(n, UNDEFINED, dtype=np.int8) for m in names}
    fast_rows = np.flatnonzero(fast)
    fast_count[0] += len(fast_rows)
    if x is not None:
        no_labels = int(x.rel_none[fast_rows].sum())
        presence.note_bulk(len(fast_rows), {ev.name: {no_labels_field(ev): no_labels} for ev in revs})
    fast_lines: list[str] = []
    if x is not None and len(fast_rows):
        fast_lines = _fast_lines(x, rels, revs, levels, maker, fast_rows, values, row_ids, batch_scores,
                                 batch_status)
    if not slow_items:
        ids.extend(row_ids)
        for m in names:
            scores[m].append(batch_scores[m])
            status[m].append(batch_status[m])
        return fast_lines
    lines: list[str] = []
    f = 0
    for i in range(n):
        if not slow[i]:
            ids.append(row_ids[i])
            lines.append(fast_lines[f])
            f += 1
            continue
        item = slow_items[i]
        if isinstance(item, Sample):
            k = good_pos[id(item)]
            res = {m: scored[m][k] for m in names}
            presence.note_sample(item)
            presence.note(res)
            sid = item.id
        else:
            bad_rows[0] += 1
            if on_bad_row is not None:
                on_bad_row(item)
            res = {m: MetricResult.from_error(m, ev.version, item) for m, ev in zip(names, revs, strict=True)}
            sid = bad_row_id(item)
        ids.append(sid)
        for m in names:
            r = res[m]
            batch_status[m][i] = ERROR if r.error is not None else (UNDEFINED if r.score is None else SCORED)
            batch_scores[m][i] = np.nan if r.score is None else float(r.score)
        lines.append(record_line(sid, res, names) + "\n")
    for m in names:
        scores[m].append(batch_scores[m])
        status[m].append(batch_status[m])
    return lines


def _batch_ids(batch: Any, row0: int, cols: _Columns, conv: RowConverter, slow: NDArray[np.bool_],
               map_cols: list[str], on_error: str) -> tuple[list[str], dict[int, Sample | InputError]]:
    """The row ids of a record batch in order (a row without id: its 1-based position) with the
    reader's duplicate check, and the rows converted for the Sample path (``slow`` may grow)."""
    import pyarrow as pa
    import pyarrow.compute as pc

    n = batch.num_rows
    id_col = cols.by_field.get("id")
    if id_col is not None:
        arr = pc.cast(batch.column(batch.schema.get_field_index(id_col)), pa.string()) \
            if _is_str_or_int(batch.schema.field(id_col).type) else None
        raw_ids = arr.to_pylist() if arr is not None else [None] * n
    else:
        raw_ids = [None] * n
    seen = conv.seen
    if not slow.any():  # the common case: one bulk duplicate check instead of a loop
        positions = range(row0 + 1, row0 + n + 1)
        row_ids = [sid if sid else str(pos) for sid, pos in zip(raw_ids, positions, strict=True)]
        unique = set(row_ids)
        if len(unique) == n and seen.keys().isdisjoint(unique):
            seen.update(zip(row_ids, positions, strict=True))
            slow_items: dict[int, Sample | InputError] = {}
        else:
            row_ids, slow_items = _ids_row_by_row(batch, row0, raw_ids, slow, conv, map_cols, on_error)
    else:
        row_ids, slow_items = _ids_row_by_row(batch, row0, raw_ids, slow, conv, map_cols, on_error)
    return row_ids, slow_items


def _route(batch: Any, cols: _Columns,
           levels: list[float]) -> tuple[IdLabels | None, dict[float, IdRelevance], NDArray[np.bool_]]:
    """The flat arrays and id relevance of a record batch, and the rows that take the Sample path."""
    n = batch.num_rows
    if not cols.fast_types:
        return None, {}, np.ones(n, dtype=bool)
    x, hard_slow, flags = _extract(batch, cols)
    rels = {lvl: id_relevance(x, lvl) for lvl in levels}
    # a row with texts (or with no context id) takes the Sample path only when a label was not
    # found by id; so does a row whose text labels can never match its id-only contexts (rule 4
    # of relevance.py: undefined there)
    found = rels[levels[0]].label_found
    lrows = np.repeat(np.arange(n), x.lab_len)
    label_lost = np.bincount(lrows[~found], minlength=n) > 0
    none_found = (x.lab_len > 0) & (np.bincount(lrows[found], minlength=n) == 0)
    all_spaced = np.bincount(lrows[flags.label_spaced], minlength=n) == x.lab_len
    cannot = none_found & (x.ctx_len > 0) & ~flags.has_text & all_spaced
    slow = hard_slow | ((flags.has_text | (~flags.has_id & (x.ctx_len > 0))) & label_lost) | cannot
    return x, rels, slow


def _fast_lines(x: IdLabels, rels: dict[float, IdRelevance], revs: list[RetrievalEvaluator],
                levels: list[float], maker: LineMaker, fast_rows: NDArray[np.int64],
                values: dict[str, NDArray[np.float64]], row_ids: list[str],
                batch_scores: dict[str, NDArray[np.float64]],
                batch_status: dict[str, NDArray[np.int8]]) -> list[str]:
    """The ``results.jsonl`` lines of the fast rows (filling their scores and status in place)."""
    parts = []
    pats = {lvl: row_patterns(x, rels[lvl], fast_rows) for lvl in levels}
    for k, ev in enumerate(revs):
        v = values[ev.name]
        undefined = np.isnan(v) | x.rel_none[fast_rows]
        batch_scores[ev.name][fast_rows] = np.where(undefined, np.nan, v)
        batch_status[ev.name][fast_rows] = np.where(undefined, UNDEFINED, SCORED).astype(np.int8)
        parts.append(metric_parts(k, ev, rels[ev.rel_level], fast_rows, pats[ev.rel_level], v, maker))
    fast_ids = [row_ids[i] for i in fast_rows.tolist()]
    return ['{"id": ' + encode_basestring(sid) + ', "metrics": {' + ", ".join(ps) + "}}\n"
            for sid, *ps in zip(fast_ids, *parts, strict=True)]


def _ids_row_by_row(batch: Any, row0: int, raw_ids: list[Any], slow: NDArray[np.bool_], conv: RowConverter,
                    map_cols: list[str], on_error: str) -> tuple[list[str], dict[int, Sample | InputError]]:
    """Row ids in order with the reader's duplicate check; converts the rows that take the Sample
    path (marking a fast row with a repeated id as such, in place in ``slow``)."""
    import pyarrow as pa

    n = batch.num_rows
    slow_idx = np.flatnonzero(slow)
    records = iter(batch.take(pa.array(slow_idx, pa.int64())).to_pylist() if len(slow_idx) else [])
    slow_items: dict[int, Sample | InputError] = {}
    row_ids: list[str] = [""] * n
    seen = conv.seen

    def convert(record: dict[str, Any], i: int) -> None:
        for c in map_cols:
            if record.get(c) is not None:
                record[c] = dict(record[c])
        item = conv.convert(record, row0 + i + 1)
        if isinstance(item, InputError) and on_error == "raise":
            raise item
        slow_items[i] = item

    for i, is_slow in enumerate(slow.tolist()):
        if is_slow:
            convert(next(records), i)
            continue
        sid = raw_ids[i] or str(row0 + i + 1)
        if sid in seen:  # a duplicate id: the Sample path words the error
            slow[i] = True
            convert(batch.slice(i, 1).to_pylist()[0], i)
            continue
        seen[sid] = row0 + i + 1
        row_ids[i] = sid
    return row_ids, slow_items
