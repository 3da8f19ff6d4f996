"""The evaluator contract: what every evaluator offers and the optional capabilities the runner uses.

A leaf module (it imports nothing of ragmeter at import time), so metric modules, engines and the
evaluator can all depend on it without an import cycle.

====================  =========================================  ==========================================
protocol              method                                     used by
====================  =========================================  ==========================================
:class:`Evaluator`    ``evaluate(sample)``, ``aevaluate(sample)``  every engine, one sample at a time
:class:`BatchEvaluator`  ``evaluate_batch(samples, ctx)``        the chunk scorer, before per-sample calls
:class:`AsyncBatchEvaluator`  ``aevaluate_batch(samples)``       the chunk scorer: a score that depends on
                                                                 the whole chunk (answer_relevancy)
:class:`KernelEvaluator`  ``kernel_scores(batch)``               the columnar engine: one score per row of
                                                                 a ``RelevanceBatch``, NaN when undefined
:class:`PlansCalls`   ``planned_calls(sample)``                  the run driver: the judge calls a run will
                                                                 make, known before the first one
====================  =========================================  ==========================================

The capabilities are found with ``isinstance(ev, BatchEvaluator)`` (the protocols are
``runtime_checkable``), never with ``getattr``.
"""

from __future__ import annotations

from collections.abc import Hashable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

if TYPE_CHECKING:
    import numpy as np

    from .metrics.retrieval import RelevanceBatch
    from .metrics.retrieval.relevance import Relevance
    from .registry import MetricSpec
    from .types import MetricResult, Sample


@runtime_checkable
class Evaluator(Protocol):
    """Scores one metric. ``name`` is canonical (``ndcg@5``); ``version`` is recorded on every result."""

    name: str
    version: str
    spec: MetricSpec

    def evaluate(self, sample: Sample) -> MetricResult:
        """Score ``sample``."""
        ...

    async def aevaluate(self, sample: Sample) -> MetricResult:
        """Score ``sample`` without blocking the event loop."""
        ...


@runtime_checkable
class BatchEvaluator(Protocol):
    """Scores many samples at once (vectorised); ``ctx`` is the chunk's shared memo."""

    def evaluate_batch(self, samples: Sequence[Sample], ctx: Any = None) -> list[MetricResult]:
        """One result per sample of ``samples``, in order."""
        ...


@runtime_checkable
class AsyncBatchEvaluator(Protocol):
    """Scores a whole chunk asynchronously (a score that depends on the chunk, e.g. a batch baseline).
    ``whole_chunk`` says whether it must (else the chunk scorer scores its samples one by one, so
    each is written as soon as it is done)."""

    whole_chunk: bool

    async def aevaluate_batch(self, samples: Sequence[Sample]) -> list[MetricResult]:
        """One result per sample of ``samples``, in order."""
        ...


@runtime_checkable
class KernelEvaluator(Evaluator, Protocol):
    """A retrieval metric with a vectorised kernel over a relevance batch (the columnar engine)."""

    rel_level: float

    def kernel_scores(self, batch: RelevanceBatch) -> np.ndarray:
        """One float per row of ``batch``: the score, NaN where the metric is undefined."""
        ...

    def result_of(self, rel: Relevance | None, value: float, cannot: str | None = None) -> MetricResult:
        """The result of a row whose relevance is ``rel`` and kernel value ``value``, worded as
        the ``Sample`` path words it."""
        ...


@dataclass(frozen=True)
class PlannedStep:
    """Judge calls one step of scoring a sample will make. ``key`` names the step and its content
    the way the step is shared: two metrics that share a step on a sample (faithfulness and
    hallucination_rate share the claim verdicts), or two samples with the same content, plan it
    under the same key, so it is counted once; a step made for every sample however alike has
    the sample's id in its key. ``exact`` is False when the count depends on the judge's replies
    (a second call made only when the first found claims): ``calls`` is then the number expected,
    which may be a fraction (a call made for about every other such sample: 0.5)."""

    key: Hashable
    calls: float = 1
    exact: bool = True


@runtime_checkable
class PlansCalls(Protocol):
    """An evaluator that knows, before calling the judge, which judge calls a sample will cost."""

    def planned_calls(self, sample: Sample) -> list[PlannedStep]:
        """The steps scoring ``sample`` makes judge calls for (none: no call)."""
        ...
