"""The evaluator contract and the local engine: :func:`plan`, :func:`score_chunk`, :class:`LocalExecutor`,
:func:`aevaluate` (the public entry is :func:`ragmeter.evaluate`, in :mod:`ragmeter.engines.entry`).

An :class:`Evaluator` scores one metric on one sample (``evaluate`` / async ``aevaluate``).
Evaluators that can work on many samples at once (the vectorised retrieval metrics) also offer
``evaluate_batch(samples, ctx)``; the runner prefers it. An async evaluator whose score depends on
the whole chunk (answer_relevancy with a batch baseline) offers ``aevaluate_batch(samples)``,
awaited alongside the per-sample calls. Whatever an evaluator raises on a sample
is recorded as that sample's error for that metric: a failure is never a 0 and never dropped.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import itertools
import os
import time
from collections.abc import AsyncIterator, Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from .contract import AsyncBatchEvaluator, BatchEvaluator, Evaluator
from .engines.driver import RunState, run_samples
from .errors import InputError, InvalidParameterError
from .io.adapters import as_samples, keep_inputs
from .io.fields import absent_result, field_hints, missing_field
from .io.options import ReadOptions, read_options
from .io.records import DEFAULT_MAX_TEXT_CHARS
from .judges import resolve as resolve_judge
from .judges.concurrency import REQUEST_RANK
from .registry import default_metric_names, get_evaluator, skipped_metrics
from .results import RunResult, RunWriter
from .types import MetricResult, Sample

__all__ = ["BatchContext", "Evaluator", "aevaluate", "run_local"]


class BatchContext:
    """A per-batch memo shared by the evaluators of one run (e.g. a sample's ranked relevance)."""

    def __init__(self) -> None:
        self._memo: dict[Any, Any] = {}

    def get(self, key: Any, compute: Callable[[], Any]) -> Any:
        """The memoised value for ``key``, computed once."""
        if key not in self._memo:
            self._memo[key] = compute()
        return self._memo[key]


def present_fields(samples: Iterable[Sample]) -> set[str]:
    """Fields that are non-empty in at least one of ``samples`` (decides the default metrics)."""
    fields: set[str] = set()
    for s in samples:
        if s.query:
            fields.add("query")
        if s.answer:
            fields.add("answer")
        if s.contexts:
            fields.add("contexts")
            if any(c.text for c in s.contexts):
                fields.add("context_texts")
        if s.reference:
            fields.add("reference")
        if s.relevant is not None:
            fields.add("relevant")
    return fields


def choose_metrics(head: Iterable[Sample | InputError], *, judge: Any = None,
                   embedder: Any = None) -> tuple[list[str], list[str]]:
    """The default metrics for data whose first rows are ``head``, and the metrics skipped for want
    of a judge or an embedder. Raises when the data allows no metric at all."""
    fields = present_fields(s for s in head if isinstance(s, Sample))
    metrics = default_metric_names(fields, judge=judge, embedder=embedder)
    if not metrics:
        hints = field_hints(s for s in head if isinstance(s, Sample))
        raise InvalidParameterError(
            "no metric can be computed from this data: the rows need retrieved contexts with "
            "relevance labels or a reference answer (or configure a judge/embedder)"
            + "".join(f"; {h}" for h in hints)
        )
    return metrics, [s.name for s in skipped_metrics(fields, judge=judge, embedder=embedder)]


@dataclass
class Plan:
    """What a run computes, decided once before the first chunk: the evaluators (in the order of
    the results columns) and the run-info dict that ``summary.json`` starts from."""

    evaluators: list[Evaluator]
    info: dict[str, Any]

    @property
    def names(self) -> list[str]:
        """The canonical metric names, in column order."""
        return [ev.name for ev in self.evaluators]

    @property
    def versions(self) -> dict[str, str]:
        """``{metric: version}``."""
        return {ev.name: ev.version for ev in self.evaluators}


def plan(metrics: Sequence[str] | None, head: Iterable[Sample | InputError] = (), *, judge: Any = None,
         embedder: Any = None, run_info: dict[str, Any] | None = None,
         evaluators: Sequence[Evaluator] | None = None) -> Plan:
    """The :class:`Plan` of a run over data whose first rows are ``head``: ``metrics`` (None: the
    defaults :func:`choose_metrics` picks from ``head``) built with ``judge``/``embedder`` (or the
    given ``evaluators``), and the run info (``ragmeter_version``, per-metric versions, the skipped
    metrics, the start time, then ``run_info``'s keys). Every engine starts from this one plan.

    Raises InvalidParameterError when a metric is asked twice or the data allows none.
    """
    from . import __version__

    skipped: list[str] = []
    hints: list[str] = []
    if evaluators is None:
        if metrics is None:
            metrics, skipped = choose_metrics(head, judge=judge, embedder=embedder)
            hints = field_hints(s for s in head if isinstance(s, Sample))
        evaluators = [get_evaluator(m, judge=judge, embedder=embedder) for m in metrics]
    evs = list(evaluators)
    names = [ev.name for ev in evs]
    if len(set(names)) != len(names):
        raise InvalidParameterError(f"the same metric was asked for twice: {names}")
    info: dict[str, Any] = {
        "ragmeter_version": __version__,
        "metrics": {ev.name: {"version": ev.version} for ev in evs},
        "skipped_metrics": skipped,
        **({"field_hints": hints} if hints else {}),
        "started": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        **(run_info or {}),
    }
    if judge is not None:  # the judge-check on record for this judge and prompt versions, or why none
        from .judges.record import on_record

        if (check := on_record(judge, names)) is not None:
            info["judge_check"] = check
    return Plan(evs, info)


async def score_chunk(
    evaluators: Sequence[Evaluator], samples: Sequence[Sample]
) -> dict[str, list[MetricResult]]:
    """Every evaluator's results on ``samples``, ``{metric: [result per sample]}`` (the public chunk
    scorer: what the columnar and Ray engines call; see :func:`_score_stream` for the rules)."""
    out: dict[str, list[MetricResult]] = {ev.name: [] for ev in evaluators}
    async for _i, res in _score_stream(evaluators, samples):
        for name, r in res.items():
            out[name].append(r)
    return out


async def _score_stream(
    evaluators: Sequence[Evaluator], samples: Sequence[Sample],
    before_wait: Callable[[], None] | None = None, window: int | None = None,
) -> AsyncIterator[tuple[int, dict[str, MetricResult]]]:
    """Score ``samples`` and yield ``(index, {metric: result})`` in input order, each sample as soon
    as it and every sample before it are done (``before_wait`` runs before waiting on one that is
    not: the caller flushes what it has written, so a killed run keeps every finished sample).

    A sample that lacks a field a metric needs gets the undefined result naming the field
    (:mod:`ragmeter.io.fields`); the metric never sees it. Vectorised ``evaluate_batch``
    evaluators run first over the chunk; then every metric x sample is awaited together so a
    judge's concurrency is kept busy, at most ``window`` samples at once (None: all): when one
    finishes the next starts, and a sample's judge requests carry its index
    (:data:`~ragmeter.judges.concurrency.REQUEST_RANK`), so a started sample's later calls (a
    second stage) are sent before later samples' first calls and samples finish, and are
    written, as the run goes; evaluators whose score depends on the whole chunk
    (:class:`~ragmeter.contract.AsyncBatchEvaluator` with ``whole_chunk``) take the chunk.
    """
    n = len(samples)
    out: dict[str, list[MetricResult | None]] = {ev.name: [None] * n for ev in evaluators}
    todo = _absent_first(evaluators, samples, out)
    pending = _batched_first(evaluators, samples, todo, out)

    async def one(sample: Sample, ev: Evaluator) -> MetricResult:
        try:
            return await ev.aevaluate(sample)
        except Exception as exc:
            return MetricResult.from_error(ev.name, ev.version, exc)

    async def whole(ev: Evaluator, idx: list[int]) -> None:
        assert isinstance(ev, AsyncBatchEvaluator)
        REQUEST_RANK.set(-1)  # the first sample is written only once this is done: its requests go first
        try:
            res = list(await ev.aevaluate_batch([samples[i] for i in idx]))
        except Exception as exc:
            res = [MetricResult.from_error(ev.name, ev.version, exc)] * len(idx)
        for i, r in zip(idx, res, strict=True):
            out[ev.name][i] = r

    async def per_sample(i: int, evs: list[Evaluator]) -> None:
        REQUEST_RANK.set(i)  # this task's judge requests wait in sample order (the task's own context)
        for ev, r in zip(evs, await asyncio.gather(*(one(samples[i], ev) for ev in evs)), strict=True):
            out[ev.name][i] = r

    batched = [ev for ev in pending if isinstance(ev, AsyncBatchEvaluator) and ev.whole_chunk]
    single = [ev for ev in pending if ev not in batched]
    wanted = {ev.name: set(todo[ev.name]) for ev in single}
    whole_tasks: list[asyncio.Future[None]] = [asyncio.ensure_future(whole(ev, todo[ev.name])) for ev in batched]
    by_sample: dict[int, asyncio.Future[None]] = {}
    limit = n if window is None else max(1, window)
    started, running = 0, 0

    def launch(_done: Any = None) -> None:  # in sample order: the judge's slots go to early samples first
        nonlocal started, running
        if _done is not None:
            running -= 1
        while started < n and running < limit:
            i, started = started, started + 1
            evs = [ev for ev in single if i in wanted[ev.name]]
            if evs:
                running += 1
                by_sample[i] = asyncio.ensure_future(per_sample(i, evs))
                by_sample[i].add_done_callback(launch)

    launch()

    async def ready(task: asyncio.Future[None]) -> None:
        if not task.done() and before_wait is not None:
            before_wait()
        await task

    try:
        for task in whole_tasks:
            await ready(task)
        for i in range(n):
            if i >= started:
                launch()
            if i in by_sample:
                await ready(by_sample[i])
            yield i, {ev.name: _done(out[ev.name][i]) for ev in evaluators}
    finally:
        for task in [*whole_tasks, *by_sample.values()]:
            task.cancel()


def _absent_first(evaluators: Sequence[Evaluator], samples: Sequence[Sample],
                  out: dict[str, list[MetricResult | None]]) -> dict[str, list[int]]:
    """Fill in the undefined result of every sample lacking a field its metric needs; returns, per
    metric, the samples left to score."""
    todo: dict[str, list[int]] = {}
    for ev in evaluators:
        spec = getattr(ev, "spec", None)
        idx: list[int] = []
        for i, s in enumerate(samples):
            miss = missing_field(spec, s) if spec is not None else None
            if miss is None:
                idx.append(i)
            else:
                out[ev.name][i] = absent_result(ev.name, ev.version, miss)
        todo[ev.name] = idx
    return todo


def _batched_first(evaluators: Sequence[Evaluator], samples: Sequence[Sample], todo: dict[str, list[int]],
                   out: dict[str, list[MetricResult | None]]) -> list[Evaluator]:
    """Run the vectorised ``evaluate_batch`` evaluators over their samples; returns the evaluators
    still to run sample by sample (the others, and a batch evaluator that raised)."""
    ctx = BatchContext()
    pending: list[Evaluator] = []
    for ev in evaluators:
        idx = todo[ev.name]
        if not idx:
            continue
        if isinstance(ev, BatchEvaluator):
            try:
                for i, r in zip(idx, ev.evaluate_batch([samples[i] for i in idx], ctx), strict=True):
                    out[ev.name][i] = r
                continue
            except Exception:  # fall back to one sample at a time, so one bad sample costs only itself
                pass
        pending.append(ev)
    return pending


def _done(r: MetricResult | None) -> MetricResult:
    assert r is not None
    return r


class LocalExecutor:
    """Scores chunks in this process's event loop (:func:`_score_stream`), one chunk at a time."""

    ahead = 0

    def __init__(self, evaluators: Sequence[Evaluator], judge: Any = None) -> None:
        self.evaluators, self.judge = list(evaluators), judge
        #: samples in flight: the judge's concurrency (a sample finishes before many more start)
        self.window: int | None = getattr(judge, "concurrency", None) if judge is not None else None
        self._before = _judge_stats(judge)  # a judge reused across runs: report this run's counts only

    def submit(self, samples: list[Sample], before_wait: Callable[[], None]) -> AsyncIterator[dict[str, MetricResult]]:
        """Each sample's results, in input order, as they finish."""

        async def rows() -> AsyncIterator[dict[str, MetricResult]]:
            async for _i, res in _score_stream(self.evaluators, samples, before_wait=before_wait,
                                               window=self.window):
                yield res

        return rows()

    def judge_stats(self) -> dict[str, Any] | None:
        """This run's judge counters (the judge's counters less those it had at the start)."""
        from .judges.counters import stats_delta

        now = _judge_stats(self.judge)
        return stats_delta(now, self._before) if now is not None else None

    def cancel(self, scored: Any) -> None:
        """Nothing runs ahead here."""


async def aevaluate(
    samples: Any,
    metrics: Sequence[str] | None = None,
    *,
    judge: Any = None,
    embedder: Any = None,
    out_dir: str | os.PathLike[str] | None = None,
    keep_records: bool = True,
    chunk_size: int = 2048,
    progress: Callable[[int], None] | None = None,
    run_info: dict[str, Any] | None = None,
    on_error: str = "raise",
    field_map: dict[str, str] | None = None,
    format: str | None = None,
    max_text_chars: int | None = DEFAULT_MAX_TEXT_CHARS,
    read: ReadOptions | None = None,
    on_bad_row: Callable[[InputError], None] | None = None,
) -> RunResult:
    """The async twin of :func:`ragmeter.evaluate` on the local engine, for code already in an event
    loop: ``samples`` is anything :func:`ragmeter.io.as_samples` reads, every sample is scored on
    this loop (the ``Sample`` path; no columnar fast path, no engine choice), and ``embedder`` is
    an object, a spec or None (no ``"auto"``). The other parameters are :func:`ragmeter.evaluate`'s.
    """
    opts = read_options(read, on_error=on_error, field_map=field_map, format=format, max_text_chars=max_text_chars)
    judge = resolve_judge(judge)
    inputs: list[Sample | None] | None = [] if keep_records else None  # for to_pandas(inputs=True)
    iterator = keep_inputs(as_samples(samples, read=opts), inputs)
    head: list[Sample | InputError] = []
    if metrics is None:
        # peek at the first rows to see which fields the data has
        for item in iterator:
            head.append(item)
            if len(head) >= chunk_size:
                break
    run = plan(metrics, head, judge=judge, embedder=embedder, run_info=run_info)
    state = RunState(run.names, run.versions, run.info,
                     RunWriter(run.names, out_dir=os.fspath(out_dir) if out_dir is not None else None,
                               keep_records=keep_records),
                     progress=progress, on_bad_row=on_bad_row, evaluators=run.evaluators,
                     on_plan=getattr(judge, "expect", None))
    executor = LocalExecutor(run.evaluators, judge)
    result = await run_samples(itertools.chain(head, iterator), executor, state, chunk_size=chunk_size)
    await _aclose_judge(judge)
    result.inputs = inputs
    state.presence.check(path=os.fspath(samples) if isinstance(samples, str | os.PathLike) else None)
    return result


def _judge_stats(judge: Any) -> dict[str, Any] | None:
    return judge.stats() if judge is not None and callable(getattr(judge, "stats", None)) else None


async def _aclose_judge(judge: Any) -> None:
    if judge is not None and callable(getattr(judge, "aclose", None)):
        await judge.aclose()  # its HTTP connections belong to this event loop


def _in_event_loop() -> bool:
    """Whether this thread runs an event loop (Jupyter). The probe's RuntimeError is handled here,
    so an error of the run that follows chains to nothing."""
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return False
    return True


def _run_sync(make: Callable[[], Any]) -> Any:
    """Run the coroutine ``make()`` returns to completion: here, or inside a running event loop
    (Jupyter) in a worker thread with its own loop."""
    if not _in_event_loop():
        return asyncio.run(make())
    with concurrent.futures.ThreadPoolExecutor(1) as pool:
        return pool.submit(lambda: asyncio.run(make())).result()


def run_local(samples: Any, metrics: Sequence[str] | None, *, read: ReadOptions, **options: Any) -> RunResult:
    """:func:`aevaluate` run to completion (the local engine's ``Sample`` path of
    :func:`ragmeter.evaluate`): here, or inside a running event loop (Jupyter) in a worker thread
    with its own loop."""
    return _run_sync(lambda: aevaluate(samples, metrics, read=read, **options))  # type: ignore[no-any-return]
