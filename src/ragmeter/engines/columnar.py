"""The columnar fast path: retrieval metrics over id-labelled Parquet data without a ``Sample`` per row.

:func:`evaluate_parquet` reads a Parquet file record batch by record batch with pyarrow. For the
rows whose relevance is decided by ids alone it builds the
:class:`~ragmeter.metrics.retrieval.RelevanceBatch` CSR arrays directly with vectorised
Arrow / numpy operations (list offsets, flatten, a dictionary-encoded join of each row's retrieved
ids to its labelled ids) and runs the same kernels the :class:`Sample` path runs. Every other row
(text contexts with a label not found by id, a reference answer without labels, anything
:class:`~ragmeter.types.Sample` would reject) takes the ordinary path: the reader's
:class:`~ragmeter.io.records.RowConverter` and :func:`ragmeter.evaluator.score_chunk`. The output
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

Who does what: :func:`ragmeter.engines._arrow.score_batch` turns a record batch into kernel values
and result patterns (pure: the Ray engine runs it on its workers); :class:`ColumnarSink` gives
the rows their ids (duplicate check), scores the rows the fast path cannot take on the ``Sample``
path, and hands everything to the one :class:`~ragmeter.results.RunWriter`
(:meth:`~ragmeter.results.RunWriter.add_columns`), whose text for a pattern comes from
:meth:`KernelEvaluator.result_of`, the function the ``Sample`` path words its results with.
"""

from __future__ import annotations

import asyncio
import functools
import os
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, replace
from typing import Any, Protocol

import numpy as np
from numpy.typing import NDArray

from .._arrowbuf import take_rows
from ..contract import KernelEvaluator
from ..errors import EmptyInputError, InputError, InvalidParameterError
from ..evaluator import Plan, plan, score_chunk
from ..io import read_samples
from ..io.fields import absent_result, missing_field
from ..io.options import ReadOptions, read_options
from ..io.readers import arrow_records, detect_format, open_parquet
from ..io.records import DEFAULT_MAX_TEXT_CHARS, RowConverter, check_columns
from ..metrics.retrieval import RankedList
from ..metrics.retrieval.relevance import Relevance
from ..registry import get_evaluator
from ..results import PatternColumn, RunResult, RunWriter
from ..types import MetricResult, Sample
from . import warn_alias
from ._arrow import BatchScores, Columns, Pattern, resolve_columns, score_batch
from ._ids import HashedIds, block_ids
from .driver import RunState, bad_row_id
from .driver import run as run_units

#: Rows per Parquet record batch read by the fast path.
BATCH_ROWS = 65536


def kernel_evaluators(metrics: Sequence[str] | None) -> list[KernelEvaluator] | None:
    """The evaluators of ``metrics``, built once, when every one offers a vectorised kernel
    (:class:`~ragmeter.contract.KernelEvaluator`: what the fast path computes); else None."""
    if not metrics:
        return None
    try:
        evaluators = [get_evaluator(m) for m in metrics]
    except Exception:  # an unknown or judged metric: the ordinary path raises the right error
        return None
    return evaluators if all(isinstance(ev, KernelEvaluator) for ev in evaluators) else None  # type: ignore[return-value]


def columnar_supported(metrics: Sequence[str] | None) -> bool:
    """True when every metric in ``metrics`` has a kernel (:func:`kernel_evaluators`)."""
    return kernel_evaluators(metrics) is not None


def retrieval_evaluators(metrics: Sequence[str]) -> list[KernelEvaluator]:
    """The evaluators of ``metrics``; InvalidParameterError when one has no kernel."""
    evaluators = kernel_evaluators(metrics)
    if evaluators is None:
        raise InvalidParameterError(
            f"metrics: expected retrieval metrics only for the columnar path, got {list(metrics)}; "
            "use ragmeter.evaluate for the others")
    return evaluators


# ---- a pattern's result: the Sample path's own wording ---------------------------------------------

_NO_LABELS: list[Sample] = []


def no_labels_field(ev: KernelEvaluator) -> str:
    """The field :func:`~ragmeter.io.fields.missing_field` names for a row with contexts but neither
    ``relevant`` nor ``reference`` (what the Sample path finds absent there)."""
    if not _NO_LABELS:
        _NO_LABELS.append(Sample.from_record({"contexts": [{"id": "-"}]}, default_id="-"))
    field = missing_field(ev.spec, _NO_LABELS[0])
    assert field is not None
    return field


def pattern_result(ev: KernelEvaluator, key: Pattern, value: float) -> MetricResult:
    """The result ``ev`` gives a fast row of pattern ``key`` whose kernel value is ``value``: the
    field-absence result when it has no labels, else :meth:`KernelEvaluator.result_of` on the
    pattern's relevance (labels matched by id at the relevant ranks)."""
    length, ranks, num_rel, none = key
    if none:
        return absent_result(ev.name, ev.version, no_labels_field(ev))
    hit = set(ranks)
    rel = tuple(q in hit for q in range(1, length + 1))
    relevance = Relevance(RankedList(rel, (), (), float(num_rel)), "labels",
                          tuple("id" if r else None for r in rel))
    return ev.result_of(relevance, value)


def pattern_columns(evaluators: Sequence[KernelEvaluator],
                    results: Sequence[Callable[[Pattern, float], MetricResult]], scores: BatchScores,
                    kept: NDArray[np.bool_]) -> list[PatternColumn]:
    """The :class:`~ragmeter.results.PatternColumn` of each metric over the fast rows of ``scores``
    selected by ``kept`` (``results[k]``: :func:`pattern_result` of ``evaluators[k]``); none when no
    row is kept."""
    if not kept.any():
        return []
    return [PatternColumn(ev.name, scores.values[ev.name][kept], scores.keys[ev.rel_level],
                          scores.inv[ev.rel_level][kept], result)
            for ev, result in zip(evaluators, results, strict=True)]


# ---- rows as the reader sees them -------------------------------------------------------------------


@dataclass
class ArrowRows:
    """A record batch of a Parquet file: row ``i`` is at row ``row0 + i + 1`` of the file."""

    batch: Any
    row0: int
    map_cols: list[str]

    @property
    def num_rows(self) -> int:
        """Rows in the batch."""
        return int(self.batch.num_rows)

    def position(self, i: int) -> int:
        """The 1-based position of row ``i`` (its default id and the line errors name)."""
        return self.row0 + i + 1

    def where(self, i: int) -> str:
        """Position detail for row ``i``'s messages (none for Parquet)."""
        return ""

    @property
    def positions(self) -> range:
        """Every row's :meth:`position`, in order."""
        return range(self.row0 + 1, self.row0 + self.num_rows + 1)

    def records(self, rows: list[int]) -> list[Any]:
        """The raw records of ``rows`` as the reader gives them (map columns as dicts)."""

        return arrow_records(take_rows(self.batch, rows)) if rows else []


class ColumnarSink:
    """The driver's side of a columnar run: ids (and the duplicate check), the Sample path for the
    rows the fast path cannot take, counts, progress, and the one :class:`RunWriter`."""

    def __init__(self, run: Plan, state: RunState, conv: RowConverter, cols: Columns) -> None:
        self.run, self.state, self.conv, self.cols = run, state, conv, cols
        self.writer, self.presence = state.writer, state.presence
        self.evaluators: list[KernelEvaluator] = run.evaluators  # type: ignore[assignment]
        self.on_error = conv.read.on_error
        self.fast_rows = 0
        self._results = [functools.partial(pattern_result, ev) for ev in self.evaluators]
        self._bad_at = 0

    async def write(self, rows: Any, scores: BatchScores) -> None:
        """Write one batch's rows, in order (``rows``: :class:`ArrowRows` or alike); the fast rows
        from ``scores.lines`` when the batch was formatted where it was scored, else formatted here.
        A bad row with ``on_error="raise"`` raises after the rows before it are written."""
        fast_before = ~scores.slow
        forced = getattr(rows, "forced_slow", None)  # rows the reader could not hand to the kernels
        slow = scores.slow | forced if forced is not None else scores.slow.copy()
        try:
            row_ids, items = self._ids(rows, slow)
        except InputError:
            await self._write_before(rows, self._bad_at)
            raise
        kept = ~slow[fast_before]  # a fast row whose id was seen before now takes the Sample path
        n_fast = int(kept.sum())
        none_rows = np.flatnonzero(fast_before)[kept][scores.rel_none[kept]] if n_fast else np.zeros(0, np.int64)
        # the fast rows' absent-field counts are noted where the first of them stands among the
        # Sample path's rows: summary.json lists fields in the order the Sample path first meets them
        bulk = {ev.name: {no_labels_field(ev): len(none_rows)} for ev in self.evaluators}
        others = await self._others(items, int(none_rows[0]) if len(none_rows) else rows.num_rows,
                                    functools.partial(self.presence.note_bulk, n_fast, bulk))
        self.fast_rows += n_fast
        inputs = {i: item.input_metadata() for i, item in items.items() if isinstance(item, Sample)}
        if scores.lines is not None:
            lines = scores.lines if n_fast == scores.lines.count else scores.lines.take(kept)
            self.writer.add_lines(row_ids, lines, others, inputs)
        else:
            self.writer.add_columns(row_ids, pattern_columns(self.evaluators, self._results, scores, kept), others,
                                    inputs)
        engine = self.run.info.setdefault("engine", {"name": "local", "path": "columnar"})
        if isinstance(engine, dict):
            engine["columnar_rows"] = self.fast_rows
        if self.state.progress is not None:
            self.state.progress(rows.num_rows)

    async def _write_before(self, rows: Any, k: int) -> None:
        """Write rows ``0 .. k`` of a block whose row ``k`` is bad (``on_error="raise"``): the
        Sample path scores them (their ids passed the duplicate check already), as it scores every
        row before a bad one."""
        conv = RowConverter(self.conv.path, self.conv.read, unit=self.conv.unit)
        records = rows.records(list(range(k)))
        samples = [conv.convert(rec, rows.position(i), rows.where(i)) for i, rec in enumerate(records)]
        good = [s for s in samples if isinstance(s, Sample)]
        scored = await score_chunk(self.evaluators, good) if good else {}
        for j, sample in enumerate(good):
            self.state.add_sample(sample, {m: scored[m][j] for m in self.run.names})

    async def _others(self, items: dict[int, Sample | InputError], bulk_at: int,
                note_bulk: Callable[[], None]) -> dict[int, dict[str, MetricResult]]:
        """The results of the rows on the Sample path (bad rows recorded as errors), by row;
        ``note_bulk`` notes the fast rows' counts before the first row after ``bulk_at``."""
        good = [(i, it) for i, it in items.items() if isinstance(it, Sample)]
        scored = await score_chunk(self.evaluators, [s for _, s in good]) if good else {}
        names = self.run.names
        others: dict[int, dict[str, MetricResult]] = {}
        k = 0
        pending: Callable[[], None] | None = note_bulk
        for i in sorted(items):
            if pending is not None and i > bulk_at:
                pending()
                pending = None
            item = items[i]
            if isinstance(item, Sample):
                res = {m: scored[m][k] for m in names}
                k += 1
                self.presence.note_sample(item)
                self.presence.note(res)
            else:
                self.state.bad_rows += 1
                if self.state.on_bad_row is not None:
                    self.state.on_bad_row(item)
                res = {ev.name: MetricResult.from_error(ev.name, ev.version, item) for ev in self.evaluators}
            others[i] = res
        if pending is not None:
            pending()
        return others

    def _ids(self, rows: Any, slow: NDArray[np.bool_]) -> tuple[list[str], dict[int, Sample | InputError]]:
        """The row ids in order (a row without id: its position) with the reader's duplicate check,
        and the rows converted for the Sample path (``slow`` grows by the fast rows whose id is
        taken: the Sample path words that error). A block with no row for the Sample path and no
        id seen before (:class:`~ragmeter.engines._ids.HashedIds`, the converter's ``seen``) or
        repeated is a few array operations; any other is walked row by row (:meth:`_walk`)."""
        seen = self.conv.seen
        positions = getattr(rows, "positions", None) or [rows.position(i) for i in range(rows.num_rows)]
        ids, hashes = self._block_ids(rows, positions)
        before, order = seen.known(ids, hashes)  # type: ignore[attr-defined]
        ordered = hashes[order]
        if not slow.any() and not before.any() and not (ordered[1:] == ordered[:-1]).any():
            seen.add_many(ids, np.asarray(positions, dtype=np.int64), hashes, order)  # type: ignore[attr-defined]
            return ids, {}
        return self._walk(rows, slow, list(ids), before.tolist(), list(positions))

    def _block_ids(self, rows: Any, positions: Sequence[int]) -> tuple[list[str], NDArray[np.uint64]]:
        """The block's ids and their hashes (:func:`~ragmeter.engines._ids.block_ids`)."""
        return block_ids(rows.batch, self.cols, positions)

    def _walk(self, rows: Any, slow: NDArray[np.bool_], row_ids: list[str], before: list[bool],
              positions: list[int]) -> tuple[list[str], dict[int, Sample | InputError]]:
        """:meth:`_ids` row by row: ``before[i]`` tells whether an earlier block had row ``i``'s id;
        a row taking this block's id again is the duplicate (the Sample path words it)."""
        seen = self.conv.seen
        for i, is_slow in enumerate(slow.tolist()):
            if not is_slow and before[i]:
                slow[i] = True
        todo = [i for i, is_slow in enumerate(slow.tolist()) if is_slow]
        records = dict(zip(todo, rows.records(todo), strict=True))
        here: set[str] = set()  # ids this block gave so far
        items: dict[int, Sample | InputError] = {}
        for i, is_slow in enumerate(slow.tolist()):
            if not is_slow and row_ids[i] in here:  # repeated within this block: the later row
                slow[i] = True
                records[i] = rows.records([i])[0]
            if slow[i]:
                record = records[i]
                item = record if isinstance(record, InputError) else self.conv.convert(record, positions[i],
                                                                                         rows.where(i))
                if isinstance(item, InputError):
                    if self.on_error == "raise":
                        self._bad_at = i
                        raise item
                    row_ids[i] = bad_row_id(item)
                else:
                    row_ids[i] = item.id
                    here.add(item.id)  # the converter noted it in ``seen``
                items[i] = item
            else:
                seen[row_ids[i]] = positions[i]
                here.add(row_ids[i])
        return row_ids, items


# ---- the run ------------------------------------------------------------------------------------


class Source(Protocol):
    """Where a columnar run's rows come from, one implementation per file format.

    :meth:`blocks` yields row blocks (:class:`ArrowRows` or alike: a ``batch`` whose columns
    :attr:`columns` names, ``num_rows``, ``position(i)``, ``where(i)``, ``records(rows)``,
    optionally ``forced_slow``); :attr:`columns` is set once the first block is read; :attr:`keys`
    are the file's column names for the "no row has this field" message (None: noted from the rows).
    """

    unit: str
    columns: Columns | None
    keys: list[str] | None

    def blocks(self) -> Iterator[Any]:
        """The file's row blocks, in order."""
        ...


def evaluate_parquet(path: str | os.PathLike[str], metrics: Sequence[str], *, out_dir: str | os.PathLike[str],
                     on_error: str = "raise", field_map: dict[str, str] | None = None,
                     max_text_chars: int | None = DEFAULT_MAX_TEXT_CHARS, **options: Any) -> RunResult:
    """Deprecated: ``ragmeter.evaluate(path, metrics, out_dir=out_dir, keep_records=False, ...)``, which
    takes this columnar path (:func:`run_columnar`) for a Parquet file and retrieval metrics."""
    warn_alias("ragmeter.engines.columnar.evaluate_parquet")
    read = read_options(on_error=on_error, field_map=field_map, format="parquet", max_text_chars=max_text_chars)
    return run_columnar(path, metrics, read=read, out_dir=out_dir, **options)


def run_columnar(
    path: str | os.PathLike[str],
    metrics: Sequence[str],
    *,
    read: ReadOptions,
    out_dir: str | os.PathLike[str] | None,
    keep_records: bool = False,
    batch_rows: int = BATCH_ROWS,
    progress: Callable[[int], None] | None = None,
    on_bad_row: Callable[[InputError], None] | None = None,
    run_info: dict[str, Any] | None = None,
    evaluators: Sequence[KernelEvaluator] | None = None,
) -> RunResult:
    """Evaluate retrieval ``metrics`` over the file ``path`` (``read.format``, or its extension:
    Parquet, JSONL or CSV) on the columnar path: the files and :class:`~ragmeter.results.RunResult`
    of the ``Sample`` path (:func:`ragmeter.evaluate` over :func:`~ragmeter.io.read_samples`), save
    that the input samples are not kept. ``on_bad_row`` is called with each bad row's InputError
    (``on_error="skip"``); ``evaluators`` are the metrics' evaluators when built already
    (:func:`kernel_evaluators`)."""
    revs = list(evaluators) if evaluators is not None else retrieval_evaluators(metrics)
    run = plan(metrics, evaluators=revs, run_info=run_info)
    read_samples(path, read=read)  # file-level checks
    spath = os.fspath(path)
    source = _source(detect_format(spath, read.format), spath, read, batch_rows)
    conv = RowConverter(spath, read, unit=source.unit, seen=HashedIds())  # type: ignore[arg-type]  # get / set, exact
    state = RunState(run.names, run.versions, run.info,
                     RunWriter(run.names, out_dir=out_dir, keep_records=keep_records),
                     progress=progress, on_bad_row=on_bad_row)
    sinks: list[ColumnarSink] = []

    def submit(rows: Any) -> BatchScores:
        if not sinks:
            assert source.columns is not None
            sinks.append(ColumnarSink(run, state, conv, source.columns))
            if source.keys is None:
                note_keys(sinks[0], rows)
        if rows.batch is None:
            return BatchScores(np.ones(rows.num_rows, dtype=bool), {}, {}, {}, np.zeros(0, dtype=bool))
        return score_batch(rows.batch, sinks[0].cols, revs)

    async def write(rows: Any, scores: BatchScores) -> None:
        await sinks[0].write(rows, scores)

    result = asyncio.run(run_units(not_empty(source.blocks(), source.unit, spath), submit, write, state=state))
    state.presence.check(path=spath, keys=source.keys)
    return result


def not_empty(blocks: Iterator[Any], unit: str, spath: str) -> Iterator[Any]:
    """``blocks``; an EmptyInputError after them when there was none."""
    seen = False
    for block in blocks:
        seen = True
        yield block
    if not seen:
        raise EmptyInputError(f"the file holds no samples: expected at least one {unit}", path=spath)


def _source(fmt: str, spath: str, read: ReadOptions, batch_rows: int) -> Source:
    if fmt == "parquet":
        return ParquetSource(spath, read, batch_rows)
    if fmt == "jsonl":
        from ._jsonl import JsonlSource

        return JsonlSource(spath, read)
    if fmt == "csv":
        from ._csv import CsvSource

        return CsvSource(spath, read)
    raise InvalidParameterError(f"format: expected parquet, jsonl or csv for the columnar path, got {fmt!r}")


def note_keys(sink: ColumnarSink, rows: Any) -> None:
    """The keys of the first rows' samples, noted as the Sample path notes them (what the error
    for a field no row has lists)."""
    conv = RowConverter(sink.conv.path, replace(sink.conv.read, max_text_chars=None), unit=sink.conv.unit)
    for i, rec in enumerate(rows.records(list(range(min(64, rows.num_rows))))):
        item = conv.convert(rec, rows.position(i)) if isinstance(rec, dict) else None
        if item is not None and not isinstance(item, InputError):
            sink.presence.note_sample(item)


class ParquetSource:
    """The record batches of a Parquet file (:class:`Source`)."""

    unit = "row"

    def __init__(self, spath: str, read: ReadOptions, batch_rows: int) -> None:
        self.path, self.batch_rows = spath, batch_rows
        self.pf, cols, self.map_cols = open_columns(spath, read)
        self.columns: Columns | None = cols
        self.keys: list[str] | None = list(self.pf.schema_arrow.names)

    def blocks(self) -> Iterator[ArrowRows]:
        """One :class:`ArrowRows` per record batch."""
        for row0, batch in _record_batches(self.pf, self.batch_rows, self.path):
            yield ArrowRows(batch, row0, self.map_cols)


def open_columns(spath: str, read: ReadOptions) -> tuple[Any, Columns, list[str]]:
    """The Parquet file, its columns resolved for the fast path (``read``'s renames and text
    limit), and its map-typed columns."""
    import pyarrow as pa

    pf = open_parquet(spath)
    check_columns(list(pf.schema_arrow.names), read.field_map, path=spath)
    cols = resolve_columns(pf.schema_arrow, read.field_map, read.max_text_chars)
    return pf, cols, [f.name for f in pf.schema_arrow if pa.types.is_map(f.type)]


def _record_batches(pf: Any, batch_rows: int, spath: str, row_groups: list[int] | None = None,
                    row0: int = 0) -> Iterator[tuple[int, Any]]:
    """``(rows before it, record batch)`` of the file (of ``row_groups`` only, the first of them
    starting after row ``row0``, when given); a read failure is an InputError naming the row
    (:func:`unreadable`), a file without rows an EmptyInputError."""
    import pyarrow as pa

    start = row0
    batches = pf.iter_batches(batch_size=batch_rows, row_groups=row_groups)
    while True:
        try:
            batch = next(batches, None)
        except (pa.ArrowException, OSError) as exc:
            raise unreadable(pf, spath, row0, exc) from exc
        if batch is None:
            break
        yield row0, batch
        row0 += batch.num_rows
    if row0 == start and row_groups is None:
        from ..errors import EmptyInputError

        raise EmptyInputError("the file holds no samples: expected at least one row", path=spath)


def unreadable(pf: Any, spath: str, row0: int, exc: Exception) -> InputError:
    """The InputError for a Parquet file that failed to read after row ``row0``: it names the first
    row of the first row group from there that cannot be read (a record batch can span several
    groups), else row ``row0 + 1``, with the reader's message."""
    import pyarrow as pa

    start = 0
    for g in range(pf.metadata.num_row_groups):
        size = pf.metadata.row_group(g).num_rows
        if start + size > row0:
            try:
                pf.read_row_group(g, use_threads=False)
            except (pa.ArrowException, OSError) as err:
                return InputError(f"cannot read the Parquet file after row {start}: {err}", path=spath, line=start + 1)
        start += size
    return InputError(f"cannot read the Parquet file after row {row0}: {exc}", path=spath, line=row0 + 1)
