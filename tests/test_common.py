"""Properties every registered metric must declare (scikit-learn's test_common idea)."""

from __future__ import annotations

import pytest

from ragmeter import list_metrics
from ragmeter.registry import ROLES, resolve_name

SPECS = list_metrics()


def test_registry_is_not_empty():
    assert len(SPECS) >= 9


@pytest.mark.parametrize("spec", SPECS, ids=lambda s: s.name)
def test_spec_is_fully_classified(spec):
    assert spec.category in {"retrieval", "generation", "embedding", "lexical"}
    assert spec.summary and spec.formula, "a metric documents its formula"
    assert spec.edge_cases, "a metric documents its edge cases"
    assert spec.version
    assert spec.requires or spec.requires_any, "a metric says which fields it reads"
    assert not (spec.category == "retrieval" and (spec.needs_judge or spec.needs_embedder))
    for name in spec.default_names:
        assert str(resolve_name(name)[1]) == name, "default names are canonical"
    module = __import__((spec.kernel or spec.factory).__module__, fromlist=["_"])
    assert module.__doc__, "the metric module has a docstring"


@pytest.mark.parametrize("spec", SPECS, ids=lambda s: s.name)
def test_spec_declares_role_and_direction(spec):
    assert spec.role in ROLES, f"{spec.name} declares no pipeline role (retrieval / context / answer)"
    assert isinstance(spec.higher_is_better, bool)
    if spec.role == "retrieval":
        # the retriever is scored by rule, never by a model, and with a kernel checked against a reference
        assert not (spec.needs_judge or spec.needs_embedder)
        assert spec.kernel is not None and spec.reference is not None
    if spec.role == "context":
        assert "contexts" in spec.requires and "answer" not in spec.requires
    if spec.role == "answer":
        assert "answer" in spec.requires


def test_every_role_is_used():
    assert {s.role for s in SPECS} == set(ROLES)


def test_every_retrieval_module_is_discovered():
    # metrics/retrieval/__init__.py imports every module of the package (no import list to keep in step)
    import pkgutil
    import sys

    import ragmeter.metrics.retrieval as pkg

    modules = [m.name for m in pkgutil.iter_modules(pkg.__path__) if not m.name.startswith("_")]
    assert {"ndcg", "mrr", "average_precision"} <= set(modules)
    for name in modules:
        assert f"{pkg.__name__}.{name}" in sys.modules, name
    registered = {s.kernel.__module__ for s in SPECS if s.category == "retrieval"}
    assert {f"{pkg.__name__}.{n}" for n in ("ndcg", "mrr", "average_precision")} <= registered


@pytest.mark.parametrize("spec", [s for s in SPECS if s.trec_name], ids=lambda s: s.name)
def test_trec_runs_the_registry_kernel_for_its_trec_name(spec):
    # `ragmeter trec` computes a measure that a registered metric declares with that metric's kernel
    from ragmeter.trec.measures import TABLE, registry_metric

    assert spec.trec_name in TABLE, f"{spec.name}: trec_name {spec.trec_name!r} is not a trec_eval measure"
    named = registry_metric(TABLE[spec.trec_name])
    assert named is not None
    got, canonical = resolve_name(named.replace("@k", "@5"))
    defaults = {p.name: p.default for p in spec.params}
    assert got is spec and {**defaults, **canonical.kwargs} == {**defaults, **dict(spec.trec_params)}


def test_a_cut_measure_is_its_base_measure_at_a_cutoff():
    # trec_eval's naming (B_cut is B at cutoff k) read with the specs' trec_name and trec_params: the table
    # itself names no ragmeter metric
    from ragmeter.trec.measures import TABLE, registry_metric

    assert registry_metric(TABLE["map_cut"]) == "map@k"  # map declares trec_name "map"
    assert registry_metric(TABLE["ndcg_cut"]) == "ndcg(gain=linear)@k"  # ndcg declares "ndcg_cut", gain=linear
    assert registry_metric(TABLE["ndcg"]) == "ndcg(gain=linear)"
    assert registry_metric(TABLE["relative_P"]) is None and registry_metric(TABLE["dcg"]) is None


def test_every_trec_measure_has_a_kernel():
    from ragmeter.trec.measures import TABLE, _kernel

    for spec in TABLE.values():
        assert callable(_kernel(spec)), spec.name
