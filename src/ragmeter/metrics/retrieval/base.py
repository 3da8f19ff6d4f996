"""The evaluator shared by every retrieval metric, and the helper that declares their registry entries.

A retrieval metric is a vectorised kernel ``kernel(batch, k=..., **params) -> float array`` over a
:class:`~ragmeter.metrics.retrieval.RelevanceBatch`. The evaluator decides each sample's
relevance once per batch (shared between metrics through the run's batch context), runs the
kernel over the whole batch, and turns NaN into an undefined result with a reason.
"""

from __future__ import annotations

import asyncio
import math
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from ...io.fields import UNMATCHABLE_KEY
from ...names import MetricName
from ...registry import MetricSpec, Param, Role, register
from ...types import MetricResult, Sample
from ._batch import RankedList, RelevanceBatch
from .relevance import Relevance, judge_relevance, labels_cannot_match

REL_LEVEL = Param("rel_level", float, 1.0, "grade at or above which a labelled item counts as relevant")
NO_RELEVANCE = "undefined: no relevance labels and no reference answer to match the contexts against"
NO_LABELS = "undefined: no labelled relevant chunks (this metric needs labels)"
_EMPTY = RankedList((), (), (), float("nan"), ())


class RetrievalEvaluator:
    """Evaluator for one retrieval metric name (e.g. ``ndcg@5``)."""

    def __init__(self, spec: MetricSpec, name: MetricName, kernel: Callable[..., np.ndarray],
                 needs_labels: bool, undefined_reason: str = NO_LABELS) -> None:
        self.spec = spec
        self.name = str(name)
        self.version = spec.version
        params = name.kwargs
        self.rel_level = float(params.pop("rel_level", 1.0))
        self._kwargs = params
        if spec.cutoff != "none":
            self._kwargs["k"] = name.cutoff
        self._kernel = kernel
        self._needs_labels = needs_labels
        self.undefined_reason = undefined_reason

    def _relevance(self, samples: Sequence[Sample], ctx: Any) -> list[Relevance | None]:
        if ctx is None:
            return [judge_relevance(s, self.rel_level) for s in samples]
        return [ctx.get(("relevance", id(s), self.rel_level), lambda s=s: judge_relevance(s, self.rel_level))
                for s in samples]

    def kernel_scores(self, batch: RelevanceBatch) -> np.ndarray:
        """The metric's raw per-query values on a prepared batch (NaN where undefined); the columnar
        engine builds the batch itself and calls this."""
        return self._kernel(batch, **self._kwargs)

    def evaluate_batch(self, samples: Sequence[Sample], ctx: Any = None) -> list[MetricResult]:
        """Score every sample at once with the vectorised kernel."""
        rels = self._relevance(samples, ctx)
        batch = RelevanceBatch.from_lists([r.ranked if r is not None else _EMPTY for r in rels])
        values = self.kernel_scores(batch)
        return [self._result(s, r, float(v)) for s, r, v in zip(samples, rels, values, strict=True)]

    def evaluate(self, sample: Sample) -> MetricResult:
        """Score one sample."""
        return self.evaluate_batch([sample])[0]

    async def aevaluate(self, sample: Sample) -> MetricResult:
        """Async twin of :meth:`evaluate` (CPU-only work, so it simply runs)."""
        await asyncio.sleep(0)
        return self.evaluate(sample)

    def _result(self, sample: Sample, rel: Relevance | None, value: float) -> MetricResult:
        cannot = None
        if rel is not None and rel.mode == "labels" and not any(rel.matched_by):
            cannot = labels_cannot_match(sample)
        return self.result_of(rel, value, cannot)

    def result_of(self, rel: Relevance | None, value: float, cannot: str | None = None) -> MetricResult:
        """The result of a sample with relevance ``rel`` and kernel value ``value`` (NaN: undefined);
        ``cannot`` is rule 4's reason when its labels can never match. Every engine words its
        results here (the columnar one once per ranking pattern, through ``RunWriter.add_columns``)."""
        if rel is None:
            return MetricResult(name=self.name, score=None, reason=NO_RELEVANCE, version=self.version)
        ranked = rel.ranked
        ranks = [i for i, r in enumerate(ranked.rel, start=1) if r]
        details: dict[str, Any] = {
            "relevance_from": rel.mode,
            "relevant_ranks": ranks,
            "retrieved": len(ranked.rel),
            "matched_by": list(rel.matched_by),
        }
        if rel.mode == "labels":
            details["labelled_relevant"] = int(ranked.num_rel)
            if cannot is not None:
                details[UNMATCHABLE_KEY] = True
                return MetricResult(name=self.name, score=None, reason=cannot, details=details,
                                    version=self.version)
        if math.isnan(value) or (self._needs_labels and rel.mode != "labels"):
            return MetricResult(name=self.name, score=None, reason=self.undefined_reason,
                                details=details, version=self.version)
        if not ranked.rel:
            reason = "no contexts retrieved: scored 0"
        else:
            where = f"relevant at rank(s) {ranks[:10]}" if ranks else "no relevant context"
            where += f" of {len(ranked.rel)} retrieved"
            if rel.mode == "labels":
                where += f"; {int(ranked.num_rel)} labelled relevant"
            else:
                where += " (relevance: contexts containing the reference answer)"
            reason = where
        return MetricResult(name=self.name, score=value, reason=reason, details=details,
                            version=self.version)


def register_retrieval(
    name: str,
    kernel: Callable[..., np.ndarray],
    *,
    reference: Callable[..., float],
    role: Role,
    summary: str,
    formula: str,
    edge_cases: tuple[str, ...],
    needs_labels: bool,
    cutoff: str = "optional",
    aliases: tuple[str, ...] = (),
    params: tuple[Param, ...] = (),
    default_names: tuple[str, ...] = (),
    trec_name: str | None = None,
    trec_params: tuple[tuple[str, Any], ...] = (),
    undefined_reason: str = NO_LABELS,
    version: str = "1",
    reference_level: float | None = None,
    validate: Callable[[dict[str, Any]], None] | None = None,
) -> MetricSpec:
    """Declare and register one retrieval metric (one call per metric module).

    ``kernel`` is the vectorised batch function the evaluator runs, ``reference`` the readable
    per-query function it must agree with; both are kept on the spec. ``validate(params)`` may
    reject parameter values the :class:`Param` declarations cannot express (it raises
    :class:`~ragmeter.errors.InvalidParameterError` when the evaluator is built).
    """
    spec_box: list[MetricSpec] = []

    def factory(mname: MetricName, judge: Any, embedder: Any) -> RetrievalEvaluator:
        if validate is not None:
            validate(mname.kwargs)
        return RetrievalEvaluator(spec_box[0], mname, kernel, needs_labels, undefined_reason)

    undefined = (
        "no relevance labels" if needs_labels else "neither relevance labels nor a reference answer"
    )
    spec = MetricSpec(
        name=name,
        summary=summary,
        formula=formula,
        edge_cases=edge_cases,
        factory=factory,
        category="retrieval",
        version=version,
        aliases=aliases,
        params=(*params, REL_LEVEL),
        cutoff=cutoff,  # type: ignore[arg-type]
        requires=("contexts", "relevant") if needs_labels else ("contexts",),
        requires_any=() if needs_labels else ("relevant", "reference"),
        default_names=default_names,
        reference_level=reference_level,
        undefined=f"undefined (None) when the sample has {undefined}",
        trec_name=trec_name,
        trec_params=trec_params,
        role=role,
        kernel=kernel,
        reference=reference,
    )
    spec_box.append(spec)
    return register(spec)
