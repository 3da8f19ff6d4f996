"""The evaluator shared by the lexical metrics, and the helper that declares their registry entries.

A lexical metric is a pure function ``score(sample, **params) -> Outcome`` (no model, no I/O,
deterministic). The evaluator turns its :class:`Outcome` into a
:class:`~ragmeter.types.MetricResult`; ``score=None`` in an outcome means undefined for that
sample, with ``reason`` saying why.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from ...names import MetricName
from ...registry import LabelCheck, MetricSpec, Param, Role, register
from ...types import MetricResult, Sample

NO_ANSWER = "undefined: no answer"
NO_REFERENCE = "undefined: no reference answer"


@dataclass(frozen=True)
class Outcome:
    """What a lexical scoring function returns for one sample."""

    score: float | None
    reason: str
    details: dict[str, Any] = field(default_factory=dict)


ScoreFn = Callable[..., Outcome]


def answer_and_reference(sample: Sample) -> tuple[str, str] | Outcome:
    """The answer and reference of ``sample``, or the undefined :class:`Outcome` when one is missing.

    A missing answer (None) or a reference that is missing or only whitespace makes the metric
    undefined; an empty answer string is an answer (scored 0 by the reference-based metrics).
    """
    if sample.answer is None:
        return Outcome(None, NO_ANSWER)
    if sample.reference is None or not sample.reference.strip():
        return Outcome(None, NO_REFERENCE)
    return sample.answer, sample.reference


def answer_reference_scorer(fn: Callable[[str, str], Outcome]) -> ScoreFn:
    """The score function ``score(sample) -> Outcome`` of a metric written as ``fn(answer, reference)``:
    undefined when the sample has no answer or no reference (see :func:`answer_and_reference`),
    else ``fn`` on the two texts. It keeps ``fn``'s docstring."""

    def score(sample: Sample) -> Outcome:
        pair = answer_and_reference(sample)
        return pair if isinstance(pair, Outcome) else fn(*pair)

    score.__doc__ = fn.__doc__
    return score


def overlap_f1(overlap: int, n_answer: int, n_reference: int) -> tuple[float, float, float, int]:
    """(F1, precision, recall, overlap) from the tokens an answer and a reference share.

    :math:`P = o / n_a`, :math:`R = o / n_r`, :math:`F_1 = 2PR / (P + R)`; all 0 when :math:`o = 0`
    (so either side may have no token then).
    """
    if overlap == 0:
        return 0.0, 0.0, 0.0, 0
    p, r = overlap / n_answer, overlap / n_reference
    return 2 * p * r / (p + r), p, r, overlap


class LexicalEvaluator:
    """Evaluator for one lexical metric name, e.g. ``lexical_faithfulness(threshold=0.7)``."""

    def __init__(self, spec: MetricSpec, name: MetricName, fn: ScoreFn) -> None:
        self.spec = spec
        self.name = str(name)
        self.version = spec.version
        defaults = {p.name: p.default for p in spec.params}
        self._params = {**defaults, **name.kwargs}
        self._fn = fn

    def evaluate(self, sample: Sample) -> MetricResult:
        """Score one sample."""
        out = self._fn(sample, **self._params)
        return MetricResult(name=self.name, score=out.score, reason=out.reason, details=out.details,
                            version=self.version)

    def evaluate_batch(self, samples: Sequence[Sample], ctx: Any = None) -> list[MetricResult]:
        """Score every sample (a plain loop: the work is per sample)."""
        return [self.evaluate(s) for s in samples]

    async def aevaluate(self, sample: Sample) -> MetricResult:
        """Async twin of :meth:`evaluate` (CPU-only work, so it simply runs)."""
        await asyncio.sleep(0)
        return self.evaluate(sample)


def register_lexical(
    name: str,
    fn: ScoreFn,
    *,
    role: Role,
    summary: str,
    formula: str,
    edge_cases: tuple[str, ...],
    requires: tuple[str, ...],
    undefined: str,
    params: tuple[Param, ...] = (),
    aliases: tuple[str, ...] = (),
    default_names: tuple[str, ...] = (),
    validate: Callable[[dict[str, Any]], None] | None = None,
    version: str = "1",
    check: LabelCheck | None = None,
    answer_preference: int | None = None,
) -> MetricSpec:
    """Declare and register one lexical metric (one call per metric module).

    ``validate(params)`` may reject parameter combinations the :class:`Param` declarations cannot
    express (it raises :class:`~ragmeter.errors.InvalidParameterError`).
    """
    spec_box: list[MetricSpec] = []

    def factory(mname: MetricName, judge: Any, embedder: Any) -> LexicalEvaluator:
        ev = LexicalEvaluator(spec_box[0], mname, fn)
        if validate is not None:
            validate(ev._params)
        return ev

    spec = MetricSpec(
        name=name,
        summary=summary,
        formula=formula,
        edge_cases=edge_cases,
        factory=factory,
        category="lexical",
        role=role,
        version=version,
        aliases=aliases,
        params=params,
        requires=requires,
        default_names=default_names,
        undefined=undefined,
        check=check,
        answer_preference=answer_preference,
    )
    spec_box.append(spec)
    return register(spec)


def register_answer_reference(
    name: str,
    outcome: Callable[[str, str], Outcome],
    *,
    summary: str,
    formula: str,
    edge_cases: tuple[str, ...],
    aliases: tuple[str, ...] = (),
    default_names: tuple[str, ...] = (),
    check: LabelCheck | None = None,
    answer_preference: int | None = None,
) -> ScoreFn:
    """Declare and register a metric that scores the answer against the reference answer with
    ``outcome(answer, reference)``; returns its score function (:func:`answer_reference_scorer`).

    What every such metric shares is stated here once: role ``answer``, it requires ``answer`` and
    ``reference``, and it is undefined (first edge case) when the sample lacks either.
    """
    score = answer_reference_scorer(outcome)
    register_lexical(
        name, score, role="answer", summary=summary, formula=formula,
        edge_cases=("no answer or no reference -> undefined", *edge_cases),
        requires=("answer", "reference"), aliases=aliases, default_names=default_names,
        undefined="undefined (None) when the sample has no answer or no reference answer",
        check=check, answer_preference=answer_preference,
    )
    return score
