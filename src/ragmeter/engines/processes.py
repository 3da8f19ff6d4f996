"""The processes engine: the local engine's evaluators, scored in a pool of local worker processes.

::

    import ragmeter

    if __name__ == "__main__":  # the workers are spawned: they import the main module
        run = ragmeter.evaluate("rag.jsonl", ["lexical_faithfulness", "rouge_l", "mrr"],
                                engine="processes", num_workers=8, out_dir="out")

For CPU-bound metrics (the lexical and retrieval metrics, an in-process NLI or embedding model) on
a machine with many cores and no Ray: chunks of ``chunk_size`` samples are handed to a
:class:`concurrent.futures.ProcessPoolExecutor` of ``num_workers`` spawned processes (default:
the machine's CPUs), two chunks queued per worker. Each worker builds its evaluators, and the
judge and embedder from their configs, once for the whole run, as a Ray actor does
(:class:`~ragmeter.engines.ray_engine.ScoringActor`, which the worker holds, on one event loop of
its own); a judge object holds connections and is never shipped. The driver is
:func:`ragmeter.engines.driver.run_samples`, the other engines' own: rows are read in this process
(:func:`ragmeter.io.as_samples`, the files' rules for ids and bad rows), written in input order,
and the abort rules are the same. A judge's ``concurrency`` is per worker. A judge cache left at
``True`` is resolved to this machine's cache directory, which the workers share.
"""

from __future__ import annotations

import asyncio
import importlib
import itertools
import multiprocessing
import multiprocessing.util
import os
from collections.abc import AsyncIterator, Callable, Sequence
from concurrent.futures import Future, ProcessPoolExecutor
from dataclasses import dataclass, replace
from typing import Any

from ..backend_config import EmbedderConfig, JudgeConfig
from ..errors import InputError, InvalidParameterError
from ..evaluator import plan
from ..io import as_samples
from ..io.options import ReadOptions
from ..results import RunResult, RunWriter
from ..types import MetricResult, Sample
from .driver import RunState, run_samples
from .ray_engine import ScoringActor, WorkerChunks

#: Samples per chunk handed to a worker.
DEFAULT_CHUNK_SIZE = 256


@dataclass(frozen=True)
class ProcessOptions:
    """The options of a processes run (:func:`run_processes`): how rows are read (``read``), where
    results go, and the pool.

    ``num_workers``: worker processes (default: the machine's CPUs); ``chunk_size``: samples per
    chunk; ``metric_modules``: modules every worker imports before building evaluators (where
    plugin metrics register); ``on_judge_stats``: called with the workers' judge counters summed,
    as chunks finish.
    """

    read: ReadOptions
    out_dir: str | os.PathLike[str] | None = None
    num_workers: int | None = None
    chunk_size: int = DEFAULT_CHUNK_SIZE
    keep_records: bool = True
    metric_modules: tuple[str, ...] = ()
    progress: Callable[[int], None] | None = None
    on_bad_row: Callable[[InputError], None] | None = None
    on_judge_stats: Callable[[dict[str, Any]], None] | None = None
    run_info: dict[str, Any] | None = None

    def __post_init__(self) -> None:
        for what, n in (("chunk_size", self.chunk_size), ("num_workers", self.num_workers)):
            if n is not None and (isinstance(n, bool) or not isinstance(n, int) or n < 1):
                raise InvalidParameterError(f"{what}: expected an integer >= 1, got {n!r}")


# ---- worker side --------------------------------------------------------------------------------

#: this worker process's scorer and event loop (set once by :func:`_start_worker`)
_WORKER: tuple[ScoringActor, asyncio.AbstractEventLoop] | None = None


def _start_worker(metrics: list[str], judge_config: JudgeConfig | None, embedder_config: EmbedderConfig | None,
                  metric_modules: Sequence[str]) -> None:
    """Build this worker's evaluators, judge and embedder once, and close the judge when it exits."""
    global _WORKER
    loop = asyncio.new_event_loop()
    asyncio.set_event_loop(loop)
    _WORKER = (ScoringActor(metrics, judge_config, embedder_config, metric_modules), loop)
    multiprocessing.util.Finalize(None, _stop_worker, exitpriority=10)


def _stop_worker() -> None:
    if _WORKER is not None:
        actor, loop = _WORKER
        loop.run_until_complete(actor.close())
        loop.close()


def _score(samples: list[Sample]) -> tuple[int, list[dict[str, dict[str, Any]]], dict[str, Any] | None]:
    """This worker's pid, one ``{metric: results.jsonl record}`` per sample, and its judge counters."""
    assert _WORKER is not None, "the worker was not started"
    actor, loop = _WORKER
    records, stats = loop.run_until_complete(actor.score(samples))
    return os.getpid(), records, stats


# ---- driver side --------------------------------------------------------------------------------


class ProcessExecutor(WorkerChunks):
    """Scores chunks in a pool of spawned worker processes (the driver's
    :class:`~ragmeter.engines.driver.SampleExecutor`); ``ahead`` keeps two chunks per worker."""

    def __init__(self, metrics: list[str], judge_config: JudgeConfig | None, embedder_config: EmbedderConfig | None,
                 opts: ProcessOptions) -> None:
        self.workers = opts.num_workers or os.cpu_count() or 1
        self.pool = ProcessPoolExecutor(
            max_workers=self.workers, mp_context=multiprocessing.get_context("spawn"), initializer=_start_worker,
            initargs=(metrics, judge_config, embedder_config, opts.metric_modules))
        self.ahead = self.workers * 2
        super().__init__(metrics)
        self._futures: dict[int, Future[Any]] = {}

    def submit(self, samples: list[Sample], before_wait: Callable[[], None]) -> AsyncIterator[dict[str, MetricResult]]:
        """Queue ``samples`` on the pool; the iterator yields their results once a worker answers."""
        future = self.pool.submit(_score, samples)
        rows = self._rows(future, before_wait)
        self._futures[id(rows)] = future
        return rows

    async def _rows(self, future: Future[Any],
                    before_wait: Callable[[], None]) -> AsyncIterator[dict[str, MetricResult]]:
        before_wait()
        pid, records, stats = await asyncio.wrap_future(future)
        self._note_stats(pid, stats)
        for row in self._results(records):
            yield row

    def cancel(self, scored: Any) -> None:
        """Drop a chunk that will not be written (one a worker has started runs to its end)."""
        future = self._futures.pop(id(scored), None)
        if future is not None:
            future.cancel()

    def close(self) -> None:
        """End the workers (each closes its judge as it exits)."""
        self.pool.shutdown(wait=True, cancel_futures=True)


def run_processes(data: Any, metrics: Sequence[str] | None, opts: ProcessOptions, *,
                  judge_config: JudgeConfig | None = None,
                  embedder_config: EmbedderConfig | None = None) -> RunResult:
    """Evaluate ``data`` in a pool of local worker processes (what :func:`ragmeter.evaluate` runs with
    ``engine="processes"``); the result and files equal the local engine's.

    ``data`` is anything :func:`ragmeter.io.as_samples` reads. Every worker builds its judge /
    embedder from ``judge_config`` / ``embedder_config``.
    """
    judge_config = judge_config.with_cache_dir() if judge_config is not None else None
    for module in opts.metric_modules:
        importlib.import_module(module)
    # the driver's judge / embedder only decide default metrics and validate names: never called
    driver_judge = replace(judge_config, cache=False).build() if judge_config is not None else None
    driver_embedder = embedder_config.build() if embedder_config is not None else None
    try:
        items = as_samples(data, read=opts.read)
        head: list[Sample | InputError] = []
        if metrics is None:
            head = list(itertools.islice(items, opts.chunk_size))
        run = plan(metrics, head, judge=driver_judge, embedder=driver_embedder, run_info=opts.run_info)
    finally:
        if driver_judge is not None:
            driver_judge.close()
    executor = ProcessExecutor(run.names, judge_config, embedder_config, opts)
    run.info["engine"] = {"name": "processes", "workers": executor.workers, "chunk_size": opts.chunk_size}
    state = RunState(run.names, run.versions, run.info,
                     RunWriter(run.names, out_dir=opts.out_dir, keep_records=opts.keep_records),
                     progress=opts.progress, on_bad_row=opts.on_bad_row, on_judge_stats=opts.on_judge_stats,
                     evaluators=run.evaluators)
    try:
        result = asyncio.run(run_samples(itertools.chain(head, items), executor, state, chunk_size=opts.chunk_size))
    finally:
        executor.close()
    state.presence.check(path=os.fspath(data) if isinstance(data, str | os.PathLike) else None)
    return result
