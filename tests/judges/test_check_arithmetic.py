"""The arithmetic behind the judge-quality numbers of ``ragmeter judge-check`` and
bench/judge_quality.py (which uses :mod:`ragmeter.judges.check`'s functions, not a copy)."""

from __future__ import annotations

from types import SimpleNamespace

import pytest

from ragmeter.cli.judge_check import split_names
from ragmeter.judges import check
from ragmeter.judges.label_rules import LabelRule, base_of
from ragmeter.metrics.generation.faithfulness import hard_score
from ragmeter.stats.roc import auroc
from tests.bench.loader import load_bench

jq = SimpleNamespace(separation=check.separation, position_profile=check.position_profile,
                     hard_score=hard_score, split_names=split_names,
                     hard_rows=lambda records, labels: [r for r in check.separation(records, labels)
                                                        if r["metric"].endswith(" [hard]")])


def test_the_bench_uses_the_package_arithmetic():
    bench = load_bench("judge_quality")  # bench/ on sys.path: it imports prompt_reuse, run alone or not
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
    row, hard = jq.separation(records, labels)
    assert hard["metric"] == "context_relevancy [hard]" and hard["auroc"] == row["auroc"]  # no hard value kept
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
    row, _ = jq.separation(records, labels)
    assert row["auroc"] == 1.0 and row["spearman"] == pytest.approx(1.0)
    assert row["mae_final"] == pytest.approx((0.5 + 0.75) / 2)


def test_split_names_keeps_parameter_commas():
    assert jq.split_names("a, b(x=1,y=2),c@3") == ["a", "b(x=1,y=2)", "c@3"]


@pytest.mark.parametrize(("name", "base"), [
    ("faithfulness(mode=direct)", "faithfulness"),
    ("ndcg(gain=exp)@10", "ndcg"),  # parameters and a cutoff
    ("Context_Relevancy@3", "context_relevancy"),  # lower-cased, as the registry keys names
    (" answer_grade ", "answer_grade"),
    ("my metric", "my metric"),  # not a metric name: its own base
    ("faithfulness(mode=direct", "faithfulness(mode=direct"),  # unbalanced: not a metric name either
])
def test_base_of_a_metric_name(name, base):
    assert base_of(name) == base


def test_a_non_metric_name_has_no_builtin_rule_but_its_metric_spelling_does():
    assert check.builtin_rule("Correctness(scale=graded)") == LabelRule("correct", 4.0)
    assert check.builtin_rule("correctness score") is None


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


# ---- [hard] rows of every rated metric: hand-computed AUROCs on made-up records ----------------

def _rows(records, labels):
    return {r["metric"]: r for r in check.separation(records, labels)}


def test_correctness_hard_row_uses_the_hard_rating_and_its_rho():
    n = "correctness"
    records = [_rec(n, 0.9, rating=6, weighted_rating=9.0, scoring="probability"),   # correct 5
               _rec(n, 0.3, rating=8, weighted_rating=3.0, scoring="probability"),   # correct 2
               _rec(n, 0.7, rating=7, weighted_rating=None, scoring="hard"),         # correct 4
               _rec(n, 0.0)]                                                          # empty answer: no rating; 1
    labels = [{"correct": c} for c in (5, 2, 4, 1)]
    rows = _rows(records, labels)
    # weighted: pos (>= 4) [0.9, 0.7] above neg [0.3, 0.0] -> 1.0; rho: same order as the grades -> 1
    assert rows[n]["auroc"] == 1.0 and rows[n]["spearman"] == pytest.approx(1.0)
    # hard: pos [0.6, 0.7], neg [0.8, 0.0 (the score: no hard rating)] -> 2 wins of 4 pairs
    hard = rows[f"{n} [hard]"]
    assert hard["auroc"] == pytest.approx(0.5) and hard["n"] == 4
    assert (hard["mean_pos"], hard["mean_neg"]) == (pytest.approx(0.65), pytest.approx(0.4))
    # ranks of the hard values [0.6, 0.8, 0.7, 0.0] -> [2, 4, 3, 1], of the grades [4, 2, 3, 1]:
    # sum d^2 = 4 + 4 = 8, rho = 1 - 6 * 8 / (4 * 15) = 0.2
    assert hard["spearman"] == pytest.approx(0.2)
    report = check.metric_report(check.labelled_pairs(n, records, labels), {}, 1.0, check.Thresholds())
    assert report["auroc"] == 1.0 and report["auroc_hard"] == pytest.approx(0.5)
    assert report["spearman_hard"]["rho"] == pytest.approx(0.2)


def test_one_word_correctness_hard_row_uses_the_word():
    n = "correctness"
    records = [_rec(n, 0.4, same_answer=True, p_yes=0.4, scoring="probability", decision="direct"),    # correct 5
               _rec(n, 0.7, same_answer=False, p_yes=0.7, scoring="probability", decision="direct"),   # correct 1
               _rec(n, 0.9, same_answer=True, p_yes=0.9, scoring="probability", decision="direct")]    # correct 2
    rows = _rows(records, [{"correct": c} for c in (5, 1, 2)])
    # P(yes): pos [0.4] below neg [0.7, 0.9] -> 0; the words: pos [1] vs neg [0, 1] -> (1 + 0.5) / 2
    assert rows[n]["auroc"] == 0.0 and rows[f"{n} [hard]"]["auroc"] == pytest.approx(0.75)
    assert rows[f"{n} [hard]"]["mean_neg"] == pytest.approx(0.5)


def test_answer_grade_and_answer_relevancy_hard_rows():
    g = "answer_grade"
    records = [_rec(g, 0.625, grade=4, weighted_grade=3.5), _rec(g, 0.5, grade=3, weighted_grade=3.0),
               _rec(g, 0.75, grade=2, weighted_grade=4.0)]
    rows = _rows(records, [{"correct": 5}, {"correct": 3}, {"correct": 2}])
    # weighted: pos [0.625] vs neg [0.5, 0.75] -> 1 of 2; hard (grade - 1) / 4: [0.75] vs [0.5, 0.25] -> 1
    assert rows[g]["auroc"] == pytest.approx(0.5) and rows[f"{g} [hard]"]["auroc"] == 1.0
    a = "answer_relevancy"
    records = [_rec(a, 0.4, responds=True, p_yes=0.4, scoring="probability"),       # relevant
               _rec(a, 0.6, responds=False, p_yes=0.6, scoring="probability"),      # not
               _rec(a, 0.3, questions=[{"question": "q", "similarity": 0.3}]),     # relevant, embedder: no hard
               _rec(a, 0.55, rating=2, weighted_rating=5.5, scoring="probability")]  # not
    rows = _rows(records, [{"relevant": y} for y in (True, False, True, False)])
    # weighted: pos [0.4, 0.3] below neg [0.6, 0.55] -> 0; hard: pos [1, 0.3] above neg [0, 0.2] -> 1
    assert rows[a]["auroc"] == 0.0 and rows[f"{a} [hard]"]["auroc"] == 1.0
    assert rows[f"{a} [hard]"]["mean_pos"] == pytest.approx(0.65) and rows[f"{a} [hard]"]["mean_neg"] == 0.1


def test_chunk_metrics_hard_rows_per_chunk():
    c = "context_relevancy"
    records = [_rec(c, 0.675, chunks=[{"rating": 7.5, "hard_rating": 9}, {"rating": 6.0, "hard_rating": 2}]),
               _rec(c, 0.25, chunks=[{"rating": 5.0, "relevant": False, "p_yes": 0.5}, {"rating": None}])]
    labels = [{"context_relevance": [1, 0]}, {"context_relevance": [1, 0]}]
    rows = _rows(records, labels)
    # used ratings: pos [7.5, 5.0] neg [6.0, 0.0] -> 7.5>6, 7.5>0, 5<6, 5>0 -> 3/4
    assert rows[c]["auroc"] == pytest.approx(0.75)
    # hard: pos [9, 0 (relevant: no)] neg [2, 0 (unrated)] -> win, win, loss, tie -> 2.5/4
    assert rows[f"{c} [hard]"]["auroc"] == pytest.approx(0.625) and rows[f"{c} [hard]"]["n"] == 4
    p = "context_precision_llm"
    records = [_rec(p, 1.0, ratings=[8.0, 3.0], hard_ratings=[2, 3]),
               _rec(p, 0.5, ratings=[2.0, 6.0])]  # a record without hard_ratings: the ratings
    labels = [{"context_relevance": [1, 0]}, {"context_relevance": [0, 1]}]
    rows = _rows(records, labels)
    # used: pos [8, 6] neg [3, 2] -> 1; hard: pos [2, 6] neg [3, 2] -> loss, tie, win, win -> 2.5/4
    assert rows[p]["auroc"] == 1.0 and rows[f"{p} [hard]"]["auroc"] == pytest.approx(0.625)


def test_passage_recall_hard_row_from_the_hard_final_and_errors_counted():
    n = "passage_recall"
    records = [_rec(n, 0.9, final=4.5, hard_final=3.0), _rec(n, 0.5, final=2.5, hard_final=4.0),
               _rec(n, None, error={"type": "JudgeParseError"})]
    labels = [{"complete": True, "essential_covered": [5], "bonus_covered": []},
              {"complete": False, "essential_covered": [3, 1], "bonus_covered": [5]},
              {"complete": False, "essential_covered": [1], "bonus_covered": []}]
    rows = _rows(records, labels)
    # human finals 5.0 and 3.25; weighted finals 4.5, 2.5 -> AUROC 1, rho 1; hard 3.0, 4.0 -> 0 and -1
    assert rows[n]["auroc"] == 1.0 and rows[n]["spearman"] == pytest.approx(1.0)
    hard = rows[f"{n} [hard]"]
    assert hard["auroc"] == 0.0 and hard["spearman"] == pytest.approx(-1.0) and hard["errors"] == 1
    assert (hard["mean_pos"], hard["mean_neg"]) == (pytest.approx(0.6), pytest.approx(0.8))


def test_hard_rows_read_the_details_the_metrics_really_write(fake_llm, make_judge):
    from ragmeter import Sample, evaluate
    from tests.judges.fake_server import Reply
    from tests.metrics.generation.rules import spelled

    # answer "A": hard grade 2, weighted (2*0.1 + 5*0.9) = 4.7; answer "B": hard 4, weighted (4*0.2 + 2*0.8) = 2.4
    replies = {"AAA": spelled([('{"reasoning": "r", "grade": ', {}), ("2", {"2": 0.1, "5": 0.9}), ("}", {})]),
               "BBB": spelled([('{"reasoning": "r", "grade": ', {}), ("4", {"4": 0.2, "2": 0.8}), ("}", {})])}

    def rule(call) -> Reply:
        return next(r for key, r in replies.items() if key in call.user_text)

    fake_llm.rule = rule
    samples = [Sample.model_validate({"id": k, "query": "q", "answer": k, "reference": "ref"}) for k in replies]
    run = evaluate(samples, ["answer_grade"], judge=make_judge())
    rows = _rows(run.records, [{"correct": 5}, {"correct": 1}])
    assert [r["metrics"]["answer_grade"]["score"] for r in run.records] == [pytest.approx(0.925),
                                                                             pytest.approx(0.35)]
    assert rows["answer_grade"]["auroc"] == 1.0 and rows["answer_grade"]["spearman"] == pytest.approx(1.0)
    hard = rows["answer_grade [hard]"]  # hard (2-1)/4 = 0.25 for the correct one, (4-1)/4 = 0.75 for the other
    assert hard["auroc"] == 0.0 and hard["spearman"] == pytest.approx(-1.0)
    assert (hard["mean_pos"], hard["mean_neg"]) == (0.25, 0.75)
