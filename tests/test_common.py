"""Properties every registered metric must declare (scikit-learn's test_common idea)."""

from __future__ import annotations

import pytest

from ragmeter import list_metrics
from ragmeter.registry import resolve_name

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
    module = __import__(spec.factory.__module__, fromlist=["_"])
    assert module.__doc__, "the metric module has a docstring"
