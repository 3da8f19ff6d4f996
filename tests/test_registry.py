"""Registry contract: construction-time backend checks, default selection, third-party slots."""

from __future__ import annotations

import pytest

from ragmeter import MetricResult, MissingBackendError, get_evaluator, list_metrics, registry
from ragmeter.registry import MetricSpec, default_metric_names, register


class _Echo:
    def __init__(self, spec, name, judge, embedder):
        self.spec, self.name, self.version = spec, str(name), spec.version
        self.judge = judge

    def evaluate(self, sample):
        return MetricResult(name=self.name, score=1.0, version=self.version)

    async def aevaluate(self, sample):
        return self.evaluate(sample)


@pytest.fixture
def judged_metric(monkeypatch):
    """A judged metric registered for one test only (the registry is restored afterwards)."""
    list_metrics()  # load the built-ins first
    monkeypatch.setattr(registry, "_REGISTRY", dict(registry._REGISTRY))
    monkeypatch.setattr(registry, "_ALIASES", dict(registry._ALIASES))
    box = []
    spec = MetricSpec(
        name="toy_judged", summary="toy", formula="1", edge_cases=(), category="generation",
        factory=lambda n, j, e: _Echo(box[0], n, j, e), needs_judge=True,
        requires=("answer",), default_names=("toy_judged",),
    )
    box.append(spec)
    register(spec)
    return spec


def test_missing_judge_fails_at_construction(judged_metric):
    with pytest.raises(MissingBackendError, match=r"needs an LLM judge.*--judge"):
        get_evaluator("toy_judged")
    ev = get_evaluator("toy_judged", judge=object())
    assert ev.name == "toy_judged"


def test_defaults_skip_metrics_without_backend(judged_metric):
    fields = {"answer", "contexts", "relevant"}
    assert "toy_judged" not in default_metric_names(fields)
    assert "toy_judged" in default_metric_names(fields, judge=object())


def test_duplicate_registration_is_refused(judged_metric):
    with pytest.raises(ValueError, match="already registered"):
        register(MetricSpec(name="other", aliases=("toy_judged",), summary="", formula="", edge_cases=(),
                            category="generation", factory=lambda n, j, e: None))


def test_default_selection_follows_fields():
    assert default_metric_names(set()) == []
    ref_only = default_metric_names({"contexts", "reference"})
    assert "mrr" in ref_only and "context_recall" not in ref_only and "map" not in ref_only
    labelled = default_metric_names({"contexts", "relevant"})
    assert {"context_recall", "map", "recall@5", "ndcg@5"} <= set(labelled)


def test_every_retrieval_metric_builds_without_backends():
    for spec in list_metrics():
        if spec.category == "retrieval":
            name = spec.name + ("@5" if spec.cutoff == "required" else "")
            ev = get_evaluator(name)
            assert ev.version == spec.version
