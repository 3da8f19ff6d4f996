"""The metric registry: one :class:`MetricSpec` per metric, looked up by (parameterised) name.

A metric module declares its spec and calls :func:`register` at import time. Built-in metrics are
found, not listed: the first registry query imports :mod:`ragmeter.metrics`, whose category
packages each import every module they hold with :func:`import_package_modules` (so adding a
metric is adding its module). Third-party metrics come through the ``ragmeter.metrics`` entry
point group (each entry point names a module to import). :func:`get_evaluator` parses a name
such as ``ndcg(gain=linear)@10``, validates it against the spec, checks the backends the metric
needs, and returns a ready :class:`~ragmeter.evaluator.Evaluator`.
"""

from __future__ import annotations

import difflib
import importlib
import pkgutil
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from importlib import metadata as importlib_metadata
from typing import TYPE_CHECKING, Any, Literal

from .errors import InvalidParameterError, MissingBackendError, UnknownMetricError
from .names import MetricName, parse_name

if TYPE_CHECKING:
    from .evaluator import Evaluator

Category = Literal["retrieval", "generation", "embedding", "lexical"]
Role = Literal["retrieval", "context", "answer"]
#: Every role, in pipeline order (see :class:`MetricSpec`).
ROLES: tuple[Role, ...] = ("retrieval", "context", "answer")


@dataclass(frozen=True)
class Param:
    """A declared metric parameter."""

    name: str
    type: type
    default: Any
    description: str
    choices: tuple[Any, ...] | None = None
    minimum: float | None = None

    def coerce(self, value: Any, metric: str) -> Any:
        """Validate and convert ``value``; raises InvalidParameterError naming the metric."""
        try:
            if self.type is bool and not isinstance(value, bool):
                raise TypeError
            out = self.type(value)
            if self.type in (int, float) and isinstance(value, str):
                raise TypeError
        except (TypeError, ValueError):
            raise InvalidParameterError(
                f"metric {metric!r}: parameter {self.name!r} expected {self.type.__name__}, got {value!r}"
            ) from None
        if self.choices is not None and out not in self.choices:
            raise InvalidParameterError(
                f"metric {metric!r}: parameter {self.name!r} expected one of "
                f"{', '.join(map(str, self.choices))}, got {value!r}"
            )
        if self.minimum is not None and out < self.minimum:
            raise InvalidParameterError(
                f"metric {metric!r}: parameter {self.name!r} expected >= {self.minimum}, got {value!r}"
            )
        return out


@dataclass(frozen=True)
class LabelCheck:
    """How ``ragmeter judge-check`` (:mod:`ragmeter.judges.check`) measures a metric against hand labels.

    A metric declares it on its spec (``MetricSpec.check``); judge-check reads only this, so it
    names no metric itself.

    - ``label``: the field of each labelled row's ``labels`` object the score is measured against
      (the built-in label rule; label 1 / true is the good side), None when the metric has no
      built-in rule (a rubric: the user gives one with ``--label``);
    - ``at_least``: for a graded field, the value from which a row counts as good
      (``correct >= 4``); Spearman's rho is then taken against the value;
    - ``unit``: ``"row"``, or ``"chunk"`` when ``labels.<label>`` is a list with one label per
      retrieved chunk (the scores per chunk come from ``chunk_ratings``);
    - ``data``: the bundled labelled set the metric is checked on (a file in
      ``ragmeter/data/validation/``), None when it is checked only on the user's data;
    - ``default``: checked when no metric is named;
    - ``needs``: other label fields every labelled row must hold;
    - ``hard(details)``: the score the judge's hard verdicts or ratings give (on the score's
      scale), None when the details keep none (the score already is the hard one);
    - ``chunk_ratings(details)``: ``(ratings, hard ratings)`` per chunk on 0-10 (``unit="chunk"``);
    - ``finals(details, labels)``: ``(judged, judged hard, human)`` graded values compared by rho
      and mean absolute error beside the built-in rule (passage_recall's 1-5 finals);
    - ``positions(details, labels)``: per item of the answer or the context, in order,
      ``(judged yes as 1/0, human yes as 1/0 or None)``: the position profile, which shows a judge
      that answers by position rather than content.
    """

    label: str | None = None
    at_least: float | None = None
    unit: Literal["row", "chunk"] = "row"
    data: str | None = None
    default: bool = False
    needs: tuple[str, ...] = ()
    hard: Callable[[Mapping[str, Any]], float | None] | None = None
    chunk_ratings: Callable[[Mapping[str, Any]], tuple[list[float], list[float]]] | None = None
    finals: Callable[[Mapping[str, Any], Mapping[str, Any]], tuple[float, float, float]] | None = None
    positions: Callable[[Mapping[str, Any], Mapping[str, Any]], list[tuple[float, float | None]]] | None = None


@dataclass(frozen=True)
class MetricSpec:
    """Everything the registry, the docs and the runner need to know about one metric.

    ``factory(name, judge, embedder)`` builds the evaluator for a validated name.
    ``requires`` lists the sample fields the metric reads; ``requires_any`` lists fields of which
    at least one must be present (e.g. labels or a reference answer). ``default_names`` are the
    names used when the user picks no metric and the data allows this one.

    ``role`` is the pipeline stage the metric measures, decided by what it scores:

    - ``"retrieval"``: the retriever's ranked list, scored against relevance labels or the
      reference answer by a deterministic rule (recall, ndcg, mrr, map, precision, hit_rate,
      r_precision, context_precision, context_recall). These carry ``kernel`` (the vectorised
      ``kernel(batch, k=..., **params)``) and ``reference`` (the readable per-query function
      ``reference(ranked, k=..., **params)``, ``k`` only when the metric takes a cutoff); the two
      must agree, which a test checks for every spec that has both.
    - ``"context"``: the retrieved contexts judged for the query by a model, not by labels
      (context_relevancy, context_precision_llm): how usable the context handed to the
      generator is.
    - ``"answer"``: the generated ``answer`` field (faithfulness, hallucination_rate,
      answer_relevancy, correctness, answer_grade, passage_recall — which grades the returned
      passage in ``answer`` —, semantic_similarity and the lexical metrics).

    ``higher_is_better`` is the direction; ``trec_name`` the trec_eval measure it equals, if any, at the
    parameters ``trec_params`` (ndcg equals ``ndcg_cut`` with ``gain=linear``: trec_eval's gain is the
    grade). trec_eval's ``B_cut`` measures are ``B`` at a cutoff, so a metric whose ``trec_name`` is
    ``map`` also computes ``map_cut`` (:func:`ragmeter.trec.measures.registry_metric`).
    ``role`` is None only for a third-party metric that does not declare one;
    ``tests/test_common.py`` checks that no built-in metric is unclassified.

    ``check`` says how judge-check measures the metric against hand labels (:class:`LabelCheck`).
    ``answer_preference`` ranks the answer metrics when a run has several and one is read on its own
    (the position analysis of ``ragmeter diagnose``): the lowest wins; None comes after every rank.
    """

    name: str
    summary: str
    formula: str
    edge_cases: tuple[str, ...]
    factory: Callable[[MetricName, Any, Any], Evaluator]
    category: Category
    version: str = "1"
    aliases: tuple[str, ...] = ()
    params: tuple[Param, ...] = ()
    cutoff: Literal["none", "optional", "required"] = "none"
    needs_judge: bool = False
    needs_embedder: bool = False
    higher_is_better: bool = True
    #: The level a mean on the failing side of is poor whatever the data (below it; above it for a
    #: lower-is-better metric), set only where an absolute level means something (recall, faithfulness);
    #: None, the default, for a metric whose attainable score depends on the data (precision@k cannot
    #: exceed min(R, k) / k) or on the reference's length (lexical overlap): ``stats.diagnose`` then
    #: calls it low only against a gate threshold or a baseline run. docs/statistics.md gives each
    #: level's evidence.
    reference_level: float | None = None
    requires: tuple[str, ...] = ()
    requires_any: tuple[str, ...] = ()
    default_names: tuple[str, ...] = ()
    undefined: str = "never undefined"
    trec_name: str | None = None
    trec_params: tuple[tuple[str, Any], ...] = ()
    role: Role | None = None
    kernel: Callable[..., Any] | None = None
    reference: Callable[..., float] | None = None
    extra: dict[str, Any] = field(default_factory=dict)
    check: LabelCheck | None = None
    answer_preference: int | None = None

    def applicable(self, fields: Iterable[str]) -> bool:
        """True when data with these non-empty fields lets this metric produce scores."""
        present = set(fields)
        if not all(f in present for f in self.requires):
            return False
        return not self.requires_any or any(f in present for f in self.requires_any)


_REGISTRY: dict[str, MetricSpec] = {}
_ALIASES: dict[str, str] = {}
_loaded = False


def register(spec: MetricSpec) -> MetricSpec:
    """Add ``spec`` to the registry. Raises when the name or an alias is already taken."""
    for key in (spec.name, *spec.aliases):
        key = key.lower()
        owner = _ALIASES.get(key)
        if owner is not None and owner != spec.name:
            raise InvalidParameterError(f"metric name {key!r} is already registered by {owner!r}")
    _REGISTRY[spec.name] = spec
    for key in (spec.name, *spec.aliases):
        _ALIASES[key.lower()] = spec.name
    return spec


def import_package_modules(package: str, path: Iterable[str]) -> list[str]:
    """Import every public module and subpackage of ``package`` found on ``path`` (its ``__path__``).

    A metric package calls ``import_package_modules(__name__, __path__)`` in its ``__init__``, which is
    how its metrics get registered: there is no import list to keep in step with the modules. Names
    starting with ``_`` are private helpers and are skipped (the metrics that use them import them);
    a public module that registers nothing (``base``, ``relevance``, ``passage_recall_math``,
    ``rubric``) is imported and simply adds no spec. Modules are imported in name order; returns
    their full names.
    """
    found = sorted(info.name for info in pkgutil.iter_modules(list(path)) if not info.name.startswith("_"))
    for name in found:
        importlib.import_module(f"{package}.{name}")
    return [f"{package}.{name}" for name in found]


def _ensure_loaded() -> None:
    global _loaded
    if _loaded:
        return
    _loaded = True
    importlib.import_module("ragmeter.metrics")
    for ep in importlib_metadata.entry_points(group="ragmeter.metrics"):
        ep.load()


def list_metrics() -> list[MetricSpec]:
    """All registered metric specs, sorted by category then name."""
    _ensure_loaded()
    order = {"retrieval": 0, "generation": 1, "embedding": 2, "lexical": 3}
    return sorted(_REGISTRY.values(), key=lambda s: (order.get(s.category, 9), s.name))


def get_spec(name: str) -> MetricSpec:
    """The spec registered under ``name`` (an alias or the canonical base name, any case)."""
    _ensure_loaded()
    key = name.lower()
    if key not in _ALIASES:
        raise UnknownMetricError(name, difflib.get_close_matches(key, list(_ALIASES), n=4, cutoff=0.5))
    return _REGISTRY[_ALIASES[key]]


def lookup_spec(name: str) -> MetricSpec | None:
    """The spec for a base ``name`` — a registered name or alias, else a trec_eval measure name a
    spec declares as its ``trec_name`` — or None when ragmeter does not know the name."""
    _ensure_loaded()
    key = name.lower()
    if key in _ALIASES:
        return _REGISTRY[_ALIASES[key]]
    for spec in _REGISTRY.values():
        if spec.trec_name is not None and spec.trec_name.lower() == key:
            return spec
    return None


def resolve_name(name: str | MetricName) -> tuple[MetricSpec, MetricName]:
    """Parse and validate ``name``; return its spec and canonical :class:`MetricName`.

    The canonical name uses the spec's own base name, drops parameters equal to their default,
    and keeps the cutoff. ``str()`` of it round-trips through :func:`resolve_name`.
    """
    parsed = parse_name(name) if isinstance(name, str) else name
    spec = get_spec(parsed.base)
    if parsed.cutoff is not None and spec.cutoff == "none":
        raise InvalidParameterError(f"metric {spec.name!r} takes no cutoff, got {str(parsed)!r}")
    if parsed.cutoff is None and spec.cutoff == "required":
        raise InvalidParameterError(f"metric {spec.name!r} needs a cutoff, e.g. '{spec.name}@10'")
    declared = {p.name: p for p in spec.params}
    params: dict[str, Any] = {}
    for key, value in parsed.params:
        if key not in declared:
            allowed = ", ".join(declared) or "none"
            raise InvalidParameterError(
                f"metric {spec.name!r} has no parameter {key!r} (parameters: {allowed})"
            )
        value = declared[key].coerce(value, spec.name)
        if value != declared[key].default:
            params[key] = value
    return spec, MetricName(spec.name, tuple(sorted(params.items())), parsed.cutoff)


def canonical_name(name: str) -> str:
    """The canonical form of a metric name, e.g. ``'nDCG(gain=exp)@10'`` -> ``'ndcg@10'``."""
    return str(resolve_name(name)[1])


def get_evaluator(name: str | MetricName, judge: Any = None, embedder: Any = None) -> Evaluator:
    """Build the evaluator for metric ``name``.

    Raises
    ------
    UnknownMetricError
        The name is not registered; the message lists close matches.
    InvalidParameterError
        A parameter or cutoff does not fit the metric.
    MissingBackendError
        The metric needs a judge or an embedder and none was given (raised here, before any run).
    """
    spec, canonical = resolve_name(name)
    if spec.needs_judge and judge is None:
        raise MissingBackendError(
            f"metric {str(canonical)!r} needs an LLM judge: pass judge=... in Python or "
            "--judge SPEC on the command line (e.g. --judge openai:gpt-4o-mini)"
        )
    if spec.needs_embedder and embedder is None:
        raise MissingBackendError(
            f"metric {str(canonical)!r} needs an embedder: pass embedder=... in Python or "
            "--embedder SPEC on the command line (e.g. --embedder bert:all-MiniLM-L6-v2)"
        )
    return spec.factory(canonical, judge, embedder)


def default_metric_names(fields: Iterable[str], *, judge: Any = None, embedder: Any = None) -> list[str]:
    """The metric names evaluated when none is chosen: every default the data and backends allow."""
    present = set(fields)
    out: list[str] = []
    for spec in list_metrics():
        if spec.needs_judge and judge is None:
            continue
        if spec.needs_embedder and embedder is None:
            continue
        if spec.applicable(present):
            out.extend(spec.default_names)
    return out


def skipped_metrics(fields: Iterable[str], *, judge: Any = None, embedder: Any = None) -> list[MetricSpec]:
    """Metrics the data would allow but that are skipped for want of a judge or an embedder."""
    present = set(fields)
    return [
        s
        for s in list_metrics()
        if s.applicable(present)
        and ((s.needs_judge and judge is None) or (s.needs_embedder and embedder is None))
    ]
