"""The columnar engine's arrays: one Arrow record batch of retrieval rows -> kernel values and patterns.

What runs where the batch is (this process, or a Ray worker): :func:`score_batch` reads the
batch's contexts and labels as flat arrays (:func:`_extract`), matches labels to context ids for
every row at once (:func:`id_relevance`), decides which rows need the ``Sample`` path
(:func:`route`), runs the metrics' kernels over the rest (:func:`select_batch`) and groups those
rows by result pattern (:func:`row_patterns`). Its :class:`BatchScores` is all the driver needs to
write the rows through :meth:`ragmeter.results.RunWriter.add_columns` (or, formatted where the
batch is, its :class:`~ragmeter.results.Lines`). Nothing here knows files or output.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from numpy.typing import NDArray

from .._arrowbuf import factorize
from .._arrowbuf import np_bool as _np_bool
from .._arrowbuf import np_num as _np_num
from ..contract import KernelEvaluator
from ..io.records import DEFAULT_MAX_TEXT_CHARS, EVALUABLE_FIELDS, canonical
from ..metrics.retrieval import RelevanceBatch
from ..metrics.retrieval.relevance import SPACED_LABEL
from ..results import Lines
from ..types import CANONICAL_FIELDS, CONTEXT_FIELDS, MAX_STORED_ITEMS

#: Rankings longer than this get a pattern of their own (the pattern key is a bitmask).
MASK_BITS = 52


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
    """Per-position ``rel``/``gain``/``covered``/``nonrel``, per-row ``num_rel``/``num_nonrel``, and where each
    label was found."""

    rel: NDArray[np.bool_]
    gain: NDArray[np.float64]
    covered: NDArray[np.float64]
    num_rel: NDArray[np.float64]
    nonrel: NDArray[np.bool_]
    num_nonrel: NDArray[np.float64]
    label_found: NDArray[np.bool_]
    ideal_row: NDArray[np.int64] = field(repr=False)
    ideal: NDArray[np.float64] = field(repr=False)


def id_relevance(x: IdLabels, rel_level: float, *, dense: bool | None = None) -> IdRelevance:
    """Relevance rule 1 (labels matched by id) for every row of ``x`` at once.

    A label is found at the first position of its row whose context id equals it; a position's
    gain is the highest grade found there (0 if none is positive), it is relevant when a label with
    grade >= ``rel_level`` is found there and covers that many labels; ``num_rel`` counts the
    row's labels with grade >= ``rel_level``; a position that is not relevant where a label with grade
    ``0 <= g < rel_level`` is found is judged non-relevant (``nonrel``, counted per row in ``num_nonrel``);
    ``ideal`` holds each row's positive grades, grouped
    by row (``ideal_row``) and sorted descending within it.

    ``dense`` picks how labels are matched (None: :func:`_dense_fits` decides; both give the same
    result): :func:`_match_dense` or :func:`_match_sorted`.
    """
    n = len(x.ctx_len)
    n_ctx = len(x.ctx_code)
    row_c = np.repeat(np.arange(n, dtype=np.int64), x.ctx_len)
    row_l = np.repeat(np.arange(n, dtype=np.int64), x.lab_len)
    if dense is None:
        dense = _dense_fits(x)
    found, where = (_match_dense if dense else _match_sorted)(x, row_c, row_l)
    grades = x.lab_grade[found]
    gain = np.zeros(n_ctx, dtype=np.float64)
    np.maximum.at(gain, where, grades)  # starts at 0: a grade <= 0 leaves no gain
    hit = grades >= rel_level
    covered = np.bincount(where[hit], minlength=n_ctx).astype(np.float64)
    num_rel = np.bincount(row_l, weights=(x.lab_grade >= rel_level).astype(np.float64), minlength=n)
    low = (x.lab_grade >= 0) & (x.lab_grade < rel_level)
    nonrel = np.zeros(n_ctx, dtype=bool)
    nonrel[where[(grades >= 0) & ~hit]] = True
    nonrel &= covered == 0
    num_nonrel = np.bincount(row_l, weights=low.astype(np.float64), minlength=n)
    positive = x.lab_grade > 0
    prow, pgrade = row_l[positive], x.lab_grade[positive]
    order = np.lexsort((-pgrade, prow))
    return IdRelevance(covered > 0, gain, covered, num_rel.astype(np.float64), nonrel,
                       num_nonrel.astype(np.float64), found, prow[order], pgrade[order])


#: The dense match compares every label with every position of a (padded) row: used while the
#: padded rows are at most this many times the contexts (and labels x width at most as many).
DENSE_SLACK = 4
#: ... and rows are at most this long.
DENSE_MAX_WIDTH = 64


def _dense_fits(x: IdLabels) -> bool:
    """Whether :func:`_match_dense` suits ``x`` (short, even rankings; see :data:`DENSE_SLACK`)."""
    width = int(x.ctx_len.max(initial=0))
    budget = DENSE_SLACK * (len(x.ctx_code) + len(x.ctx_len))
    return 0 < width <= DENSE_MAX_WIDTH and len(x.ctx_len) * width <= budget and len(x.lab_code) * width <= budget


def _match_dense(x: IdLabels, row_c: NDArray[np.int64],
                 row_l: NDArray[np.int64]) -> tuple[NDArray[np.bool_], NDArray[np.int64]]:
    """Per label: found among its row's context ids, and the first position (flat) holding it;
    by a padded ``rows x width`` table of context id codes (-2: no id or padding, so a label
    with no id, -1, matches nothing)."""
    n, width = len(x.ctx_len), int(x.ctx_len.max(initial=0))
    codes = np.where(x.ctx_code >= 0, x.ctx_code, -2)
    offsets = np.zeros(n, dtype=np.int64)  # row r's k-th context is at offsets[r] + k
    np.cumsum(x.ctx_len[:-1], out=offsets[1:])
    if len(codes) == n * width:  # every row as long: the table is the codes as they are
        table = codes.reshape(n, width)
    else:
        flat = np.full(n * width, -2, dtype=np.int64)
        flat[np.arange(len(codes), dtype=np.int64) + (row_c * width - offsets[row_c])] = codes
        table = flat.reshape(n, width)
    eq = table[row_l] == x.lab_code[:, None]
    first = eq.argmax(axis=1)  # the first True (0 when there is none)
    found = eq[np.arange(len(first)), first]
    return found, offsets[row_l[found]] + first[found]


def _match_sorted(x: IdLabels, row_c: NDArray[np.int64],
                  row_l: NDArray[np.int64]) -> tuple[NDArray[np.bool_], NDArray[np.int64]]:
    """:func:`_match_dense`'s result for any shape: the (row, id) keys of the contexts sorted
    once (the first position of each kept), each label's key searched among them."""
    width = int(max(x.ctx_code.max(initial=-1), x.lab_code.max(initial=-1))) + 2
    has_id = np.flatnonzero(x.ctx_code >= 0)
    keys_c = row_c[has_id] * width + x.ctx_code[has_id]
    uniq, first = np.unique(keys_c, return_index=True)  # the first position of each (row, id)
    if not len(uniq):
        return np.zeros(len(x.lab_code), dtype=bool), np.zeros(0, dtype=np.int64)
    keys_l = row_l * width + x.lab_code
    j = np.searchsorted(uniq, keys_l)
    jc = np.minimum(j, len(uniq) - 1)
    found = (j < len(uniq)) & (uniq[jc] == keys_l)
    return found, has_id[first[jc[found]]]


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
    num_nonrel = np.where(x.rel_none, np.nan, r.num_nonrel)[rows]
    return RelevanceBatch(offsets, r.rel[row_c], r.gain[row_c], r.covered[row_c], num_rel, ioffsets,
                          r.ideal[ikeep], nonrel=r.nonrel[row_c], num_nonrel=num_nonrel)


# ---- reading one record batch ---------------------------------------------------------------------


@dataclass(frozen=True)
class Columns:
    """Which column gives which canonical field, and whether its type suits the fast path."""

    by_field: dict[str, str]
    fast_types: bool
    max_text_chars: int | None = DEFAULT_MAX_TEXT_CHARS
    #: Columns that give no field ragmeter reads: a row with a value in one keeps it as metadata
    #: (written beside its results), so it takes the Sample path.
    extra: tuple[str, ...] = ()


def resolve_columns(schema: Any, fmap: Mapping[str, str],
                    max_text_chars: int | None = DEFAULT_MAX_TEXT_CHARS) -> Columns:
    """The columns of ``schema`` (renamed by ``fmap``) and whether their types suit the fast path
    (a row with a text over ``max_text_chars`` leaves it: the Sample path words the error)."""
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
            if "id" not in names:
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
    extra = tuple(name for target, name in by_field.items() if target not in CANONICAL_FIELDS)
    return Columns(by_field, ok, max_text_chars, extra=extra)


def _is_str(t: Any) -> bool:
    import pyarrow as pa

    return bool(pa.types.is_string(t) or pa.types.is_large_string(t) or pa.types.is_null(t))


def _is_str_or_int(t: Any) -> bool:
    import pyarrow as pa

    return _is_str(t) or bool(pa.types.is_integer(t))


def _lengths(col: Any) -> NDArray[np.int64]:
    """Per row of a list column: its number of items (0 for a null row)."""
    return _np_num(col.value_lengths()).astype(np.int64)


def _per_row_any(flags: NDArray[np.bool_], lengths: NDArray[np.int64]) -> NDArray[np.bool_]:
    rows = np.repeat(np.arange(len(lengths)), lengths)
    return np.bincount(rows[flags], minlength=len(lengths)) > 0


@dataclass
class _RowFlags:
    """Per-row / per-label facts :func:`_run_batch` needs to route a row (see :func:`_extract`)."""

    has_text: NDArray[np.bool_]  # a context with a non-empty text
    has_id: NDArray[np.bool_]  # a context with an id
    label_spaced: NDArray[np.bool_]  # per label: it has inner whitespace (a text, not an id)


def _extract(batch: Any, cols: Columns) -> tuple[IdLabels, NDArray[np.bool_], _RowFlags]:
    """The flat arrays of one record batch, the rows that must take the Sample path, and the
    facts that send more rows there once labels are matched (:class:`_RowFlags`)."""
    n = batch.num_rows
    get = cols.by_field.get

    def column(fieldname: str) -> Any:
        name = get(fieldname)
        return None if name is None else batch.column(batch.schema.get_field_index(name))

    slow = _odd_fields(n, column, cols.max_text_chars)
    for name in cols.extra:  # a value ragmeter keeps as metadata: written on the Sample path
        slow |= _np_bool(batch.column(batch.schema.get_field_index(name)).is_valid())
    ctx = _contexts(column("contexts"), cols.max_text_chars)
    slow |= ctx.slow
    rel = column("relevant")
    labels = _labels(n, rel)
    slow |= labels.slow
    ref = column("reference")
    if ref is not None:
        slow |= labels.rel_none & _np_bool(ref.is_valid())  # relevance from the reference answer: texts
    ctx_code, lab_code = _codes(ctx.ids, ctx.id_valid, labels.keys)
    if labels.is_map and len(lab_code):
        slow |= _twice(n, labels.lab_len, lab_code)
    x = IdLabels(ctx.ctx_len, ctx_code, labels.lab_len, lab_code, labels.grades, labels.rel_none)
    return x, slow, _RowFlags(ctx.has_text, ctx.has_id, _spaced(labels.keys))


def _odd_fields(n: int, column: Any, max_text_chars: int | None) -> NDArray[np.bool_]:
    """Rows Sample would reject or read otherwise: a text field of another type or over the limit,
    every field empty, metadata (kept beside the results on that path)."""
    import pyarrow as pa
    import pyarrow.compute as pc

    slow = np.zeros(n, dtype=bool)
    present = np.zeros(n, dtype=bool)
    for f in EVALUABLE_FIELDS:
        c = column(f)
        if c is None:
            continue
        valid = _np_bool(c.is_valid())
        present |= valid
        if f in ("query", "answer", "reference") and not _is_str(c.type):
            slow |= valid
        elif f in ("query", "answer", "reference") and max_text_chars and not pa.types.is_null(c.type):
            slow |= _np_num(pc.utf8_length(c)) > max_text_chars
    slow |= ~present  # "every field is empty": an InputError
    meta = column("metadata")
    if meta is not None:
        slow |= _np_bool(meta.is_valid())
    return slow


@dataclass
class _Contexts:
    ctx_len: NDArray[np.int64]
    ids: Any  # the contexts' ids as an Arrow string array (flat)
    id_valid: NDArray[np.bool_]
    has_text: NDArray[np.bool_]
    has_id: NDArray[np.bool_]
    slow: NDArray[np.bool_]


def _contexts(ctx: Any, max_text_chars: int | None) -> _Contexts:
    """The contexts column flattened: lengths, ids, which rows have texts / ids, and the rows the
    Sample path must take (contexts absent or too long, a null context or one with neither id nor
    text, a text over the limit)."""
    import pyarrow as pa
    import pyarrow.compute as pc

    slow = ~_np_bool(ctx.is_valid())  # contexts absent: undefined ("no contexts field") on that path
    ctx_len = _lengths(ctx)
    slow |= ctx_len > MAX_STORED_ITEMS  # a ranking longer than the details budget: cut on that path
    flat = pc.list_flatten(ctx)
    ctx_null = _np_bool(flat.is_null())
    ids = pc.cast(flat.field("id"), pa.string())
    id_valid = _np_bool(ids.is_valid()) & ~ctx_null
    names = {flat.type.field(i).name for i in range(flat.type.num_fields)}
    if "text" in names and not pa.types.is_null(flat.type.field("text").type):  # null type: every text null
        text = flat.field("text")
        text_valid = _np_bool(text.is_valid())
        text_len = _np_num(pc.utf8_length(text)).astype(np.int64)
        text_nonempty = text_valid & (text_len > 0)
        if max_text_chars:  # a text over the limit: the input error is worded on the Sample path
            slow |= _per_row_any(text_len > max_text_chars, ctx_len)
    else:
        text_valid = text_nonempty = np.zeros(len(flat), dtype=bool)
    for name in names.difference(CONTEXT_FIELDS):  # a context's metadata: kept on the Sample path
        slow |= _per_row_any(_np_bool(flat.field(name).is_valid()) & ~ctx_null, ctx_len)
    slow |= _per_row_any(ctx_null | (~id_valid & ~text_valid), ctx_len)
    return _Contexts(ctx_len, ids, id_valid, _per_row_any(text_nonempty & ~ctx_null, ctx_len),
                     _per_row_any(id_valid, ctx_len), slow)


@dataclass
class _Labels:
    rel_none: NDArray[np.bool_]
    lab_len: NDArray[np.int64]
    keys: Any  # the labels' ids as an Arrow string array (flat)
    grades: NDArray[np.float64]
    is_map: bool
    slow: NDArray[np.bool_]


def _labels(n: int, rel: Any) -> _Labels:
    """The ``relevant`` column flattened (a list of ids: grade 1 each; a map: its grades); rows
    with a null, NaN or infinite grade or a null label take the Sample path, which words the error."""
    import pyarrow as pa
    import pyarrow.compute as pc

    slow = np.zeros(n, dtype=bool)
    if rel is None:
        return _Labels(np.ones(n, dtype=bool), np.zeros(n, dtype=np.int64), pa.array([], pa.string()),
                       np.zeros(0, dtype=np.float64), False, slow)
    rel_none = ~_np_bool(rel.is_valid())
    if pa.types.is_map(rel.type):
        entries = pa.list_(pa.struct([("key", rel.type.key_type), ("value", rel.type.item_type)]))
        rel_list = rel.cast(entries)
        lab_len = _lengths(rel_list)
        flat_rel = pc.list_flatten(rel_list)
        keys = pc.cast(flat_rel.field("key"), pa.string())
        items = flat_rel.field("value")
        gvalid = _np_bool(items.is_valid())
        grades = _np_num(pc.cast(items, pa.float64()))
        bad_grade = ~gvalid | ~np.isfinite(grades)
        slow |= _per_row_any(bad_grade, lab_len)
        grades[bad_grade] = 0.0
        return _Labels(rel_none, lab_len, keys, grades, True, slow)
    lab_len = _lengths(rel)
    keys = pc.cast(pc.list_flatten(rel), pa.string())
    slow |= _per_row_any(~_np_bool(keys.is_valid()), lab_len)
    return _Labels(rel_none, lab_len, keys, np.ones(len(keys), dtype=np.float64), False, slow)


def _codes(ids: Any, id_valid: NDArray[np.bool_], keys: Any) -> tuple[NDArray[np.int64], NDArray[np.int64]]:
    """One integer code per distinct id, for the contexts (-1: no id) and the labels."""
    import pyarrow as pa

    both = pa.concat_arrays([ids.combine_chunks() if hasattr(ids, "combine_chunks") else ids,
                             keys.combine_chunks() if hasattr(keys, "combine_chunks") else keys])
    codes = both.dictionary_encode().indices
    codes_np = _np_num(codes, -1).astype(np.int64)
    n_ctx = len(ids)
    return np.where(id_valid, codes_np[:n_ctx], -1), codes_np[n_ctx:]


def _twice(n: int, lab_len: NDArray[np.int64], lab_code: NDArray[np.int64]) -> NDArray[np.bool_]:
    """Rows with a label key given twice (the Sample path keeps the last grade: left to it)."""
    lrow = np.repeat(np.arange(n, dtype=np.int64), lab_len)
    width = int(lab_code.max()) + 1
    u, counts = np.unique(lrow * width + lab_code, return_counts=True)
    out = np.zeros(n, dtype=bool)
    out[np.unique(u[counts > 1] // width)] = True
    return out


def _spaced(keys: Any) -> NDArray[np.bool_]:
    """Per label: it has inner whitespace (a text, not an id)."""
    import pyarrow.compute as pc

    if not len(keys):
        return np.zeros(0, dtype=bool)
    return _np_bool(pc.match_substring_regex(keys, SPACED_LABEL.pattern))


def route(batch: Any, cols: Columns,
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



# ---- what the driver needs back -------------------------------------------------------------------

#: A pattern: (ranking length, relevant ranks, labelled relevant count, no labels at all).
Pattern = tuple[int, tuple[int, ...], int, bool]


@dataclass
class BatchScores:
    """The kernels' output for one record batch (picklable: what a Ray task returns).

    ``slow`` marks the rows the ``Sample`` path must take; the others (the *fast* rows, in order)
    have ``values[metric]`` (NaN: undefined) and, per relevance level, a pattern
    ``keys[level][inv[level][j]]`` for the j-th fast row (:data:`Pattern`). ``lines``, when set,
    are the fast rows' ``results.jsonl`` lines formatted where the batch was scored (a Ray
    worker); ``values``, ``keys`` and ``inv`` are then left empty.
    """

    slow: NDArray[np.bool_]
    values: dict[str, NDArray[np.float64]]
    keys: dict[float, list[Pattern]]
    inv: dict[float, NDArray[np.int64]]
    rel_none: NDArray[np.bool_]  # per fast row: no labels (``relevant`` null)
    lines: Lines | None = None


def score_batch(batch: Any, cols: Columns, evaluators: list[KernelEvaluator]) -> BatchScores:
    """Route, score and pattern one record batch (no ids, no output: see :class:`BatchScores`)."""
    levels = sorted({ev.rel_level for ev in evaluators})
    x, rels, slow = route(batch, cols, levels)
    fast = ~slow
    if x is None or not fast.any():
        return BatchScores(slow, {}, {}, {}, np.zeros(0, dtype=bool))
    fast_rows = np.flatnonzero(fast)
    values: dict[str, NDArray[np.float64]] = {}
    keys: dict[float, list[Pattern]] = {}
    inv: dict[float, NDArray[np.int64]] = {}
    for lvl in levels:
        b = select_batch(x, rels[lvl], fast)
        for ev in evaluators:
            if ev.rel_level == lvl:
                values[ev.name] = np.asarray(ev.kernel_scores(b), dtype=np.float64)
        keys[lvl], inv[lvl] = row_patterns(x, rels[lvl], fast_rows)
    return BatchScores(slow, values, keys, inv, x.rel_none[fast_rows])


def row_patterns(x: IdLabels, r: IdRelevance, rows: NDArray[np.int64]) -> tuple[list[Pattern], NDArray[np.int64]]:
    """The distinct :data:`Pattern` s of ``rows`` and each row's index among them."""
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
        key = (mask * 64 + clen) * top + np.where(none, 0, nrel + 1)
        inv, first = factorize(key)
        uk = key[first]
        tag, base = uk % top, uk // top
        uniq: Iterable[tuple[Any, Any, Any, Any]] = zip(
            (base % 64).tolist(), (base // 64).tolist(), np.maximum(tag - 1, 0).tolist(), (tag == 0).tolist(),
            strict=True)
    else:
        u2, inv = np.unique(np.stack([clen, mask, nrel, none.astype(np.int64)], axis=1), axis=0,
                            return_inverse=True)
        uniq = ((a, b, c, bool(d)) for a, b, c, d in u2.tolist())
    keys: list[Pattern] = [(ln, tuple(q + 1 for q in range(ln) if (m >> q) & 1), nr, nn) for ln, m, nr, nn in uniq]
    inv = inv.reshape(-1).astype(np.int64)
    for j in np.flatnonzero(length > MASK_BITS).tolist():  # a pattern of its own, ranks read in full
        row = int(rows[j])
        ranks = tuple(int(q) + 1 for q in np.flatnonzero(r.rel[starts[row]:starts[row + 1]]))
        inv[j] = len(keys)
        keys.append((int(length[j]), ranks, int(nrel[j]), bool(none[j])))
    return keys, inv
