"""The Ray engine: the same evaluators and judge layer, on the workers of a Ray cluster.

::

    import ragmeter
    from ragmeter.backend_config import JudgeConfig

    run = ragmeter.evaluate("s3://bucket/rag.parquet", ["faithfulness", "mrr"], engine="ray",
                            judge=JudgeConfig("openai:qwen2.5@http://vllm-host:8000/v1", concurrency=64),
                            out_dir="out", address="auto")

How it runs:

1. **Reading.** Parquet (a file, a directory or any URI Ray Data reads, e.g. ``s3://``) is read with
   ``ray.data.read_parquet`` in file order; every other local file with
   :func:`ragmeter.io.read_samples`; a JSONL URI with ``ray.data.read_json``. Each row goes through
   the reader's own :class:`~ragmeter.io.records.RowConverter`, so ids (a missing id is the row
   number), duplicate-id and validation errors are exactly those of the local engine.
2. **Scoring.** Good samples are cut into chunks of ``batch_size`` and handed round a pool of
   ``num_workers`` :class:`ScoringActor` s, two chunks queued per actor. Each actor builds its
   evaluators, and the judge from its :class:`~ragmeter.backend_config.JudgeConfig` (judge
   objects hold connections, so they are never shipped), once for the whole run: the judge's
   adaptive concurrency, learnt timeout and cache connection carry from chunk to chunk. An actor
   scores a chunk with :func:`ragmeter.evaluator.score_chunk`, exactly as the local engine does
   (the judge's ``concurrency`` is per actor, so the cluster's bound is workers x concurrency).
   The driver is :func:`ragmeter.engines.driver.run_samples`, the local engine's: rows are
   written in input order, and the abort rules are the same.
   Retrieval metrics only over a local Parquet file (:mod:`ragmeter.engines._ray_columnar`): each
   task reads a row group or a slice of the file (or gets a record batch the driver read), runs the columnar
   kernels on it and formats its rows' ``results.jsonl`` lines, returning the lines as bytes with
   the scores and statuses the summary needs, and its rows' ids with their hashes (the driver's
   duplicate-id check, :mod:`ragmeter.engines._ids`).
3. **Writing.** Each task returns its chunk's results to the driver, which writes them through the
   one :class:`~ragmeter.results.RunWriter` (``results.jsonl`` in input order, ``summary.json``;
   on the columnar path the worker's lines as they are, save the rows the driver's duplicate-id
   check sends to the ``Sample`` path): the
   files the local engine writes, and no other file. Bad rows (``on_error="skip"``) are recorded
   by the driver as errored samples, as locally.

The judge cache: with ``cache=True`` (the default) the cache directory is resolved on the driver
(``$RAGMETER_CACHE_DIR`` or the user cache dir) and passed to every task, so a single-machine
cluster shares one SQLite cache; on several machines point it at shared storage
(``JudgeConfig(..., cache="/shared/ragmeter-cache")``) or give each worker its own.
"""

from __future__ import annotations

import asyncio
import contextlib
import importlib
import itertools
import json
import os
from collections.abc import AsyncIterator, Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, replace
from typing import Any

from ..backend_config import EmbedderConfig, JudgeConfig
from ..errors import InputError, InvalidParameterError, MissingBackendError
from ..evaluator import plan, score_chunk
from ..io import as_samples
from ..io.options import ReadOptions, read_options
from ..registry import get_evaluator
from ..results import RunResult, RunWriter, _json_default
from ..types import MetricResult, Sample
from . import warn_alias
from .driver import RunState, run_samples

INSTALL_HINT = 'pip install -e ".[ray]" (in the ragmeter clone)'
#: Samples per Ray task.
DEFAULT_BATCH_SIZE = 512


def require_ray() -> Any:
    """Import and return :mod:`ray`, or raise :class:`MissingBackendError` saying how to install it.
    Ray Data is found, not imported (~0.8 s): only the paths that read with it import it."""
    import importlib.util

    try:
        import ray

        found = importlib.util.find_spec("ray.data") is not None
    except ImportError as exc:
        raise MissingBackendError(
            f"the ray engine needs Ray Data, which is not installed ({exc}): {INSTALL_HINT}"
        ) from exc
    if not found:
        raise MissingBackendError(f"the ray engine needs Ray Data, which is not installed: {INSTALL_HINT}")
    return ray


# ---- worker side --------------------------------------------------------------------------------


class ScoringActor:
    """A Ray actor that scores chunks for the whole run with one judge and one embedder, built here
    once from their configs (judge objects hold connections, so they are never shipped): its
    adaptive concurrency, learnt timeout and cache connection carry from one chunk to the next. An
    async actor: every chunk runs on the actor's one event loop, where the judge's state lives."""

    def __init__(self, metrics: list[str], judge_config: JudgeConfig | None, embedder_config: EmbedderConfig | None,
                 metric_modules: Sequence[str]) -> None:
        for module in metric_modules:
            importlib.import_module(module)  # plugin metrics register on import
        self.judge = judge_config.build() if judge_config is not None else None
        self.embedder = embedder_config.build() if embedder_config is not None else None
        self.evaluators = [get_evaluator(m, judge=self.judge, embedder=self.embedder) for m in metrics]
        self.judges_built = 0 if self.judge is None else 1
        self._before = self.judge.stats() if self.judge is not None else None

    async def score(self, samples: list[Sample]) -> tuple[list[dict[str, dict[str, Any]]], dict[str, Any] | None]:
        """One ``{metric: results.jsonl record}`` per sample, in order, and the judge's counters
        since the actor started (the driver sums the actors' latest)."""
        scored = await score_chunk(self.evaluators, samples)
        records = [{ev.name: scored[ev.name][i].to_record() for ev in self.evaluators} for i in range(len(samples))]
        return records, self.stats()

    def stats(self) -> dict[str, Any] | None:
        """The judge's counters of this run (None without a judge), as the local engine counts a
        run (``stats_delta``), so the driver's sum has its shape."""
        from ..judges.counters import stats_delta

        return stats_delta(self.judge.stats(), self._before) if self.judge is not None else None

    def builds(self) -> int:
        """Judges this actor built: 1 for the whole run (0 without a judge)."""
        return self.judges_built

    async def close(self) -> dict[str, Any] | None:
        """Close the judge's connections; its final counters."""
        stats = self.stats()
        if self.judge is not None:
            await self.judge.aclose()
        return stats


# ---- driver side --------------------------------------------------------------------------------


def _is_uri(path: str) -> bool:
    return "://" in path


def _rows_from_ray_parquet(ray: Any, path: str, read: ReadOptions) -> Iterator[Sample | InputError]:
    """Rows of a Parquet file/dir/URI read with Ray Data in file order, converted as the local reader does."""
    from ..io.readers import arrow_records
    from ..io.records import RowConverter, check_columns

    fmap = read.field_map
    importlib.import_module("ray.data")
    ctx = ray.data.DataContext.get_current()
    ctx.execution_options.preserve_order = True
    ds = ray.data.read_parquet(path)
    conv = RowConverter(path, read, unit="row")
    pos = 0
    checked = False
    for batch in ds.iter_batches(batch_format="pyarrow", batch_size=4096):
        if not checked:
            check_columns(list(batch.schema.names), fmap, path=path)
            checked = True
        for record in arrow_records(batch):
            pos += 1
            item = conv.convert(record, pos)
            if isinstance(item, InputError) and read.on_error == "raise":
                raise item
            yield item
    if pos == 0:
        from ..errors import EmptyInputError

        raise EmptyInputError("the data holds no samples: expected at least one row", path=path)


def _rows_from_ray_json(ray: Any, path: str, read: ReadOptions) -> Iterator[Sample | InputError]:
    from ..io.records import RowConverter

    importlib.import_module("ray.data")
    ctx = ray.data.DataContext.get_current()
    ctx.execution_options.preserve_order = True
    conv = RowConverter(path, read, unit="line")
    for pos, record in enumerate(ray.data.read_json(path, lines=True).iter_rows(), start=1):
        item = conv.convert(dict(record), pos)
        if isinstance(item, InputError) and read.on_error == "raise":
            raise item
        yield item


def read_items(ray: Any, data: str | os.PathLike[str] | Iterable[Any],
               read: ReadOptions) -> Iterator[Sample | InputError]:
    """The samples of ``data`` (a path, a URI, or samples / dicts), as the engine reads them."""
    if isinstance(data, str | os.PathLike):
        spath = os.fspath(data)
        lower = spath.lower()
        is_parquet = read.format == "parquet" or lower.endswith((".parquet", ".pq")) or (
            read.format is None and os.path.isdir(spath))
        if is_parquet:
            if not _is_uri(spath) and not os.path.isdir(spath):
                from ..io import read_samples

                read_samples(spath, read=replace(read, format="parquet"))  # file checks
            return _rows_from_ray_parquet(ray, spath, read)
        if _is_uri(spath):
            return _rows_from_ray_json(ray, spath, read)
    return as_samples(data, read=read)


def _progress(stats: dict[str, Any] | None) -> tuple[int, int]:
    """How far a snapshot of one judge's counters is: (calls asked, calls finished); both only grow."""
    return (int((stats or {}).get("calls", 0)), int((stats or {}).get("finished", 0))) if stats else (-1, -1)


def _merge_stats(total: dict[str, Any] | None, part: dict[str, Any] | None) -> dict[str, Any] | None:
    """Add the numbers of ``part`` into ``total`` (recursively; other values: the first one seen)."""
    if part is None:
        return total
    if total is None:
        return json.loads(json.dumps(part, default=_json_default))
    for key, value in part.items():
        if isinstance(value, bool) or value is None:
            total.setdefault(key, value)
        elif isinstance(value, int | float):
            prev = total.get(key)
            total[key] = value if prev is None else prev + value
        elif isinstance(value, dict):
            total[key] = _merge_stats(total.get(key) or {}, value)
        else:
            total.setdefault(key, value)
    return total


class WorkerChunks:
    """What the executors whose workers score whole chunks share (:class:`RayExecutor`,
    ``processes``'s ``ProcessExecutor``): each worker's latest judge counters, summed on demand,
    and a chunk's records read back as results, in input order.

    A worker's chunks may finish out of order, so a snapshot taken while another chunk's calls were
    in flight (fewer calls asked or finished) never replaces a later one."""

    def __init__(self, names: list[str]) -> None:
        self.names = names
        self._latest_stats: dict[int, dict[str, Any] | None] = {}

    def _note_stats(self, worker: int, stats: dict[str, Any] | None) -> None:
        if _progress(stats) >= _progress(self._latest_stats.get(worker)):
            self._latest_stats[worker] = stats

    def _results(self, records: list[dict[str, Any]]) -> Iterator[dict[str, MetricResult]]:
        for rec in records:
            yield {m: MetricResult.model_validate({"name": m, **rec[m]}) for m in self.names}

    def judge_stats(self) -> dict[str, Any] | None:
        """The workers' latest judge counters, summed."""
        total: dict[str, Any] | None = None
        for stats in self._latest_stats.values():
            total = _merge_stats(total, stats)
        return total


def evaluate_ray(
    data: str | os.PathLike[str] | Iterable[Sample | InputError | dict[str, Any]],
    metrics: Sequence[str] | None = None,
    *,
    judge_config: JudgeConfig | None = None,
    embedder_config: EmbedderConfig | None = None,
    judge_spec: str | None = None,
    judge_options: dict[str, Any] | None = None,
    embedder_spec: str | None = None,
    embedder_options: dict[str, Any] | None = None,
    address: str | None = None,
    read: ReadOptions | None = None,
    **options: Any,
) -> RunResult:
    """Deprecated: ``ragmeter.evaluate(data, metrics, engine="ray", judge=judge_config,
    embedder=embedder_config, chunk_size=batch_size, ...)``, which runs :func:`run_ray` as this does
    (``judge_spec`` + ``judge_options`` are ``JudgeConfig.from_options(judge_spec, **judge_options)``,
    ``embedder_spec`` + ``embedder_options`` an :class:`~ragmeter.backend_config.EmbedderConfig`;
    ``options`` are :class:`RayOptions`' fields and the read options)."""
    warn_alias("ragmeter.engines.ray_engine.evaluate_ray")
    if judge_config is None and judge_spec:
        judge_config = JudgeConfig.from_options(judge_spec, **(judge_options or {}))
    if embedder_config is None and embedder_spec:
        embedder_config = EmbedderConfig(embedder_spec, dict(embedder_options or {}))
    loose = {k: options.pop(k) for k in ("on_error", "field_map", "format", "max_text_chars") if k in options}
    options["metric_modules"] = tuple(options.get("metric_modules", ()))
    opts = RayOptions(read_options(read, **loose), **options)
    return run_ray(data, metrics, opts, address=address, judge_config=judge_config, embedder_config=embedder_config)


def run_ray(data: Any, metrics: Sequence[str] | None, opts: RayOptions, *, address: str | None = None,
            judge_config: JudgeConfig | None = None, embedder_config: EmbedderConfig | None = None) -> RunResult:
    """Evaluate ``data`` on a Ray cluster (what :func:`ragmeter.evaluate` runs with ``engine="ray"``);
    the result and files equal the local engine's.

    ``data`` is a Parquet / JSONL / JSON / CSV path, a Parquet directory or URI Ray Data reads, or
    anything :func:`ragmeter.io.as_samples` reads. Every actor builds its judge / embedder from
    ``judge_config`` / ``embedder_config`` (``concurrency`` is per actor; a judge cache left at
    ``True`` is resolved to this machine's cache dir). ``address`` is the cluster to join when Ray
    is not initialised yet (``"auto"``, ``"ray://host:10001"``); None starts a local one (shut down
    at the end).

    Raises
    ------
    MissingBackendError
        Ray is not installed (``pip install -e ".[ray]"`` in the ragmeter clone).
    """
    ray = require_ray()
    judge_config = judge_config.with_cache_dir() if judge_config is not None else None
    for module in opts.metric_modules:
        importlib.import_module(module)
    with _cluster(ray, address):
        from ._ray_columnar import columnar_data, evaluate_columnar

        if columnar_data(data, metrics, opts.read.format):
            return evaluate_columnar(ray, os.fspath(data), list(metrics or ()), opts)
        return _evaluate_samples(ray, data, metrics, opts, judge_config, embedder_config)


@contextlib.contextmanager
def _cluster(ray: Any, address: str | None) -> Iterator[None]:
    """Join (or start) the cluster at ``address`` unless Ray is initialised already; shut down
    on leaving what was joined here."""
    started_here = not ray.is_initialized()
    if started_here:
        ray.init(address=address, include_dashboard=False, ignore_reinit_error=True,
                 log_to_driver=False, configure_logging=False)
    try:
        yield
    finally:
        if started_here:
            ray.shutdown()


@dataclass(frozen=True)
class RayOptions:
    """The options of a Ray run that both of its paths read (:func:`run_ray`): how rows are read
    (``read``), where results go, and the cluster's share of the work.

    ``num_workers``: tasks (actors) running at once, default the cluster's CPUs, each with an equal
    share of them; ``batch_size``: samples per task; ``metric_modules``: modules the workers import
    before building evaluators (where plugin metrics register); ``max_retries``: Ray's retries of a
    task whose worker died; ``on_judge_stats``: called with the judge counters summed over the
    tasks done so far, after each chunk.
    """

    read: ReadOptions
    out_dir: str | os.PathLike[str] | None = None
    num_workers: int | None = None
    batch_size: int = DEFAULT_BATCH_SIZE
    keep_records: bool = True
    metric_modules: tuple[str, ...] = ()
    max_retries: int = 3
    progress: Callable[[int], None] | None = None
    on_bad_row: Callable[[InputError], None] | None = None
    on_judge_stats: Callable[[dict[str, Any]], None] | None = None
    run_info: dict[str, Any] | None = None

    def __post_init__(self) -> None:
        size = self.batch_size
        if isinstance(size, bool) or not isinstance(size, int) or size < 1:
            raise InvalidParameterError(f"batch_size: expected an integer >= 1, got {size!r}")

    def remote(self, ray: Any, fn: Callable[..., Any]) -> tuple[Any, int]:
        """``fn`` as a Ray task with an equal share of the cluster's CPUs, and the tasks run at once."""
        cpus = float(ray.cluster_resources().get("CPU", 1.0))
        workers = self.num_workers or max(1, int(cpus))
        return ray.remote(fn).options(num_cpus=max(cpus / workers, 0.01), max_retries=self.max_retries,
                                      retry_exceptions=False), workers


class RayExecutor(WorkerChunks):
    """Scores chunks on a pool of :class:`ScoringActor` s (one per worker, chunks handed round
    the pool); ``ahead`` keeps every actor busy with one chunk queued behind it."""

    def __init__(self, ray: Any, opts: RayOptions, metrics: list[str], judge_config: JudgeConfig | None,
                 embedder_config: EmbedderConfig | None) -> None:
        cpus = float(ray.cluster_resources().get("CPU", 1.0))
        self.workers = opts.num_workers or max(1, int(cpus))
        # half a share each: actors live for the whole run, and Ray Data's read tasks need CPUs too
        actor = ray.remote(ScoringActor).options(num_cpus=max(cpus / self.workers / 2, 0.01),
                                                 max_restarts=opts.max_retries, max_task_retries=opts.max_retries)
        self.ray = ray
        self.actors = [actor.remote(metrics, judge_config, embedder_config, opts.metric_modules)
                       for _ in range(self.workers)]
        self.ahead = self.workers * 2
        self._turn = 0
        self._refs: dict[int, Any] = {}
        super().__init__(metrics)

    def submit(self, samples: list[Sample], before_wait: Callable[[], None]) -> AsyncIterator[dict[str, MetricResult]]:
        """Send ``samples`` to the next actor; the iterator yields their results once it answers."""
        k = self._turn % len(self.actors)
        self._turn += 1
        ref = self.actors[k].score.remote(samples)
        rows = self._rows(k, ref, before_wait)
        self._refs[id(rows)] = ref
        return rows

    async def _rows(self, k: int, ref: Any, before_wait: Callable[[], None]) -> AsyncIterator[dict[str, MetricResult]]:
        before_wait()
        records, stats = await ref
        self._note_stats(k, stats)
        for row in self._results(records):
            yield row

    def cancel(self, scored: Any) -> None:
        """Cancel the chunk's actor task (a stopped run), without waiting for it."""
        ref = self._refs.pop(id(scored), None)
        if ref is not None:
            with contextlib.suppress(Exception):
                self.ray.cancel(ref)

    def builds(self) -> list[int]:
        """Judges built per actor (:meth:`ScoringActor.builds`)."""
        return list(self.ray.get([a.builds.remote() for a in self.actors]))

    def close(self) -> None:
        """Close the actors' judges and end the actors."""
        with contextlib.suppress(Exception):
            self.ray.get([a.close.remote() for a in self.actors], timeout=30)
        for a in self.actors:
            with contextlib.suppress(Exception):
                self.ray.kill(a)


def _evaluate_samples(ray: Any, data: Any, metrics: Sequence[str] | None, opts: RayOptions,
                      judge_config: JudgeConfig | None, embedder_config: EmbedderConfig | None) -> RunResult:
    """The Sample path: :func:`~ragmeter.engines.driver.run_samples` with chunks of ``batch_size``
    scored by a :class:`RayExecutor`, written by the driver in input order."""
    # the driver's judge / embedder only decide default metrics and validate names: never called
    driver_judge = replace(judge_config, cache=False).build() if judge_config is not None else None
    driver_embedder = embedder_config.build() if embedder_config is not None else None
    try:
        items = read_items(ray, data, opts.read)
        head: list[Sample | InputError] = []
        if metrics is None:
            head = list(itertools.islice(items, opts.batch_size))
        run = plan(metrics, head, judge=driver_judge, embedder=driver_embedder, run_info=opts.run_info)
    finally:
        if driver_judge is not None:
            driver_judge.close()
    executor = RayExecutor(ray, opts, run.names, judge_config, embedder_config)
    run.info["engine"] = {"name": "ray", "workers": executor.workers, "batch_size": opts.batch_size}
    state = RunState(run.names, run.versions, run.info,
                     RunWriter(run.names, out_dir=opts.out_dir, keep_records=opts.keep_records),
                     progress=opts.progress, on_bad_row=opts.on_bad_row, on_judge_stats=opts.on_judge_stats,
                     evaluators=run.evaluators)
    try:
        result = asyncio.run(run_samples(itertools.chain(head, items), executor, state, chunk_size=opts.batch_size))
    finally:
        executor.close()
    state.presence.check(path=None if _is_uri(str(data)) or not isinstance(data, str | os.PathLike)
                         else os.fspath(data))
    return result
