"""The vectorised batch kernels agree with the readable per-query functions on random rankings."""

from __future__ import annotations

import math

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from ragmeter.metrics.retrieval._batch import RankedList, RelevanceBatch
from ragmeter.registry import list_metrics

#: every registered spec with a kernel: its reference/kernel agreement is tested below
KERNEL_SPECS = [s for s in list_metrics() if s.kernel is not None]


def _variants(spec):
    """Each combination of the spec's parameters with declared choices (rel_level is the evaluator's)."""
    combos = [{}]
    for p in spec.params:
        if p.choices is not None:
            combos = [{**c, p.name: v} for c in combos for v in p.choices]
    return combos


#: NaN: retrieved but unlabelled (unjudged); negative: labelled "in the pool, unjudged"
grade = st.sampled_from([float("nan"), -1.0, 0.0, 0.0, 0.5, 1.0, 2.0, 3.0])


@st.composite
def ranked_lists(draw):
    retrieved = draw(st.lists(grade, max_size=12))
    labelled_extra = draw(st.lists(grade, max_size=4))
    labels = None if draw(st.booleans()) and draw(st.booleans()) else [*retrieved, *labelled_extra]
    return RankedList.from_grades(retrieved, labels)


def same(a: float, b: float) -> bool:
    return (math.isnan(a) and math.isnan(b)) or math.isclose(a, b, rel_tol=1e-12, abs_tol=1e-12)


@settings(max_examples=200, deadline=None)
@given(st.lists(ranked_lists(), min_size=1, max_size=8), st.sampled_from([None, 1, 2, 3, 5, 20]))
def test_batch_equals_single(lists, k):
    batch = RelevanceBatch.from_lists(lists)
    for spec in KERNEL_SPECS:
        assert spec.reference is not None, f"{spec.name} has a kernel but no reference implementation"
        for params in _variants(spec):
            kw = params if spec.cutoff == "none" else {**params, "k": k}
            values = spec.kernel(batch, **kw)
            assert values.shape == (len(lists),)
            for v, r in zip(values, lists, strict=True):
                ref = spec.reference(r, **kw)
                assert same(float(v), ref), (spec.name, params, v, ref, r, k)


def test_every_retrieval_metric_has_a_checked_kernel():
    names = {s.name for s in KERNEL_SPECS}
    assert names == {s.name for s in list_metrics() if s.role == "retrieval"}
    assert {"ndcg", "mrr", "map", "recall", "precision", "hit_rate", "r_precision"} <= names
    ndcg = next(s for s in KERNEL_SPECS if s.name == "ndcg")
    assert {p["gain"] for p in _variants(ndcg)} == {"exp", "linear"}


def test_scores_are_bounded():
    rng = np.random.default_rng(7)
    lists = []
    for _ in range(200):
        retrieved = list(rng.integers(0, 4, size=rng.integers(0, 30)))
        # every retrieved item is labelled, plus some labelled items never retrieved
        lists.append(RankedList.from_grades(retrieved, retrieved + list(rng.integers(0, 4, size=5))))
    batch = RelevanceBatch.from_lists(lists)
    for spec in KERNEL_SPECS:
        v = spec.kernel(batch) if spec.cutoff == "none" else spec.kernel(batch, k=10)
        assert np.all((v >= 0) & (v <= 1 + 1e-12)), spec.name
