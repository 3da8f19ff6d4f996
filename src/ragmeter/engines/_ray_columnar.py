"""The Ray engine's columnar path: retrieval-only Parquet with the kernels and the lines on the workers.

:func:`evaluate_columnar` (called by :func:`ragmeter.engines.ray_engine.evaluate_ray`) hands each
Ray task a slice of :data:`COLUMNAR_BATCH_ROWS` rows. On a one-machine cluster whose row groups
hold at most :data:`WORKER_READ_ROWS` rows the task reads its slice itself
(:func:`score_slice_on_worker`) and the driver reads only the id column; otherwise the driver
reads record batches and ships them (:func:`score_batch_on_worker`). Either way the task runs
:func:`ragmeter.engines._arrow.score_batch` and formats the fast rows' lines with the one
:class:`~ragmeter.results.LineFormatter`; the driver's
:class:`~ragmeter.engines.columnar.ColumnarSink` checks ids, scores the odd rows on the ``Sample``
path and writes the lines as they are, in order.
"""

from __future__ import annotations

import importlib
import os
import time
from collections import deque
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from ..errors import InputError
from ..evaluator import plan
from ..results import RunResult, RunWriter

if TYPE_CHECKING:
    from .ray_engine import _Options

# ---- worker side --------------------------------------------------------------------------------

_WORKER_RUNS: dict[tuple[str, ...], tuple[list[Any], list[Any], Any]] = {}
_WORKER_GROUP: dict[tuple[str, int, int, int], Any] = {}  # the last row group a worker read


def score_batch_on_worker(batch: Any, cols: Any, metrics: list[str], metric_modules: Sequence[str],
                          row0: int = 0) -> Any:
    """The columnar kernels over one Arrow record batch in this process, and the fast rows'
    ``results.jsonl`` lines (what each Ray task of a retrieval-only Parquet run runs; the batch's
    first row is row ``row0 + 1`` of the file): :func:`ragmeter.engines._arrow.score_batch`'s
    :class:`~ragmeter.engines._arrow.BatchScores` with its ``lines`` formatted by the one
    :class:`~ragmeter.results.LineFormatter`, written as they are by the driver."""
    import functools

    import numpy as np

    from ..results import LineFormatter
    from ._arrow import BatchScores, score_batch
    from .columnar import fast_ids, pattern_columns, pattern_result, retrieval_evaluators

    for module in metric_modules:
        importlib.import_module(module)
    key = tuple(metrics)
    if key not in _WORKER_RUNS:  # a worker process serves many tasks: build them once
        evs = retrieval_evaluators(metrics)
        _WORKER_RUNS[key] = (evs, [functools.partial(pattern_result, ev) for ev in evs], LineFormatter(metrics))
    evaluators, results, formatter = _WORKER_RUNS[key]
    scores = score_batch(batch, cols, evaluators)
    fast = ~scores.slow
    columns = pattern_columns(evaluators, results, scores, np.ones(int(fast.sum()), dtype=bool))
    lines = formatter.format(fast_ids(batch, cols, row0, fast), columns)
    # as arrays, Ray hands the bytes to the driver without a copy (a view of its object store)
    lines.data = [np.frombuffer(piece, dtype=np.uint8) for piece in lines.data]
    return BatchScores(scores.slow, {}, {}, {}, scores.rel_none, lines)


def score_slice_on_worker(path: str, group: int, start: int, length: int, cols: Any, metrics: list[str],
                          metric_modules: Sequence[str], row0: int) -> Any:
    """:func:`score_batch_on_worker` over rows ``start .. start + length`` of row group ``group``
    of the Parquet file ``path``, read here (the worker keeps the last row group it read: the
    slices of one group are read once per worker)."""
    import pyarrow.parquet as pq

    st = os.stat(path)
    key = (path, st.st_mtime_ns, st.st_size, group)
    table = _WORKER_GROUP.get(key)
    if table is None:
        _WORKER_GROUP.clear()
        table = _WORKER_GROUP[key] = pq.ParquetFile(path).read_row_group(group)
    batch = table.slice(start, length).combine_chunks().to_batches()[0]
    return score_batch_on_worker(batch, cols, metrics, metric_modules, row0)


# ---- driver side --------------------------------------------------------------------------------

#: Rows per Arrow record batch sent to a worker on the columnar path.
COLUMNAR_BATCH_ROWS = 16384


def columnar_data(data: Any, metrics: Sequence[str] | None, format: str | None) -> bool:
    """True for a local Parquet file and retrieval metrics only (the columnar path)."""
    from .columnar import columnar_supported

    if not isinstance(data, str | os.PathLike) or not columnar_supported(metrics):
        return False
    spath = os.fspath(data)
    return "://" not in spath and os.path.isfile(spath) and (
        format == "parquet" or (format is None and spath.lower().endswith((".parquet", ".pq"))))


def evaluate_columnar(ray: Any, spath: str, metrics: list[str], opts: _Options) -> RunResult:
    """The columnar engine with its kernels and line formatting on Ray workers: each task reads its
    rows (:func:`_read_units`), scores them and returns its
    :class:`~ragmeter.engines._arrow.BatchScores` with the fast rows' lines, and the driver's
    :class:`~ragmeter.engines.columnar.ColumnarSink` writes them, in order, through the one
    :class:`~ragmeter.results.RunWriter` (ids, duplicate check, rows for the Sample path)."""
    from ..io import read_samples
    from ..io._records import DEFAULT_MAX_TEXT_CHARS, RowConverter, check_field_map
    from .columnar import ColumnarSink, _open, retrieval_evaluators

    revs = retrieval_evaluators(metrics)
    run = plan(metrics, evaluators=revs, run_info=opts.run_info)
    read_samples(spath, on_error=opts.on_error, field_map=opts.field_map, format="parquet")  # type: ignore[arg-type]  # file-level checks
    fmap = check_field_map(opts.field_map)
    pf, cols, map_cols = _open(spath, fmap, DEFAULT_MAX_TEXT_CHARS)  # the ray engine applies the default
    conv = RowConverter(spath, fmap, unit="row", max_text_chars=DEFAULT_MAX_TEXT_CHARS)
    sink = ColumnarSink(run, RunWriter(run.names, out_dir=opts.out_dir, keep_records=opts.keep_records), conv,
                        cols, on_error=opts.on_error, on_bad_row=opts.on_bad_row, progress=opts.progress)
    t0 = time.perf_counter()
    pending: deque[tuple[Any, Any]] = deque()
    units, workers = _read_units(ray, opts, pf, spath, cols, list(run.names), map_cols)
    for unit in units:
        pending.append(unit)
        while len(pending) > workers * 2:  # every worker busy, one batch behind each
            sink.write(*_take(ray, *pending.popleft()))
    while pending:
        sink.write(*_take(ray, *pending.popleft()))
    run.info["engine"] = {"name": "ray", "workers": workers, "batch_size": COLUMNAR_BATCH_ROWS,
                          "path": "columnar"}
    return sink.finish(t0, path=spath, keys=pf.schema_arrow.names)


#: Largest row group the workers read themselves; a file with a larger one is read by the driver.
WORKER_READ_ROWS = 262_144


def _read_units(ray: Any, opts: _Options, pf: Any, spath: str, cols: Any, names: list[str],
                map_cols: list[str]) -> tuple[Iterator[tuple[Any, Any]], int]:
    """``(rows, task)`` per slice of :data:`COLUMNAR_BATCH_ROWS` rows, submitted as iterated, and
    the tasks run at once. On a one-machine cluster (the file's path is the workers' too) where
    every row group has at most :data:`WORKER_READ_ROWS` rows, the workers read their slices
    (:func:`score_slice_on_worker`) and the driver only the id column; else the driver reads
    record batches and ships them (:func:`score_batch_on_worker`)."""
    from .columnar import ArrowRows, _record_batches

    cols_ref = ray.put(cols)
    sizes = [pf.metadata.row_group(g).num_rows for g in range(pf.metadata.num_row_groups)]
    one_node = sum(1 for node in ray.nodes() if node.get("Alive")) == 1  # the driver's path is the workers'
    if not one_node or not sizes or sum(sizes) == 0 or max(sizes) > WORKER_READ_ROWS:
        remote, workers = opts.remote(ray, score_batch_on_worker)
        return ((ArrowRows(batch, row0, map_cols), remote.remote(batch, cols_ref, names, opts.metric_modules, row0))
                for row0, batch in _record_batches(pf, COLUMNAR_BATCH_ROWS, spath)), workers
    remote, workers = opts.remote(ray, score_slice_on_worker)
    id_col = cols.by_field.get("id")

    def units() -> Iterator[tuple[Any, Any]]:
        row0 = 0
        cache: dict[int, Any] = {}
        for g, size in enumerate(sizes):
            ids = _read_group(pf, g, [id_col], spath, row0) if id_col is not None else None
            for start in range(0, size, COLUMNAR_BATCH_ROWS):
                length = min(COLUMNAR_BATCH_ROWS, size - start)
                rows = _SliceRows(pf, spath, g, start, length, None if ids is None else ids.slice(start, length),
                                  row0 + start, cache)
                yield rows, remote.remote(spath, g, start, length, cols_ref, names, opts.metric_modules, row0 + start)
            row0 += size

    return units(), workers


def _read_group(pf: Any, group: int, columns: list[str] | None, spath: str, row0: int) -> Any:
    """Row group ``group`` of the file (``columns`` only, when given); a read failure is an
    InputError naming the row before it, as :func:`~ragmeter.engines.columnar._record_batches` words it."""
    import pyarrow as pa

    try:
        return pf.read_row_group(group, columns=columns)
    except (pa.ArrowException, OSError) as exc:
        raise InputError(f"cannot read the Parquet file after row {row0}: {exc}", path=spath, line=row0 + 1) from exc


@dataclass
class _SliceRows:
    """Rows ``start .. start + num_rows`` of row group ``group``, read by a worker: the driver holds
    their ids only (``batch``: the id column, None without one) and reads the whole group (kept in
    ``cache``, one at a time) for the rows the ``Sample`` path takes."""

    pf: Any
    path: str
    group: int
    start: int
    num_rows: int
    batch: Any
    row0: int
    cache: dict[int, Any]

    def position(self, i: int) -> int:
        """The 1-based position of row ``i`` in the file."""
        return self.row0 + i + 1

    @property
    def positions(self) -> range:
        """Every row's :meth:`position`, in order."""
        return range(self.row0 + 1, self.row0 + self.num_rows + 1)

    def where(self, i: int) -> str:
        """Position detail for row ``i``'s messages (none for Parquet)."""
        return ""

    def full(self) -> Any:
        """The slice's rows, every column (read on the driver)."""
        if self.group not in self.cache:
            self.cache.clear()
            self.cache[self.group] = _read_group(self.pf, self.group, None, self.path, self.row0 - self.start)
        return self.cache[self.group].slice(self.start, self.num_rows)

    def records(self, rows: list[int]) -> list[Any]:
        """The raw records of ``rows`` as the reader gives them (map columns as dicts)."""
        import pyarrow as pa

        from ..io.readers import arrow_records

        return arrow_records(self.full().take(pa.array(rows, pa.int64()))) if rows else []


def _take(ray: Any, rows: Any, ref: Any) -> tuple[Any, Any]:
    """``(rows, the task's BatchScores)``; a task that failed reading its slice fails as the driver
    reading it does (an InputError naming the row), any other failure as it is."""
    try:
        return rows, ray.get(ref)
    except Exception:
        if isinstance(rows, _SliceRows):
            rows.full()  # raises the InputError when the driver cannot read the rows either
        raise
