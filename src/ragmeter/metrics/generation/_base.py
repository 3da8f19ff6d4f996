"""The evaluator base of every LLM-judged metric and its declarative registration.

A judged metric module subclasses :class:`JudgedEvaluator` (implementing :meth:`~JudgedEvaluator.ascore`)
and calls :func:`register_judged` once. :data:`STEPS` and :data:`SCALE` are the parameters
several judged metrics share, as is :data:`DECISION` (with :func:`check_decision`).

What a metric met on the way but could not use (a judge reply's non-finite log-probabilities) is
said with :func:`note` and lands in the result's ``details["notes"]`` (:func:`noted`).
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable
from contextvars import ContextVar
from typing import Any

from ...contract import PlannedStep
from ...errors import InvalidParameterError
from ...names import MetricName
from ...registry import LabelCheck, MetricSpec, Param, register
from ...types import MetricResult, Sample

STEPS = Param("steps", str, "shared", "shared: one call reads query+answer for several tasks; separate: one "
              "call per task", choices=("shared", "separate"))
#: faithfulness, hallucination_rate and faithfulness_nli: by default their own claim call
#: (``decompose_answer``); the shared analysis also writes the questions that only
#: answer_relevancy(method=questions,steps=shared) reads (method log, section 25)
CLAIM_STEPS = Param("steps", str, "separate", "separate (default): one call lists the answer's claims; shared: "
                    "the answer analysis that also writes the questions answer_relevancy(method=questions) reads, "
                    "one call for both metrics", choices=("shared", "separate"))
SCALE = Param("scale", str, "graded", "graded: the judge rates 0-10 directly; binary: yes/no decisions per item, "
              "from which ragmeter derives the 0-10 rating", choices=("graded", "binary"))
#: How a yes/no decision is asked (answer_relevancy, correctness and the chunk metrics): one word
#: scored by P(yes) (the default, measured better on a small judge: bench/results/README.md) or a JSON
#: reply with a short reason written before each decision.
DECISION = Param("decision", str, "direct", "with scale=binary: direct (default), a one-word yes/no reply "
                 "(max_tokens 1) scored by P(yes), no reason; reasoned, a JSON reply in which the judge writes a "
                 "short reason before each yes/no decision", choices=("direct", "reasoned"))


#: the notes of the result being scored (None outside :func:`noted`)
_NOTES: ContextVar[list[str] | None] = ContextVar("ragmeter_result_notes", default=None)


def note(text: str) -> None:
    """Say ``text`` in ``details["notes"]`` of the result being scored (once; nothing outside :func:`noted`)."""
    notes = _NOTES.get()
    if notes is not None and text not in notes:
        notes.append(text)


async def collecting_notes(work: Awaitable[Any]) -> tuple[Any, list[str]]:
    """Await ``work`` and return its value with the notes said while it ran (for work whose value
    several callers share, each of whom replays the notes with :func:`note`)."""
    notes: list[str] = []
    token = _NOTES.set(notes)
    try:
        return await work, notes
    finally:
        _NOTES.reset(token)


async def noted(work: Awaitable[MetricResult]) -> MetricResult:
    """Await one sample's result; the notes said while it was scored go into its ``details["notes"]``."""
    r, notes = await collecting_notes(work)
    if not notes or r.error is not None:
        return r
    return r.model_copy(update={"details": {**r.details, "notes": [*r.details.get("notes", ()), *notes]}})


def check_decision(name: str, params: dict[str, Any], applies: bool, where: str = "scale=binary") -> None:
    """Refuse ``decision=reasoned`` where the metric makes no yes/no decision (``applies`` False:
    e.g. a 0-10 rating); the default ``direct`` is simply not used there."""
    if params["decision"] == "reasoned" and not applies:
        raise InvalidParameterError(f"metric {name!r}: decision=reasoned is a form of the yes/no decision, "
                                    f"used with {where} only")


class JudgedEvaluator:
    """Base of every LLM-judged metric: subclasses implement :meth:`ascore`.

    A :class:`~ragmeter.errors.JudgeError` raised by the judge propagates; the runner records it
    as the sample's error for this metric (never a score).
    """

    def __init__(self, spec: MetricSpec, name: MetricName, judge: Any, embedder: Any) -> None:
        self.spec = spec
        self.name = str(name)
        self.version = spec.version
        self.params = {p.name: p.default for p in spec.params} | name.kwargs
        self.cutoff = name.cutoff
        self.judge = judge
        self.embedder = embedder

    async def ascore(self, sample: Sample) -> MetricResult:  # pragma: no cover - abstract
        """Score one sample."""
        raise NotImplementedError

    def planned_calls(self, sample: Sample) -> list[PlannedStep]:
        """The judge calls scoring ``sample`` will make (:class:`~ragmeter.contract.PlansCalls`):
        one, an estimate, unless the metric plans its own steps."""
        return [PlannedStep((self.name, sample.id, sample.query, sample.answer), 1, exact=False)]

    async def aevaluate(self, sample: Sample) -> MetricResult:
        """Score ``sample`` (judge calls are awaited, never blocking the loop)."""
        return await noted(self.ascore(sample))

    def evaluate(self, sample: Sample) -> MetricResult:
        """Synchronous :meth:`aevaluate` (not for use inside a running event loop)."""
        return asyncio.run(self.aevaluate(sample))

    def result(self, score: float | None, reason: str, **details: Any) -> MetricResult:
        """A result of this metric."""
        return MetricResult(name=self.name, score=score, reason=reason, details=details, version=self.version)


#: The bundled labelled set of ``ragmeter judge-check`` (``ragmeter/data/validation/``) most judged
#: metrics are checked on (:class:`~ragmeter.registry.LabelCheck` ``data``).
JUDGE_VALIDATION = "judge_validation.jsonl"


def register_judged(
    name: str,
    cls: type[JudgedEvaluator],
    *,
    role: str,
    summary: str,
    formula: str,
    edge_cases: tuple[str, ...],
    requires: tuple[str, ...],
    calls: str,
    params: tuple[Param, ...] = (),
    cutoff: str = "none",
    needs_embedder: bool = False,
    higher_is_better: bool = True,
    undefined: str = "never undefined",
    version: str = "1",
    aliases: tuple[str, ...] = (),
    extra: dict[str, Any] | None = None,
    default_names: tuple[str, ...] | None = None,
    check: LabelCheck | None = None,
    answer_preference: int | None = None,
    reference_level: float | None = None,
) -> MetricSpec:
    """Declare and register one judged metric (one call per metric module). ``extra`` adds entries
    to the spec's ``extra`` (which always holds ``calls``); ``default_names`` defaults to ``(name,)``;
    ``check`` and ``answer_preference`` as :class:`~ragmeter.registry.MetricSpec` has them."""
    box: list[MetricSpec] = []
    spec = MetricSpec(
        name=name, summary=summary, formula=formula, edge_cases=(*edge_cases, f"judge calls per sample: {calls}"),
        factory=lambda n, judge, embedder: cls(box[0], n, judge, embedder),
        category="generation", version=version, aliases=aliases, params=params, cutoff=cutoff,  # type: ignore[arg-type]
        needs_judge=True, needs_embedder=needs_embedder, higher_is_better=higher_is_better, requires=requires,
        default_names=(name,) if default_names is None else default_names, undefined=undefined,
        extra={"calls": calls, **(extra or {})}, role=role,  # type: ignore[arg-type]
        check=check, answer_preference=answer_preference, reference_level=reference_level,
    )
    box.append(spec)
    return register(spec)
