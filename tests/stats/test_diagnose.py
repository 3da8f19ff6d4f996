"""diagnose(): each signature on hand-written runs, missing metrics, nearest cutoffs, positions, CLI."""

from __future__ import annotations

import json

import numpy as np
import pytest
from click.testing import CliRunner

from ragmeter.cli import main
from ragmeter.errors import InvalidParameterError
from ragmeter.stats import diagnose, position_analysis
from ragmeter.stats.diagnose import pick_metric


def _rows(n, seed=0, **means):
    """n samples; each metric ~ its mean +- 0.05 noise, clipped to [0, 1]."""
    rng = np.random.default_rng(seed)
    return {f"q{i}": {m: float(np.clip(mu + rng.uniform(-0.05, 0.05), 0, 1)) for m, mu in means.items()}
            for i in range(n)}


def _rules(d):
    return {f["rule"]: f for f in d.findings}


def test_retriever_misses(make_run):
    run = make_run("r", _rows(40, **{"recall@5": 0.4, "recall@20": 0.5, "ndcg@5": 0.45, "faithfulness": 0.92}))
    d = diagnose(run)
    f = _rules(d)["retriever_misses"]
    assert f["strength"] == "strong" and f["stage"] == "retrieval"
    assert "RRF" in f["fix"] and f["missing_metrics"] == []
    ev = {e["metric"]: e for e in f["evidence"]}
    assert ev["recall@5"]["confirmed"] and ev["recall@5"]["ci"][1] < 0.65
    assert f["samples_matching"] == 40
    assert "ranked_too_low" not in _rules(d)  # recall@20 is low too


def test_ranked_too_low_is_not_a_miss(make_run):
    run = make_run("r", _rows(40, **{"recall@5": 0.5, "recall@20": 0.95, "ndcg@5": 0.3, "faithfulness": 0.9}))
    d = diagnose(run)
    assert set(_rules(d)) == {"ranked_too_low"}
    assert "reranker" in _rules(d)["ranked_too_low"]["fix"]
    miss = next(nf for nf in d.not_fired if nf["rule"] == "retriever_misses")
    assert "recall@20 mean 0.9" in miss["reason"] and "another rule" in miss["reason"]


def test_generator_ignores_context(make_run):
    run = make_run("r", _rows(40, **{"recall@5": 0.9, "ndcg@5": 0.85, "faithfulness": 0.5}))
    f = _rules(diagnose(run))["generator_ignores"]
    assert f["strength"] == "strong" and "temperature" in f["fix"]


def test_dodges_the_question(make_run):
    run = make_run("r", _rows(40, **{"faithfulness": 0.98, "answer_relevancy": 0.4}))
    d = diagnose(run)
    f = _rules(d)["dodges_question"]
    assert f["stage"] == "generation (relevance)" and f["strength"] == "strong"
    # no retrieval metric: those rules are reported as not fired, naming what they need
    reasons = {nf["rule"]: nf["reason"] for nf in d.not_fired}
    assert reasons["retriever_misses"] == "needs recall@5, not in the run"
    assert "recall@20" in reasons["ranked_too_low"] and "ndcg@5" in reasons["ranked_too_low"]


def test_missing_supporting_metric_and_nearest_cutoff(make_run):
    run = make_run("r", _rows(40, **{"recall@10": 0.3}))
    f = _rules(diagnose(run))["retriever_misses"]
    assert f["missing_metrics"] == ["faithfulness"]
    assert f["strength"] == "moderate"
    assert f["substitutions"] == ["recall@10 used for recall@5 (nearest available cutoff)"]


def test_tentative_when_the_ci_crosses_the_threshold(make_run):
    # faithfulness mean just under .75 with a wide CI: holds by the mean only
    rows = {f"q{i}": {"faithfulness": v, "ndcg@5": 0.9} for i, v in enumerate([0.2, 0.9, 1.0, 0.8, 0.7, 0.8])}
    f = _rules(diagnose(make_run("r", rows)))["generator_ignores"]
    assert f["strength"] == "tentative"


def test_per_sample_findings(make_run):
    rows = {
        "bad_gen": {"ndcg@5": 0.9, "faithfulness": 0.3, "recall@5": 0.9},
        "miss": {"ndcg@5": 0.1, "faithfulness": 0.95, "recall@5": 0.2},
        "ok": {"ndcg@5": 0.9, "faithfulness": 0.9, "recall@5": 1.0},
        "no_faith": {"ndcg@5": 0.1, "faithfulness": None, "recall@5": 0.0},
    }
    d = diagnose(make_run("r", rows))
    assert d.per_sample == {"bad_gen": ["generator_ignores"], "miss": ["retriever_misses"],
                            "no_faith": ["retriever_misses"]}
    assert d.samples["retriever_misses"] == {"count": 2, "share": 0.5, "ids": ["miss", "no_faith"]}


def test_thresholds_are_configurable_and_validated(make_run):
    run = make_run("r", _rows(30, **{"recall@5": 0.7, "faithfulness": 0.9}))
    assert "retriever_misses" not in _rules(diagnose(run))
    assert "retriever_misses" in _rules(diagnose(run, thresholds={"recall_low": 0.8}))
    with pytest.raises(InvalidParameterError, match="thresholds: expected keys among"):
        diagnose(run, thresholds={"recall": 0.5})
    with pytest.raises(InvalidParameterError, match="cutoffs: expected keys among"):
        diagnose(run, cutoffs={"nope": 3})
    assert "retriever_misses" in _rules(diagnose(run, thresholds={"recall_low": 0.8}, cutoffs={"retriever_misses": 10}))


def test_pick_metric():
    names = ["recall@3", "recall@10", "recall", "recall(rel_level=2)@5", "ndcg@5", "mrr"]
    assert pick_metric(names, "recall", 5) == "recall@3"  # |3-5| = 2 < |10-5| = 5; params lose
    assert pick_metric(names, "recall", 20) == "recall@10"
    assert pick_metric(["recall"], "recall", 5) == "recall"
    assert pick_metric(["recall@4", "recall@6"], "recall", 5) == "recall@6"  # tie: the deeper one
    assert pick_metric(names, "faithfulness", None) is None


def _position_rows():
    """Faithfulness high when the first relevant chunk is at rank 1 or deep, low in the middle."""
    rng = np.random.default_rng(0)
    rows, details = {}, {}
    plan = [(1, 0.95, 30), (2, 0.85, 10), (4, 0.45, 20), (8, 0.4, 20), (15, 0.9, 15), (None, 0.3, 5)]
    k = 0
    for rank, mean, count in plan:
        for _ in range(count):
            sid = f"q{k}"
            rows[sid] = {"recall@20": 1.0 if rank else 0.0,
                         "faithfulness": float(np.clip(mean + rng.uniform(-0.05, 0.05), 0, 1))}
            details[sid] = {"relevant_ranks": [rank, rank + 3] if rank else []}
            k += 1
    return rows, details


def test_position_analysis_lost_in_the_middle(make_run):
    rows, details = _position_rows()
    p = position_analysis(make_run("r", rows, details))
    assert p["metric"] == "faithfulness"
    buckets = {b["bucket"]: b for b in p["buckets"]}
    assert buckets["1"]["n"] == 30 and buckets["4-5"]["n"] == 20 and buckets["none"]["n"] == 5
    assert buckets["11-20"]["mean"] == pytest.approx(0.9, abs=0.02)
    assert p["lost_in_the_middle"] is True
    assert p["n_with_rank"] == 95 and p["n_without_relevant"] == 5


def test_position_analysis_without_details(make_run):
    run = make_run("r", {"q1": {"faithfulness": 0.5}, "q2": {"faithfulness": 0.7}})
    assert "note" in position_analysis(run)
    assert position_analysis(make_run("s", {"q1": {"mrr": 0.5}})) is None


def test_cli_formats(make_run):
    rows, details = _position_rows()
    for sid in rows:
        rows[sid]["ndcg@5"] = 0.9
    run = make_run("r", rows, details)
    res = CliRunner().invoke(main, ["diagnose", str(run), "--format", "json", "--per-sample"],
                             catch_exceptions=False)
    assert res.exit_code == 0, res.output
    data = json.loads(res.output)
    assert "per_sample" in data and data["position"]["lost_in_the_middle"] is True
    assert {f["rule"] for f in data["findings"]} == {"generator_ignores"}
    md = CliRunner().invoke(main, ["diagnose", str(run), "--format", "markdown", "-t", "faithfulness_low=0.5"],
                            catch_exceptions=False).output
    assert "by rank of the first relevant chunk" in md and "generator_ignores" in md
    table = CliRunner().invoke(main, ["diagnose", str(run)], catch_exceptions=False).output
    assert "fix to try" in table and "lost in the middle: yes" in table
    bad = CliRunner().invoke(main, ["diagnose", str(run), "-t", "faithfulness_low"])
    assert bad.exit_code == 2 and "NAME=VALUE" in bad.output


def test_position_analysis_reads_real_retrieval_details(tmp_path):
    import ragmeter

    rows = [{"id": f"q{i}", "contexts": [{"id": "a"}, {"id": "b"}, {"id": "c"}], "relevant": [rel]}
            for i, rel in enumerate(["a", "b", "c", "a", "zzz"])]
    ragmeter.evaluate(rows, ["mrr", "recall@3"], out_dir=str(tmp_path / "out"))
    p = position_analysis(tmp_path / "out", metric="mrr")
    buckets = {b["bucket"]: b for b in p["buckets"]}
    # first relevant rank 1 -> MRR 1 (twice); rank 2 -> 1/2; rank 3 -> 1/3; not retrieved -> 0
    assert (buckets["1"]["n"], buckets["1"]["mean"]) == (2, 1.0)
    assert buckets["2"]["mean"] == 0.5 and buckets["3"]["mean"] == pytest.approx(1 / 3)
    assert (buckets["none"]["n"], buckets["none"]["mean"]) == (1, 0.0)
    with pytest.raises(InvalidParameterError, match="metric: expected one of"):
        position_analysis(tmp_path / "out", metric="faithfulness")


@pytest.fixture
def new_retrieval_metric():
    """A retrieval metric registered by the test only (ragmeter's lists never heard of it)."""
    from ragmeter import registry
    from ragmeter.metrics.retrieval.hit_rate import hit_rate, hit_rate_single

    base = registry.get_spec("hit_rate")
    spec = registry.MetricSpec(
        name="zz_new_retrieval", summary="test-only retrieval metric", formula="hit", edge_cases=("none",),
        factory=base.factory, category="retrieval", role="retrieval", requires=("contexts",),
        kernel=hit_rate, reference=hit_rate_single)
    registry.register(spec)
    try:
        yield spec.name
    finally:
        registry._REGISTRY.pop(spec.name)
        registry._ALIASES.pop(spec.name)


def test_a_new_retrieval_metric_is_never_the_answer_metric(make_run, new_retrieval_metric):
    rows, details = _position_rows()
    for sid in rows:  # the new metric first in every record, with answer-like high scores
        rows[sid] = {new_retrieval_metric: 0.9, "context_relevancy": 0.8, **rows[sid]}
    assert position_analysis(make_run("r", rows, details))["metric"] == "faithfulness"
    only = {sid: {new_retrieval_metric: 0.9, "context_relevancy": 0.5, "recall@20": 1.0} for sid in rows}
    assert position_analysis(make_run("s", only, details)) is None


def test_peer_names_map_to_ragmeter_metrics(make_run):
    from ragmeter.registry import list_metrics
    from ragmeter.run_names import metric_spec

    assert metric_spec("answer_correctness").name == "correctness"
    assert metric_spec("recip_rank").name == "mrr"  # a trec_eval name, from the registry
    assert metric_spec("success").name == "hit_rate"
    assert metric_spec("my_own_score") is None
    ranked = sorted((s for s in list_metrics() if s.answer_preference is not None), key=lambda s: s.answer_preference)
    assert all(s.role == "answer" and s.higher_is_better for s in ranked)
    assert [s.name for s in ranked] == ["faithfulness", "correctness", "answer_grade", "answer_relevancy",
                                        "semantic_similarity", "token_f1", "rouge_l", "lexical_faithfulness"]
    rows, details = _position_rows()
    for sid, r in rows.items():
        rows[sid] = {"hallucination_rate": 0.1, "recip_rank": 1.0, "answer_correctness": r.pop("faithfulness"), **r}
    assert position_analysis(make_run("r", rows, details))["metric"] == "answer_correctness"
    assert pick_metric(["response_relevancy", "answer_relevancy@3"], "answer_relevancy", None) == "answer_relevancy@3"
    assert pick_metric(["response_relevancy"], "answer_relevancy", None) == "response_relevancy"
