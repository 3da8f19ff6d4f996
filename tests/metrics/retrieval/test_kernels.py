"""The vectorised batch kernels agree with the readable per-query functions on random rankings."""

from __future__ import annotations

import math

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from ragmeter.metrics.retrieval._batch import RankedList, RelevanceBatch
from ragmeter.metrics.retrieval.average_precision import average_precision, average_precision_single
from ragmeter.metrics.retrieval.context_precision import context_precision, context_precision_single
from ragmeter.metrics.retrieval.hit_rate import hit_rate, hit_rate_single
from ragmeter.metrics.retrieval.mrr import mrr, mrr_single
from ragmeter.metrics.retrieval.ndcg import ndcg, ndcg_single
from ragmeter.metrics.retrieval.precision import precision, precision_single
from ragmeter.metrics.retrieval.r_precision import r_precision, r_precision_single
from ragmeter.metrics.retrieval.recall import recall, recall_single

grade = st.sampled_from([-1.0, 0.0, 0.0, 0.5, 1.0, 2.0, 3.0])


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
    pairs = [
        (hit_rate(batch, k), lambda r: hit_rate_single(r, k)),
        (recall(batch, k), lambda r: recall_single(r, k)),
        (precision(batch, k), lambda r: precision_single(r, k)),
        (mrr(batch, k), lambda r: mrr_single(r, k)),
        (average_precision(batch, k), lambda r: average_precision_single(r, k)),
        (context_precision(batch, k), lambda r: context_precision_single(r, k)),
        (ndcg(batch, k, "exp"), lambda r: ndcg_single(r, k, "exp")),
        (ndcg(batch, k, "linear"), lambda r: ndcg_single(r, k, "linear")),
        (r_precision(batch), r_precision_single),
    ]
    for values, single in pairs:
        assert values.shape == (len(lists),)
        for v, r in zip(values, lists, strict=True):
            assert same(float(v), single(r)), (v, single(r), r, k)


def test_scores_are_bounded():
    rng = np.random.default_rng(7)
    lists = []
    for _ in range(200):
        retrieved = list(rng.integers(0, 4, size=rng.integers(0, 30)))
        # every retrieved item is labelled, plus some labelled items never retrieved
        lists.append(RankedList.from_grades(retrieved, retrieved + list(rng.integers(0, 4, size=5))))
    batch = RelevanceBatch.from_lists(lists)
    for fn in (hit_rate, recall, precision, mrr, average_precision, context_precision, ndcg):
        v = fn(batch, 10)
        assert np.all((v >= 0) & (v <= 1 + 1e-12)), fn.__name__
