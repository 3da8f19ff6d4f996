"""The arithmetic behind the judge-quality numbers in docs/generation.md and ``ragmeter judge-check``
(moved from bench/judge_quality.py into :mod:`ragmeter.judges.check`; the bench uses it from there)."""

from __future__ import annotations

import importlib.util
from pathlib import Path
from types import SimpleNamespace

import pytest

from ragmeter.cli.judge_check import split_names
from ragmeter.judges import check
from ragmeter.stats.roc import auroc

jq = SimpleNamespace(separation=check.separation, position_profile=check.position_profile,
                     hard_score=check.hard_score, split_names=split_names,
                     hard_rows=lambda records, labels: [r for r in check.separation(records, labels)
                                                        if r["metric"].endswith(" [hard]")])


def test_the_bench_uses_the_package_arithmetic():
    path = Path(__file__).resolve().parents[2] / "bench" / "judge_quality.py"
    spec = importlib.util.spec_from_file_location("judge_quality", path)
    assert spec and spec.loader
    bench = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(bench)
    assert bench.separation is check.separation and bench.position_profile is check.position_profile
    assert not hasattr(bench, "auroc") and not hasattr(bench, "hard_rows")  # no second copy


def test_auroc_by_hand():
    # pairs (pos, neg): (0.9 > 0.1), (0.9 > 0.5), (0.5 = 0.5 -> 1/2), (0.5 > 0.1) -> 3.5 / 4
    assert auroc([0.9, 0.5], [0.1, 0.5]) == pytest.approx(3.5 / 4)
    assert auroc([1.0], [0.0]) == 1.0 and auroc([0.0], [1.0]) == 0.0
    assert auroc([], [0.3]) is None


def _rec(name, score, error=None, **details):
    return {"metrics": {name: {"score": score, "error": error, "details": details}}}


def test_separation_per_chunk_and_errors_counted():
    records = [_rec("context_relevancy", 0.5, chunks=[{"rating": 10.0}, {"rating": 0.0}]),
               _rec("context_relevancy", 0.0, chunks=[{"rating": None}]),
               _rec("context_relevancy", None, error={"type": "JudgeParseError"})]
    labels = [{"context_relevance": [1, 0]}, {"context_relevance": [1]}, {"context_relevance": [0]}]
    (row,) = jq.separation(records, labels)
    # positives: 10, 0 (unrated counts 0); negatives: 0 -> pairs: win, tie -> 1.5 / 2
    assert row["n"] == 3 and row["errors"] == 1 and row["auroc"] == pytest.approx(0.75)
    assert row["mean_pos"] == 5.0 and row["mean_neg"] == 0.0


def test_separation_hallucination_is_reversed_and_parameterised_names_kept():
    records = [_rec("hallucination_rate", 0.0), _rec("hallucination_rate", 1.0),
               _rec("faithfulness(steps=separate)", 1.0)]
    recs = [{"metrics": {**a["metrics"], **records[2]["metrics"]}} for a in records[:2]]
    rows = {r["metric"]: r for r in jq.separation(recs, [{"faithful": True}, {"faithful": False}])}
    assert rows["hallucination_rate"]["auroc"] == 1.0
    assert rows["hallucination_rate"]["mean_pos"] == 0.0 and rows["hallucination_rate"]["mean_neg"] == 1.0
    assert rows["faithfulness(steps=separate)"]["auroc"] == 0.5


def test_separation_passage_recall_against_human_final():
    # human finals: [5] -> 5.0; [3, 1] + bonus [5] -> 2 + 5/(2*2*1) = 3.25
    records = [_rec("passage_recall", 0.9, final=4.5), _rec("passage_recall", 0.5, final=2.5)]
    labels = [{"complete": True, "essential_covered": [5], "bonus_covered": []},
              {"complete": False, "essential_covered": [3, 1], "bonus_covered": [5]}]
    (row,) = jq.separation(records, labels)
    assert row["auroc"] == 1.0 and row["spearman"] == pytest.approx(1.0)
    assert row["mae_final"] == pytest.approx((0.5 + 0.75) / 2)


def test_split_names_keeps_parameter_commas():
    assert jq.split_names("a, b(x=1,y=2),c@3") == ["a", "b(x=1,y=2)", "c@3"]


def test_position_profile_counts_yes_by_position():
    records = [
        {"metrics": {"faithfulness": {"details": {"claims": [{"supported": True}, {"supported": False},
                                                            {"supported": None}, {"supported": True}]}},
                     "context_relevancy": {"details": {"chunks": [{"rating": 10.0}, {"rating": None}]}}}},
        {"metrics": {"faithfulness": {"details": {"claims": [{"supported": False}]}},
                     "context_relevancy": {"details": {"chunks": [{"rating": 0.0}, {"rating": 10.0}]}}}},
    ]
    labels = [{"context_relevance": [1, 0]}, {"context_relevance": [0, 1]}]
    prof = jq.position_profile(records, labels)
    f = {p["position"]: p for p in prof["faithfulness"]}
    assert (f["1"]["n"], f["1"]["judged_yes"]) == (2, 0.5)
    assert (f["2"]["n"], f["2"]["judged_yes"]) == (1, 0.0)
    assert (f["3+"]["n"], f["3+"]["judged_yes"]) == (2, 0.5)  # None counts as not yes
    c = {p["position"]: p for p in prof["context_relevancy"]}
    assert (c["1"]["judged_yes"], c["1"]["human_yes"]) == (0.5, 0.5)
    assert (c["2"]["judged_yes"], c["2"]["human_yes"]) == (0.5, 0.5) and c["3+"]["n"] == 0


def test_hard_rows_use_the_hard_verdicts_behind_probability_scores():
    n = "faithfulness(mode=direct)"
    records = [_rec(n, 0.9, verdict="yes", scoring="probability"),   # faithful
               _rec(n, 0.4, verdict="yes", scoring="probability"),   # not faithful: hard yes, P 0.4
               _rec(n, 0.2, verdict="no", scoring="probability")]    # not faithful
    labels = [{"faithful": True}, {"faithful": False}, {"faithful": False}]
    prob = jq.separation(records, labels)[0]
    hard = jq.hard_rows(records, labels)[0]
    assert prob["auroc"] == 1.0  # 0.9 above 0.4 and 0.2
    # hard: pos [1], neg [1, 0] -> (1/2 + 1) / 2
    assert hard["metric"] == f"{n} [hard]" and hard["auroc"] == pytest.approx(0.75)
    h = "hallucination_rate(mode=direct)"
    hrec = [_rec(h, 0.1, verdict="yes", scoring="probability"), _rec(h, 0.6, verdict="yes", scoring="probability"),
            _rec(h, 0.8, verdict="no", scoring="probability")]
    hard_h = jq.hard_rows(hrec, labels)[0]
    assert hard_h["auroc"] == pytest.approx(0.75) and hard_h["mean_pos"] == 0.0 and hard_h["mean_neg"] == 0.5
    claims = _rec("faithfulness", 0.6, claims=[{"supported": True, "p_yes": 0.8}, {"supported": False, "p_yes": 0.4}])
    assert jq.hard_score(claims["metrics"]["faithfulness"]["details"]) == 0.5
