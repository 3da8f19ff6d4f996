"""The Ray engine's columnar path: retrieval-only Parquet with the kernels and the lines on the workers.

:func:`evaluate_columnar` (called by :func:`ragmeter.engines.ray_engine.evaluate_ray`) first sends
every worker a warm-up task (:func:`warm_task`: the imports, ~1 CPU-s per worker, run while the
driver sets up), then hands the tasks their rows, each decoded once in the cluster: on a
one-machine cluster with at least as many row groups as workers, a task per row group of at most
:data:`WORKER_READ_ROWS` rows reads its group (:func:`score_group_on_worker`, scored in slices of
:data:`COLUMNAR_BATCH_ROWS` rows) and the driver reads none of them; every other row (fewer groups
than workers, a larger group, workers on other machines) is read by the driver in record batches
and shipped (:func:`score_batch_on_worker`). Either way the task runs
:func:`ragmeter.engines._arrow.score_batch`, formats the fast rows' lines with the one
:class:`~ragmeter.results.LineFormatter` and returns a :class:`SliceResult`: the lines (bytes the
driver writes as they are), every row's id and the ids' 64-bit hashes. The driver's
:class:`_RaySink` checks the ids against every earlier one by the hashes
(:class:`~ragmeter.engines._ids.HashedIds`: exact, a hash match compares the ids), scores the odd
rows on the ``Sample`` path and writes the lines, in order: no Python per row for a chunk whose
rows all took the fast path and whose ids are new.
"""

from __future__ import annotations

import asyncio
import importlib
import os
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any

from ..evaluator import plan
from ..results import RunResult, RunWriter
from .columnar import ColumnarSink, unreadable
from .driver import RunState
from .driver import run as run_units

if TYPE_CHECKING:
    from .ray_engine import RayOptions

# ---- worker side --------------------------------------------------------------------------------

_WORKER_RUNS: dict[tuple[str, ...], tuple[list[Any], list[Any], Any]] = {}


@dataclass
class SliceResult:
    """What a task of a columnar Ray run returns: the kernels' :class:`~ragmeter.engines._arrow.BatchScores`
    (``lines`` None), the fast rows' lines as :class:`~ragmeter.results.GroupedLines` (each distinct
    text after the id once: ~240 texts per 16,384 rows of the bench's data, ~0.2 MB instead of
    ~11 MB of lines through the object store; the driver joins them to the ids), every row's id (a
    row without one: its position) and the ids' :func:`~ragmeter.engines._ids.id_hashes` (the
    driver's duplicate check)."""

    scores: Any
    ids: list[str]
    hashes: Any
    grouped: Any = None

    def fast_ids(self) -> list[str]:
        """The ids of the rows the kernels took (what :attr:`grouped` has lines for), in order."""
        import numpy as np

        slow = self.scores.slow
        return self.ids if not slow.any() else [self.ids[i] for i in np.flatnonzero(~slow).tolist()]


def score_batch_on_worker(batch: Any, cols: Any, metrics: list[str], metric_modules: Sequence[str],
                          row0: int = 0) -> SliceResult:
    """The columnar kernels over one Arrow record batch in this process, and the fast rows'
    ``results.jsonl`` lines (what each Ray task of a retrieval-only Parquet run runs; the batch's
    first row is row ``row0 + 1`` of the file): :func:`ragmeter.engines._arrow.score_batch`'s
    :class:`~ragmeter.engines._arrow.BatchScores`, the fast rows' lines grouped by the one
    :class:`~ragmeter.results.LineFormatter` (:meth:`~ragmeter.results.LineFormatter.group`: the
    driver joins them), and the rows' ids."""
    import numpy as np

    from ._arrow import BatchScores, score_batch
    from ._ids import block_ids
    from .columnar import pattern_columns

    for module in metric_modules:
        importlib.import_module(module)
    evaluators, results, formatter = warm_worker(metrics, ())
    scores = score_batch(batch, cols, evaluators)
    ids, hashes = block_ids(batch, cols, range(row0 + 1, row0 + batch.num_rows + 1))
    columns = pattern_columns(evaluators, results, scores, np.ones(int((~scores.slow).sum()), dtype=bool))
    out = SliceResult(BatchScores(scores.slow, {}, {}, {}, scores.rel_none), ids, hashes)
    out.grouped = formatter.group(out.fast_ids(), columns)
    return out


def warm_worker(metrics: list[str], metric_modules: Sequence[str]) -> tuple[list[Any], list[Any], Any]:
    """Import what a task of a columnar run needs and build its evaluators and line formatter,
    once per worker process: the driver sends one such task per worker as the run starts, so the
    workers import while the driver sets up. Returns ``(evaluators, pattern results, formatter)``."""
    import functools

    for module in metric_modules:
        importlib.import_module(module)
    key = tuple(metrics)
    if key not in _WORKER_RUNS:  # a worker process serves many tasks: build them once
        import pyarrow.compute
        import pyarrow.parquet  # noqa: F401  # what the tasks read with

        from ..results import LineFormatter
        from ._arrow import score_batch  # noqa: F401
        from ._ids import block_ids  # noqa: F401
        from .columnar import pattern_result, retrieval_evaluators

        evs = retrieval_evaluators(metrics)
        _WORKER_RUNS[key] = (evs, [functools.partial(pattern_result, ev) for ev in evs], LineFormatter(metrics))
    return _WORKER_RUNS[key]


def warm_task(metrics: list[str], metric_modules: Sequence[str]) -> None:
    """:func:`warm_worker` as a task (nothing sent back)."""
    warm_worker(metrics, metric_modules)


def score_group_on_worker(path: str, group: int, cols: Any, metrics: list[str], metric_modules: Sequence[str],
                          row0: int, batch_rows: int = 16384) -> list[SliceResult]:
    """:func:`score_batch_on_worker` over row group ``group`` of the Parquet file ``path`` (its first
    row is row ``row0 + 1`` of the file), read here whole, in slices of ``batch_rows`` rows: one
    :class:`SliceResult` per slice. One task per row group, so every row is decoded once in the
    cluster (tasks of slices of one group, run by several workers, each read the whole group)."""
    import pyarrow.parquet as pq

    # one thread: the task has its share of the CPUs, Arrow's pool would take every core
    table = pq.ParquetFile(path).read_row_group(group, use_threads=False)
    return [score_batch_on_worker(table.slice(start, batch_rows).combine_chunks().to_batches()[0], cols, metrics,
                                  metric_modules, row0 + start)
            for start in range(0, table.num_rows, batch_rows)]


# ---- driver side --------------------------------------------------------------------------------

#: Lines per piece the driver joins (~0.7 MB): with 4,096 (~2.8 MB, the local engine's pieces) each
#: piece came from fresh memory, ~190k page faults and +0.3-0.5 CPU-s per 1M rows on the driver.
DRIVER_JOIN_ROWS = 1024
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


def evaluate_columnar(ray: Any, spath: str, metrics: list[str], opts: RayOptions) -> RunResult:
    """The columnar engine with its kernels and line formatting on Ray workers: each task reads its
    rows (:func:`_read_units`), scores them and returns a :class:`SliceResult` (the fast rows'
    lines, the rows' ids and their hashes), and the driver's :class:`_RaySink` writes them, in
    order, through the one :class:`~ragmeter.results.RunWriter` (duplicate check by hashes, rows
    for the Sample path)."""
    from ..io import read_samples
    from ..io.records import RowConverter
    from ._ids import HashedIds
    from .columnar import open_columns, retrieval_evaluators

    warm, workers = opts.remote(ray, warm_task)
    for _ in range(workers):  # the workers import while the driver sets up
        warm.remote(metrics, opts.metric_modules)
    revs = retrieval_evaluators(metrics)
    run = plan(metrics, evaluators=revs, run_info=opts.run_info)
    read = replace(opts.read, format="parquet")
    read_samples(spath, read=read)  # file-level checks
    pf, cols, map_cols = open_columns(spath, read)
    conv = RowConverter(spath, read, unit="row", seen=HashedIds())  # type: ignore[arg-type]  # get / set, exact
    state = RunState(run.names, run.versions, run.info,
                     RunWriter(run.names, out_dir=opts.out_dir, keep_records=opts.keep_records),
                     progress=opts.progress, on_bad_row=opts.on_bad_row)
    sink = _RaySink(run, state, conv, cols)
    units, workers = _read_units(ray, opts, pf, spath, cols, list(run.names), map_cols)
    run.info["engine"] = {"name": "ray", "workers": workers, "batch_size": COLUMNAR_BATCH_ROWS,
                          "path": "columnar"}

    async def write(rows: Any, ref: Any) -> None:
        for part, result in await _take(rows, ref):
            await sink.write(part, result)

    result = asyncio.run(run_units(units, lambda unit: unit, lambda unit, _: write(*unit), state=state,
                                   ahead=workers * 2, cancel=lambda unit: ray.cancel(unit[1])))
    state.presence.check(path=spath, keys=pf.schema_arrow.names)
    return result


#: Largest row group a worker reads whole (and keeps while it scores its slices); a larger one
#: it streams, record batch by record batch.
WORKER_READ_ROWS = 262_144


def _workers_share_files(ray: Any) -> bool:
    """True on a one-machine cluster: the driver's path of the file is the workers' too."""
    return sum(1 for node in ray.nodes() if node.get("Alive")) == 1


def _read_units(ray: Any, opts: RayOptions, pf: Any, spath: str, cols: Any, names: list[str],
                map_cols: list[str]) -> tuple[Iterator[tuple[Any, Any]], int]:
    """``(rows, task)`` per unit of work, submitted as iterated (``rows``: one batch's rows, or a
    list of slices when the task returns a list of :class:`SliceResult`), and the tasks run at once.

    Every row is decoded once in the cluster. On a one-machine cluster (the file's path is the
    workers' too) with at least as many row groups as workers, a row group of at most
    :data:`WORKER_READ_ROWS` rows is read by its task (:func:`score_group_on_worker`, scored in
    slices of :data:`COLUMNAR_BATCH_ROWS` rows); every other row (fewer groups than workers, a
    larger group, workers that do not share the driver's files) is read by the driver in record
    batches and shipped (:func:`score_batch_on_worker`)."""
    from .columnar import ArrowRows, _record_batches

    cols_ref = ray.put(cols)
    sizes = [pf.metadata.row_group(g).num_rows for g in range(pf.metadata.num_row_groups)]
    batch_task, workers = opts.remote(ray, score_batch_on_worker)
    by_group = _workers_share_files(ray) and len(sizes) >= workers and sum(sizes) > 0
    group_task = opts.remote(ray, score_group_on_worker)[0] if by_group else None
    args = (cols_ref, names, opts.metric_modules)

    def shipped(groups: list[int] | None, row0: int) -> Iterator[tuple[Any, Any]]:
        for r0, batch in _record_batches(pf, COLUMNAR_BATCH_ROWS, spath, groups, row0):
            yield ArrowRows(batch, r0, map_cols), batch_task.remote(batch, *args, r0)

    def units() -> Iterator[tuple[Any, Any]]:
        if group_task is None:
            yield from shipped(None, 0)
            return
        row0 = 0
        cache: dict[int, Any] = {}
        for g, size in enumerate(sizes):
            if size > WORKER_READ_ROWS:
                yield from shipped([g], row0)
            elif size:
                slices = [_SliceRows(pf, spath, g, start, min(COLUMNAR_BATCH_ROWS, size - start), None,
                                     row0 + start, cache) for start in range(0, size, COLUMNAR_BATCH_ROWS)]
                yield slices, group_task.remote(spath, g, *args, row0, COLUMNAR_BATCH_ROWS)
            row0 += size

    return units(), workers


def _read_group(pf: Any, group: int, columns: list[str] | None, spath: str, row0: int) -> Any:
    """Row group ``group`` of the file (``columns`` only, when given); a read failure is the
    InputError of :func:`~ragmeter.engines.columnar.unreadable` (``row0``: the rows before the group),
    which names the first row of the first unreadable group, as on the local engine."""
    import pyarrow as pa

    try:
        return pf.read_row_group(group, columns=columns)
    except (pa.ArrowException, OSError) as exc:
        raise unreadable(pf, spath, row0, exc) from exc


@dataclass
class _SliceRows:
    """Rows ``start .. start + num_rows`` of row group ``group``, read by a worker: the driver holds
    none of them (``batch`` None; the ids come back from the worker) and reads the whole group
    (kept in ``cache``, one at a time) for the rows the ``Sample`` path takes."""

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
        from .._arrowbuf import take_rows
        from ..io.readers import arrow_records

        return arrow_records(take_rows(self.full(), rows)) if rows else []


async def _take(rows: Any, ref: Any) -> list[tuple[Any, Any]]:
    """``(rows, SliceResult)`` per slice of a unit (:func:`_read_units`); a task that failed reading
    its rows fails as the driver reading them does (an InputError naming the row), any other
    failure as it is."""
    try:
        got = await ref
    except Exception:
        first = rows[0] if isinstance(rows, list) else rows
        if isinstance(first, _SliceRows):
            first.full()  # raises the InputError when the driver cannot read the rows either
        raise
    return list(zip(rows, got, strict=True)) if isinstance(rows, list) else [(rows, got)]


class _RaySink(ColumnarSink):
    """:class:`~ragmeter.engines.columnar.ColumnarSink` taking :class:`SliceResult` s: the rows' ids
    come from the workers with their hashes (the duplicate check is :class:`ColumnarSink`'s)."""

    _slice: SliceResult

    async def write(self, rows: Any, scores: Any) -> None:
        """Write one task's rows, in order (``scores``: its :class:`SliceResult`, whose lines are
        joined here to their ids)."""
        self._slice = scores
        batch = scores.scores
        if scores.grouped is not None:
            batch.lines = self.writer.formatter.join(scores.fast_ids(), scores.grouped, DRIVER_JOIN_ROWS)
        await super().write(rows, batch)

    def _block_ids(self, rows: Any, positions: Any) -> tuple[list[str], Any]:
        """The ids and hashes the worker computed for these rows."""
        return self._slice.ids, self._slice.hashes
