"""Cross-check against pytrec_eval (trec_eval's code behind a Python API) on random data.

Seeded qrels and runs with score ties, graded and negative labels, qrels queries without any
relevant document, qrels queries missing from the run and run queries missing from the qrels.
pytrec_eval evaluates only the queries present in both (trec_eval without ``-c``), so ragmeter
runs with ``missing="skip"`` and every per-query value must agree to 1e-9.
"""

from __future__ import annotations

import numpy as np
import pytest

from ragmeter.trec import trec_evaluate

pytrec_eval = pytest.importorskip("pytrec_eval")

PYTREC = {"map", "P.1,3,5,10,20", "recall.1,5,10,50", "ndcg_cut.1,3,10,25", "ndcg", "recip_rank", "Rprec",
          "success.1,5,10", "map_cut.5,10,100", "num_rel", "num_ret", "num_rel_ret"}
OURS = ["map", "P.1,3,5,10,20", "recall.1,5,10,50", "ndcg_cut.1,3,10,25", "ndcg", "recip_rank", "Rprec",
        "success.1,5,10", "map_cut.5,10,100", "num_rel", "num_ret", "num_rel_ret"]


def random_data(seed: int, n_queries: int = 60):
    rng = np.random.default_rng(seed)
    qrels: dict[str, dict[str, int]] = {}
    run: dict[str, dict[str, float]] = {}
    for i in range(n_queries):
        q = f"q{i}"
        pool = [f"d{j}" for j in rng.choice(200, size=int(rng.integers(1, 60)), replace=False)]
        if i % 10 != 1:  # q1, q11, ...: in the run only
            candidates = pool + [f"u{j}" for j in range(10)]
            judged = rng.choice(candidates, size=int(rng.integers(1, min(25, len(candidates)))), replace=False)
            grades = rng.choice([-1, 0, 0, 1, 2, 3], size=len(judged))
            if i % 10 == 2:  # no relevant document at all
                grades = np.minimum(grades, 0)
            qrels[q] = {str(d): int(g) for d, g in zip(judged, grades, strict=True)}
        if i % 10 != 3:  # q3, q13, ...: in the qrels only
            coarse = i % 2 == 0  # few distinct scores: many ties broken by docid
            scores = rng.integers(0, 4, size=len(pool)) if coarse else rng.normal(size=len(pool))
            run[q] = {d: float(s) for d, s in zip(pool, scores, strict=True)}
    return qrels, run


@pytest.mark.parametrize("seed", [0, 1, 2, 3])
def test_per_query_values_match_pytrec_eval(seed):
    qrels, run = random_data(seed)
    expected = pytrec_eval.RelevanceEvaluator(qrels, PYTREC).evaluate(run)
    got = trec_evaluate(qrels, run, OURS, per_query=True, missing="skip")
    common = set(qrels) & set(run)
    assert set(expected) == common
    assert len(common) >= 40
    names = set(next(iter(expected.values())))
    assert names == set(got), names ^ set(got)
    for name in names:
        assert set(got[name]) == common, name
        for q in common:
            assert got[name][q] == pytest.approx(expected[q][name], abs=1e-9, rel=0), (name, q)


@pytest.mark.parametrize("seed", [4, 5])
def test_means_and_cut_runs_match_pytrec_eval(seed):
    qrels, run = random_data(seed)
    # max_ret=5 is the same as giving pytrec_eval only the top 5 of each ranking (trec_eval's order)
    top5 = {}
    for q, docs in run.items():
        by_docid_desc = sorted(docs.items(), reverse=True)  # str order is strcmp order
        ranked = sorted(by_docid_desc, key=lambda kv: -kv[1])  # stable: ties keep docid descending
        top5[q] = dict(ranked[:5])
    expected = pytrec_eval.RelevanceEvaluator(qrels, {"map", "P.5", "ndcg", "recip_rank"}).evaluate(top5)
    got = trec_evaluate(qrels, run, ["map", "P_5", "ndcg", "recip_rank"], missing="skip", max_ret=5)
    for name in ("map", "P_5", "ndcg", "recip_rank"):
        mean = float(np.mean([v[name] for v in expected.values()]))
        assert got[name] == pytest.approx(mean, abs=1e-12, rel=0), name


def test_rel_level_matches_pytrec_eval():
    qrels, run = random_data(7)
    expected = pytrec_eval.RelevanceEvaluator(qrels, {"map", "P.10", "recall.10"}, relevance_level=2).evaluate(run)
    got = trec_evaluate(qrels, run, ["map", "P_10", "recall_10"], per_query=True, missing="skip", rel_level=2)
    for q, vals in expected.items():
        for name, v in vals.items():
            assert got[name][q] == pytest.approx(v, abs=1e-9, rel=0), (name, q)
