"""Every trec_eval measure cross-checked on random data (hypothesis) against an independent implementation.

* pytrec_eval (trec_eval's C code behind a Python API) for every measure it has: all of ``all_trec``
  except rbp, rbp_resid and unj, plus parameterised variants (cutoffs, ``level=gain`` pairs, utility
  coefficients, set_F's beta, Rprec_mult's multiples).
* rbp, rbp_resid, unj, relstring, dcg and ideal_dcg, which pytrec_eval lacks: the readable per-query loops
  below, written from trec_eval 10.0's definitions (``m_rbp.c``...), one document at a time.

Random qrels and runs have score ties (broken by docid), graded labels, negative labels (in the pool but
unjudged), documents outside the qrels, qrels queries absent from the run and run queries absent from the
qrels; ``-l`` is 1 or 2 and ``-J`` on or off. pytrec_eval evaluates the queries present on both sides, which
is ``missing="skip"``. pytrec_eval is built on trec_eval 9, which turns a recall fraction ``f`` into
``(long)(f·R + 0.9)`` relevant documents where trec_eval 10.0 uses ``lround(f·R)``: iprec_at_recall and
11pt_avg are compared through the kernel's ``v9_rounding`` switch (the 10.0 rounding is what the
conformance files check). Every qrels query keeps at least one non-negative grade: pytrec_eval crashes
(segfault) on a query whose every grade is negative.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ragmeter.trec import Qrels, Run, build_batch, trec_evaluate
from ragmeter.trec import kernels as K

pytrec_eval = pytest.importorskip("pytrec_eval")
pytrec_ext = pytest.importorskip("pytrec_eval_ext")

SKIP = {"runid", "num_q", "relstring", "iprec_at_recall", "11pt_avg"}
# (pytrec_eval measure, ragmeter measure, pytrec_eval's key -> ragmeter's key)
VARIANTS = [
    ("P.3,7", "P.3,7", {}),
    ("recall.2,9", "recall.2,9", {}),
    ("relative_P.3,4", "relative_P.3,4", {}),
    ("success.2", "success.2", {}),
    ("map_cut.3", "map_cut.3", {}),
    ("ndcg_cut.4", "ndcg_cut.4", {}),
    ("Rprec_mult.0.35,1.5", "Rprec_mult.0.35,1.5", {}),
    ("utility.2,-1,0.5,0", "utility.2,-1,0.5,0", {"utility": "utility_2,-1,0.5,0"}),
    ("set_F.0.5", "set_F.0.5", {"set_F": "set_F_0.5"}),
    ("ndcg.1=3,2=9", "ndcg.1=3,2=9", {"ndcg": "ndcg_1=3,2=9"}),
    ("ndcg.0=1,3=1.5", "ndcg.0=1,3=1.5", {"ndcg": "ndcg_0=1,3=1.5"}),
    ("ndcg.1=-2,2=5", "ndcg.1=-2,2=5", {"ndcg": "ndcg_1=-2,2=5"}),
    ("G.1=2,3=0.5", "G.1=2,3=0.5", {"G": "G_1=2,3=0.5"}),
    ("ndcg_rel.2=5", "ndcg_rel.2=5", {"ndcg_rel": "ndcg_rel_2=5"}),
    ("Rndcg.1=4,2=1", "Rndcg.1=4,2=1", {"Rndcg": "Rndcg_1=4,2=1"}),
]


@st.composite
def trec_data(draw):
    n_queries = draw(st.integers(1, 6))
    qrels: dict[str, dict[str, int]] = {}
    run: dict[str, dict[str, float]] = {}
    for i in range(n_queries):
        pool = [f"d{j}" for j in range(draw(st.integers(1, 14)))]
        if draw(st.booleans()) or i == 0:
            docs = draw(st.lists(st.sampled_from([*pool, "u1", "u2"]), min_size=1, max_size=12, unique=True))
            grades = draw(st.lists(st.sampled_from([-1, 0, 0, 1, 2, 3, 4]), min_size=len(docs), max_size=len(docs)))
            if max(grades) < 0:
                grades[0] = 0
            qrels[f"q{i}"] = dict(zip(docs, grades, strict=True))
        if draw(st.booleans()) or i == 0:
            docs = draw(st.lists(st.sampled_from(pool), min_size=1, max_size=len(pool), unique=True))
            coarse = draw(st.booleans())
            values = st.integers(0, 2).map(float) if coarse else st.floats(-3, 3, allow_nan=False, width=32)
            scores = draw(st.lists(values, min_size=len(docs), max_size=len(docs)))
            run[f"q{i}"] = dict(zip(docs, scores, strict=True))
    return qrels, run, draw(st.sampled_from([1, 2])), draw(st.booleans())


def _close(a: float, b: float) -> bool:
    return (a != a and b != b) or abs(a - b) <= 1e-9


def _assert_same(expected: dict, got: dict, rename: dict[str, str], context: str) -> int:
    checked = 0
    for q, values in expected.items():
        for name, v in values.items():
            if name in SKIP or any(name.startswith(s + "_") for s in SKIP):
                continue
            ours = got[rename.get(name, name)][q]
            assert _close(float(ours), v), (context, q, name, v, ours)
            checked += 1
    return checked


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(trec_data())
def test_every_pytrec_eval_measure_agrees(data):
    qrels, run, level, judged_only = data
    common = set(qrels) & set(run)
    if not common:
        return
    kw = {"per_query": True, "missing": "skip", "rel_level": level, "judged_only": judged_only}
    expected = pytrec_eval.RelevanceEvaluator(qrels, {"all_trec"}, relevance_level=level,
                                              judged_docs_only_flag=judged_only).evaluate(run)
    assert set(expected) == common
    got = trec_evaluate(qrels, run, ["all_trec"], **kw)
    assert {q for col in got.values() for q in col} == common
    assert _assert_same(expected, got, {}, "all_trec") > 0
    for theirs, ours, rename in VARIANTS:
        ev = pytrec_ext.RelevanceEvaluator(query_relevance=qrels, measures={theirs}, relevance_level=level,
                                           judged_docs_only_flag=judged_only)
        _assert_same(ev.evaluate(run), trec_evaluate(qrels, run, [ours], **kw), rename, theirs)


@settings(max_examples=40, deadline=None)
@given(trec_data(), st.sampled_from([(0.0, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 1.0), (0.25, 0.5, 0.75)]))
def test_interpolated_precision_agrees_under_trec_eval_9_rounding(data, fractions):
    qrels, run, level, judged_only = data
    common = sorted(set(qrels) & set(run))
    if not common:
        return
    spec = ",".join(str(f) for f in fractions)
    ev = pytrec_ext.RelevanceEvaluator(query_relevance=qrels, measures={f"iprec_at_recall.{spec}",
                                                                        f"11pt_avg.{spec}"},
                                       relevance_level=level, judged_docs_only_flag=judged_only)
    expected = ev.evaluate(run)
    tb = build_batch(Qrels.from_dict(qrels), Run.from_dict(run), rel_level=level, missing="skip",
                     judged_only=judged_only)
    row = {q: i for i, q in enumerate(tb.qids.tolist())}
    pts = K.recall_points(tb, fractions, v9_rounding=True)
    avg = K.eleven_pt_avg(tb, fractions, v9_rounding=True)
    for q in common:
        for j, f in enumerate(fractions):
            assert _close(pts[row[q], j], expected[q][f"iprec_at_recall_{f:3.2f}"]), (q, f)
        assert _close(avg[row[q]], expected[q]["11pt_avg"]), q


# ---- readable references for the measures pytrec_eval does not have ----------------------------------------------
def _ranked(qrels: dict, docs: dict, judged_only: bool) -> list[float]:
    """trec_eval's ranking of one query (score descending, docid descending) as grades (NaN: not in qrels)."""
    order = sorted(docs.items(), key=lambda kv: (kv[1], kv[0]), reverse=True)
    grades = [float(qrels.get(d, math.nan)) for d, _ in order]
    return [g for g in grades if g >= 0] if judged_only else grades


def _rbp(grades: list[float], judged: list[float], p: float = 0.9) -> float:
    levels = [float(x) for x in range(int(max([g for g in judged if g >= 0], default=-1)) + 1)]
    top = max(levels, default=0.0)
    total, weight = 0.0, 1.0
    for g in grades:
        gain = g if g >= 0 else 0.0
        if top > 1:
            gain = gain / top
        total += gain * weight
        weight *= p
    return (1 - p) * total


def _rbp_resid(grades: list[float], p: float = 0.9) -> float:
    total, weight, unjudged = 0.0, 1.0, 0
    for g in grades:
        if not g >= 0:
            unjudged += 1
            total += weight
        weight *= p
    return weight + (1 - p) * total if unjudged else 0.0


def _relstring(grades: list[float], n: int = 10) -> str:
    out = []
    for g in grades[:n]:
        out.append("-" if g != g else "." if g < 0 else ">" if g > 9 else str(int(g)))
    return "".join(out)


def _dcg(grades: list[float]) -> float:
    return sum(g / math.log2(i + 2) for i, g in enumerate(grades) if g > 0)


@settings(max_examples=60, deadline=None)
@given(trec_data())
def test_rbp_unj_relstring_dcg_agree_with_reference_loops(data):
    qrels, run, level, judged_only = data
    common = sorted(set(qrels) & set(run))
    if not common:
        return
    kw = {"per_query": True, "missing": "skip", "rel_level": level, "judged_only": judged_only}
    got = trec_evaluate(qrels, run, ["rbp", "rbp_resid", "unj.1,3,5", "relstring.6", "dcg", "ideal_dcg"], **kw)
    got.update(trec_evaluate(qrels, run, ["rbp.p=0.5"], **kw))  # one parameter list per measure (trec_eval)
    for q in common:
        grades = _ranked(qrels[q], run[q], judged_only)
        judged = list(qrels[q].values())
        assert got["rbp"][q] == pytest.approx(_rbp(grades, judged), abs=1e-12)
        assert got["rbp_p=0.5"][q] == pytest.approx(_rbp(grades, judged, 0.5), abs=1e-12)
        assert got["rbp_resid"][q] == pytest.approx(_rbp_resid(grades), abs=1e-12)
        for k in (1, 3, 5):
            assert got[f"unj_{k}"][q] == pytest.approx(sum(1 for g in grades[:k] if not g >= 0) / k)
        assert got["relstring_6"][q] == _relstring(grades, 6)
        assert got["dcg"][q] == pytest.approx(_dcg(grades), abs=1e-12)
        ideal = sorted((g for g in judged if g > 0), reverse=True)
        assert got["ideal_dcg"][q] == pytest.approx(_dcg(ideal), abs=1e-12)


@settings(max_examples=30, deadline=None)
@given(trec_data())
def test_absent_queries_under_complete_are_trec_eval_stand_ins(data):
    """missing="zero" (-c): a qrels query without results scores 0 everywhere (gm_* floor at 1e-5)."""
    qrels, run, level, _ = data
    absent = sorted(set(qrels) - set(run))
    if not absent or not set(qrels) & set(run):
        return
    got = trec_evaluate(qrels, run, ["all_trec"], per_query=True, missing="zero", rel_level=level)
    for name, col in got.items():
        for q in absent:
            if name == "relstring":
                assert col[q] == ""
            elif name.startswith("gm_"):
                assert col[q] == pytest.approx(math.log(1e-5))
            elif name != "num_rel":
                assert col[q] == 0, (name, q)
    means = trec_evaluate(qrels, run, ["map", "num_q"], missing="zero", rel_level=level)
    assert means["num_q"] == len(qrels)
    assert means["map"] == pytest.approx(float(np.mean([got["map"][q] for q in qrels])))
