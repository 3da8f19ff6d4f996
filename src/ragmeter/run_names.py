"""How a saved run's metric names map to the registry: ``name(params)@k`` parsed, foreign names
(RAGAS, TruLens, trec_eval) resolved to ragmeter's metrics, and a metric's direction. Shared by
:mod:`ragmeter.stats` (diagnose, position, compare), judge-check, the gate and the report."""

from __future__ import annotations

import re

from .registry import MetricSpec, lookup_spec

#: Names that peers give to metrics ragmeter has under its own name (a saved run may come from
#: RAGAS, TruLens or trec_eval): foreign base name -> ragmeter metric. Only foreign names belong
#: here; everything ragmeter itself registers (names, aliases, ``trec_name``, role, direction) is
#: read from the registry (:func:`ragmeter.registry.lookup_spec`).
FOREIGN_ALIASES: dict[str, str] = {
    "answer_correctness": "correctness",  # RAGAS
    "factual_correctness": "correctness",  # RAGAS
    "answer_relevance": "answer_relevancy",  # TruLens
    "response_relevancy": "answer_relevancy",  # RAGAS >= 0.2
    "average_precision": "map",
    "ap": "map",
    "hit": "hit_rate",
    "hits": "hit_rate",
}
def metric_spec(base: str) -> MetricSpec | None:
    """The registry spec a run's metric base name stands for (ragmeter's names and aliases, trec_eval
    names, then :data:`FOREIGN_ALIASES`), or None when the name is unknown."""
    spec = lookup_spec(base)
    if spec is None and base.lower() in FOREIGN_ALIASES:
        spec = lookup_spec(FOREIGN_ALIASES[base.lower()])
    return spec


_NAME = re.compile(r"^(?P<base>[A-Za-z_][A-Za-z0-9_]*)(?P<params>\(.*\))?(?:@(?P<k>\d+))?$")


def parse_name(name: str) -> tuple[str, bool, int | None] | None:
    """``(lower-cased base, has parameters, cutoff k or None)`` of ``name(params)@k``; None when
    ``name`` is not a metric name."""
    m = _NAME.match(name)
    if not m:
        return None
    return m.group("base").lower(), m.group("params") is not None, int(m.group("k")) if m.group("k") else None


_BASE = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


def spec_of(name: str) -> MetricSpec | None:
    """The registry spec of a run's metric name (``ndcg@5``, ``faithfulness(mode=direct)``, a
    peer's name such as ``answer_correctness``): :func:`metric_spec` of its leading identifier;
    None when ragmeter does not know it."""
    m = _BASE.match(name)
    return None if m is None else metric_spec(m.group(0).lower())


def direction(name: str) -> bool | None:
    """Whether a higher score is better for metric ``name`` (:func:`spec_of`'s
    ``higher_is_better``); None when ragmeter does not know the metric."""
    spec = spec_of(name)
    return None if spec is None else bool(spec.higher_is_better)
