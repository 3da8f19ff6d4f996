"""The run driver: read -> score -> write -> finish or abort, written once for every engine.

:func:`run` takes the units of a source (chunks of samples, or a columnar source's row blocks),
starts each on an executor (``submit``: this process, a Ray actor pool, the columnar kernels), keeps
``ahead`` units in flight and writes each finished unit in input order (``write``). The rules every
engine follows, because only this function holds them:

* **The source's error** (a bad row with ``on_error="raise"``, an unreadable file part) stops the
  reading; every row read before it is still scored and written, then ``summary.json`` records the
  run as ``aborted`` and the error is raised.
* **Any other error** (an unreachable judge, Ctrl-C, a bug) cancels the units in flight, keeps the
  rows written so far, records ``aborted`` and is raised.
* **An unreachable judge** stops the run after the first row whose result says so
  (:meth:`RunState.add_sample`): no later row could be judged, and which later rows happened to
  finish would depend on where they ran.
* ``summary.json`` is written by :meth:`RunState.finish` and nowhere else.

:class:`RunState` is the writing side: the one :class:`~ragmeter.results.RunWriter`, the bad-row
count, the field-presence notes (:class:`~ragmeter.io.fields.FieldPresence`) and the progress
callbacks, and the run's :class:`CallPlan` (the judge calls planned for the rows read so far,
counted from each chunk's samples before the chunk goes to its executor, so the total is known
before the first judge call). Executors of samples (:class:`SampleExecutor`) yield each sample's results in input
order; :func:`sample_units` / :func:`write_samples` are the Sample path's ``units`` and ``write``.
"""

from __future__ import annotations

import math
import time
from collections import deque
from collections.abc import AsyncIterator, Awaitable, Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any, Protocol, TypeVar

from ..contract import PlansCalls
from ..errors import InputError, JudgeUnreachable, error_info
from ..io.fields import FieldPresence
from ..results import RunResult, RunWriter
from ..types import MetricResult, Sample

U = TypeVar("U")
S = TypeVar("S")

#: Called with the number of rows just written (bad rows included), in input order.
Progress = Callable[[int], None]


class SampleExecutor(Protocol):
    """Where a chunk of samples is scored: this process, or a Ray actor pool."""

    #: Chunks started ahead of the one being written (0: one chunk at a time).
    ahead: int

    def submit(self, samples: list[Sample], before_wait: Callable[[], None]) -> AsyncIterator[dict[str, MetricResult]]:
        """Start scoring ``samples``; the iterator yields each one's ``{metric: result}`` in input
        order (``before_wait`` runs before it waits: the writer flushes what it holds)."""
        ...

    def judge_stats(self) -> dict[str, Any] | None:
        """This run's judge counters so far (None: no judge)."""
        ...

    def cancel(self, scored: AsyncIterator[dict[str, MetricResult]]) -> None:
        """Stop work on a chunk that will not be written."""
        ...


#: The judge-counter keys of a :class:`CallPlan`: calls planned, rows they are planned for, exact.
PLAN_KEYS = ("planned", "planned_rows", "planned_exact")


@dataclass
class CallPlan:
    """The judge calls a run plans (:class:`~ragmeter.contract.PlansCalls`), for the ``rows`` read so
    far: the union of the steps of the samples of each :meth:`add` (one chunk of the run; a step
    two metrics share, or two samples with the same content, counts once, as the run's single-flight
    memo makes it once on the chunk's event loop: :mod:`ragmeter.metrics.generation._memo`), summed
    over the chunks. A step that is not shared across samples has the sample's id in its key.
    ``exact`` is False when a count depends on the judge's replies (``calls`` then sums the numbers
    expected, shown rounded half up), or a judged metric plans no steps (it then counts none).
    Cached calls are counted: the plan is made without the cache."""

    calls: float = 0
    rows: int = 0
    exact: bool = True

    def add(self, evaluators: Sequence[Any], samples: Sequence[Sample]) -> None:
        """Count the calls of ``samples`` under ``evaluators``."""
        planners = [ev for ev in evaluators if isinstance(ev, PlansCalls)]
        if any(ev.spec.needs_judge and not isinstance(ev, PlansCalls) for ev in evaluators):
            self.exact = False
        steps = {s.key: s for sample in samples for ev in planners for s in ev.planned_calls(sample)}
        self.calls += sum(s.calls for s in steps.values())
        self.exact = self.exact and all(s.exact for s in steps.values())
        self.rows += len(samples)

    def as_stats(self) -> dict[str, Any]:
        """The plan as judge counters (:data:`PLAN_KEYS`)."""
        return dict(zip(PLAN_KEYS, (math.floor(self.calls + 0.5), self.rows, self.exact), strict=True))


def finish_info(info: dict[str, Any], *, t0: float, input_errors: int, presence: FieldPresence | None,
                judge_stats: dict[str, Any] | None) -> None:
    """Complete a plan's run info at the end of a run, the same way on every engine: ``seconds``
    since ``t0``, ``input_errors`` (bad rows recorded), ``input_checks`` (fields absent, when any;
    per metric in the plan's order, so engines that see rows in another order agree)
    and ``judge`` (this run's judge counters, when a judge was used; the planned calls left out)."""
    info["seconds"] = round(time.perf_counter() - t0, 3)
    info["input_errors"] = input_errors
    checks = presence.run_info() if presence is not None else {}
    if checks:  # per-metric entries in the plan's metric order, whichever row found them first
        order = list(info.get("metrics") or {})
        for key, value in checks.items():
            if isinstance(value, dict) and set(value) <= set(order):
                checks[key] = {m: value[m] for m in order if m in value}
        info["input_checks"] = checks
    if judge_stats is not None:  # this run's calls, cache hits, retries, errors by type, tokens, cost
        # the plan is for the progress line, not a result: an aborted run's plan depends on how far
        # each engine had read ahead
        info["judge"] = {k: v for k, v in judge_stats.items() if k not in PLAN_KEYS}


def bad_row_id(item: InputError) -> str:
    """The id under which a bad row is recorded (``path:line``)."""
    return f"{item.path or 'row'}:{item.line}" if item.line is not None else str(item.path)


class RunState:
    """The writing side of a run: the writer, the counts ``summary.json`` records, progress."""

    def __init__(self, names: list[str], versions: dict[str, str], info: dict[str, Any], writer: RunWriter, *,
                 progress: Progress | None = None, on_bad_row: Callable[[InputError], None] | None = None,
                 on_judge_stats: Callable[[dict[str, Any]], None] | None = None,
                 evaluators: Sequence[Any] = (), on_plan: Callable[[dict[str, Any]], None] | None = None) -> None:
        self.names, self.versions, self.info, self.writer = names, versions, info, writer
        self.progress, self.on_bad_row, self.on_judge_stats = progress, on_bad_row, on_judge_stats
        #: the judged evaluators whose calls are planned; ``on_plan`` gets the plan as it grows
        self.evaluators = [ev for ev in evaluators if ev.spec.needs_judge]
        self.on_plan = on_plan
        self.plan = CallPlan() if self.evaluators else None
        self.presence = FieldPresence()
        self.bad_rows = 0
        self.t0 = time.perf_counter()

    def plan_chunk(self, samples: Sequence[Sample]) -> None:
        """Count the judge calls ``samples`` will make (before they are scored)."""
        if self.plan is None:
            return
        self.plan.add(self.evaluators, samples)
        if self.on_plan is not None:
            self.on_plan(self.plan.as_stats())

    def add_sample(self, sample: Sample, results: dict[str, MetricResult]) -> None:
        """Write one sample's results; raise JudgeUnreachable after a row whose judge said so."""
        self.presence.note_sample(sample)
        self.presence.note(results)
        self.writer.add(sample.id, results, sample.input_metadata())
        if self.progress is not None:
            self.progress(1)
        for r in results.values():
            if r.error is not None and r.error.type == JudgeUnreachable.__name__:
                self.writer.flush()
                raise JudgeUnreachable(r.error.message)

    def add_bad(self, item: InputError) -> None:
        """Write a bad row (``on_error="skip"``) as an error of every metric."""
        self.bad_rows += 1
        if self.on_bad_row is not None:
            self.on_bad_row(item)
        self.writer.add(bad_row_id(item), {m: MetricResult.from_error(m, self.versions[m], item) for m in self.names})
        if self.progress is not None:
            self.progress(1)

    def finish(self, judge_stats: dict[str, Any] | None, aborted: BaseException | None = None) -> RunResult:
        """Complete the run info (``aborted`` when the run stopped on an error), close
        ``results.jsonl`` and write ``summary.json``."""
        if aborted is not None:
            self.info["aborted"] = error_info(aborted)
        finish_info(self.info, t0=self.t0, input_errors=self.bad_rows, presence=self.presence,
                    judge_stats=judge_stats)
        return self.writer.finish(self.info)


def _until_error(units: Iterable[U], failed: list[BaseException]) -> Iterator[U]:
    """``units`` until the source raises; its error is kept in ``failed`` (the rows read before it
    are still scored and written)."""
    try:
        yield from units
    except Exception as exc:
        failed.append(exc)


async def run(units: Iterable[U], submit: Callable[[U], S], write: Callable[[U, S], Awaitable[None]], *,
              state: RunState, ahead: int = 0, judge_stats: Callable[[], dict[str, Any] | None] = lambda: None,
              cancel: Callable[[S], None] | None = None) -> RunResult:
    """Score and write every unit of ``units`` in order, keeping ``ahead`` units in flight; the
    :class:`~ragmeter.results.RunResult` (see the module docstring for the abort rules)."""
    failed: list[BaseException] = []
    pending: deque[tuple[U, S]] = deque()
    try:
        for unit in _until_error(units, failed):
            pending.append((unit, submit(unit)))
            _report(state, judge_stats)  # the calls planned for this unit, before its first call
            while len(pending) > ahead:
                await write(*pending.popleft())
                _report(state, judge_stats)
        while pending:
            await write(*pending.popleft())
            _report(state, judge_stats)
        if failed:
            raise failed[0]
    except BaseException as exc:
        while pending and cancel is not None:
            cancel(pending.popleft()[1])
        state.finish(judge_stats(), aborted=exc)
        raise
    return state.finish(judge_stats())


def _report(state: RunState, judge_stats: Callable[[], dict[str, Any] | None]) -> None:
    """The executor's judge counters with the plan, to ``on_judge_stats`` (an engine whose judges
    run elsewhere)."""
    if state.on_judge_stats is None:
        return
    stats = judge_stats()
    if stats is not None or state.plan is not None:
        state.on_judge_stats({**(stats or {}), **(state.plan.as_stats() if state.plan is not None else {})})


def sample_units(items: Iterable[Sample | InputError], size: int) -> Iterator[list[Sample | InputError]]:
    """``items`` cut into chunks of ``size``; when the source raises, the rows read before it are
    the last chunk and the error is raised after it (:func:`run` scores and writes that chunk)."""
    chunk: list[Sample | InputError] = []
    failed: list[BaseException] = []
    for item in _until_error(items, failed):
        chunk.append(item)
        if len(chunk) >= size:
            yield chunk
            chunk = []
    if chunk:
        yield chunk
    if failed:
        raise failed[0]


def submit_samples(executor: SampleExecutor, state: RunState) -> Callable[[list[Sample | InputError]], Any]:
    """The ``submit`` of a Sample-path run: the chunk's good samples to ``executor``."""

    def submit(chunk: list[Sample | InputError]) -> Any:
        good = [s for s in chunk if isinstance(s, Sample)]
        state.plan_chunk(good)
        return executor.submit(good, state.writer.flush) if good else None

    return submit


def write_samples(state: RunState) -> Callable[[list[Sample | InputError], Any], Awaitable[None]]:
    """The ``write`` of a Sample-path run: each row as its results come, in input order."""

    async def write(chunk: list[Sample | InputError], scored: AsyncIterator[dict[str, MetricResult]] | None) -> None:
        try:
            for item in chunk:
                if isinstance(item, Sample):
                    assert scored is not None
                    state.add_sample(item, await anext(scored))
                else:
                    state.add_bad(item)
        finally:
            if scored is not None:
                await scored.aclose()  # type: ignore[attr-defined]
        state.writer.flush()

    return write


async def run_samples(items: Iterable[Sample | InputError], executor: SampleExecutor, state: RunState, *,
                      chunk_size: int) -> RunResult:
    """:func:`run` over samples: chunks of ``chunk_size`` scored by ``executor``."""
    return await run(sample_units(items, chunk_size), submit_samples(executor, state), write_samples(state),
                     state=state, ahead=executor.ahead, judge_stats=executor.judge_stats,
                     cancel=lambda s: executor.cancel(s) if s is not None else None)
