"""trec_evaluate: hand-computed golden values and trec_eval's semantics, one rule per test.

Fixture (worked by hand): q1 judged {a: 2, b: 0, c: 1, d: -1, e: 1}; run scores b .9, d .7, a .5,
c .5, z .1. trec_eval's ranking is score descending, ties by docid descending: b, d, c, a, z. At
rel_level 1 the relevant ranks are 3 (c) and 4 (a); R = 3 (a, c, e; d is negative, z unjudged).
q2 has judgements but nothing relevant; q3 is judged but not in the run; q9 is only in the run.
"""

from __future__ import annotations

import math

import pandas as pd
import pyarrow as pa
import pytest

from ragmeter.errors import InputError, InvalidParameterError, UnknownMetricError
from ragmeter.trec import Qrels, Run, evaluate_trec, resolve_measures, trec_evaluate

QRELS = {"q1": {"a": 2, "b": 0, "c": 1, "d": -1, "e": 1}, "q2": {"x": 0}, "q3": {"y": 1}}
RUN = {"q1": {"a": 0.5, "b": 0.9, "c": 0.5, "d": 0.7, "z": 0.1}, "q2": {"x": 1.0}, "q9": {"y": 1.0}}
L3, L5 = math.log2(3), math.log2(5)

Q1 = {
    "P_2": 0.0,
    "P_5": 2 / 5,
    "recip_rank": 1 / 3,
    "map": (1 / 3 + 2 / 4) / 3,
    "map_cut_3": (1 / 3) / 3,
    "Rprec": 1 / 3,  # top R=3: b, d, c
    "recall_5": 2 / 3,
    "success_2": 0.0,
    "success_3": 1.0,
    "ndcg": (1 / 2 + 2 / L5) / (2 + 1 / L3 + 1 / 2),  # linear gains; ideal grades 2, 1, 1
    "ndcg_cut_3": (1 / 2) / (2 + 1 / L3 + 1 / 2),
    "num_ret": 5,
    "num_rel": 3,
    "num_rel_ret": 2,
}


def test_golden_per_query():
    got = trec_evaluate(QRELS, RUN, list(Q1), per_query=True)
    for name, expected in Q1.items():
        assert got[name]["q1"] == pytest.approx(expected, abs=1e-12), name
        assert got[name]["q2"] == (1 if name == "num_ret" else 0), name  # nothing relevant: 0
        # missing from the run: every measure 0 (missing="zero"), but its judgements still count
        assert got[name]["q3"] == (1 if name == "num_rel" else 0), name
    assert set(got["map"]) == {"q1", "q2", "q3"}  # q9 (no judgements) is ignored


def test_missing_policies():
    zero = trec_evaluate(QRELS, RUN, ["map", "num_q", "num_rel", "num_ret"])
    assert zero == {"num_q": 3, "num_ret": 6, "num_rel": 4, "map": pytest.approx(Q1["map"] / 3)}
    skip = trec_evaluate(QRELS, RUN, ["map", "num_q", "num_rel"], missing="skip")
    assert skip == {"num_q": 2, "num_rel": 3, "map": pytest.approx(Q1["map"] / 2)}
    with pytest.raises(InputError, match="'q3'"):
        trec_evaluate(QRELS, RUN, ["map"], missing="error")
    with pytest.raises(InvalidParameterError, match="missing"):
        trec_evaluate(QRELS, RUN, ["map"], missing="ignore")


def test_rel_level_changes_binary_measures_not_gains():
    got = trec_evaluate(QRELS, RUN, ["P_5", "recip_rank", "map", "num_rel", "ndcg"], per_query=True, rel_level=2)
    assert got["num_rel"]["q1"] == 1  # only a (grade 2)
    assert got["P_5"]["q1"] == pytest.approx(1 / 5)
    assert got["recip_rank"]["q1"] == pytest.approx(1 / 4)
    assert got["map"]["q1"] == pytest.approx(1 / 4)
    assert got["ndcg"]["q1"] == pytest.approx(Q1["ndcg"])  # gains are the grades, whatever the level


def test_max_ret_cuts_after_ranking():
    got = trec_evaluate(QRELS, RUN, ["P_5", "map", "num_ret", "num_rel_ret"], per_query=True, max_ret=3)
    assert got["num_ret"]["q1"] == 3  # b, d, c
    assert got["num_rel_ret"]["q1"] == 1
    assert got["P_5"]["q1"] == pytest.approx(1 / 5)
    assert got["map"]["q1"] == pytest.approx((1 / 3) / 3)
    with pytest.raises(InvalidParameterError, match="max_ret"):
        trec_evaluate(QRELS, RUN, ["map"], max_ret=0)


def test_fractional_grades_are_not_truncated():
    qrels = {"q": {"a": 0.5, "b": 1.5}}
    run = {"q": {"a": 2.0, "b": 1.0}}
    got = trec_evaluate(qrels, run, ["ndcg", "num_rel", "recip_rank"])
    assert got["ndcg"] == pytest.approx((0.5 + 1.5 / L3) / (1.5 + 0.5 / L3))
    assert got["num_rel"] == 1  # 1.5 >= 1; 0.5 is below the level
    assert got["recip_rank"] == pytest.approx(1 / 2)


def test_ties_broken_by_docid_descending_in_strcmp_order():
    # "d10" > "d1" > "D2" in strcmp (byte) order; equal scores rank d10, d1, D2
    qrels = {"q": {"D2": 1}}
    run = {"q": {"d1": 1.0, "D2": 1.0, "d10": 1.0}}
    assert trec_evaluate(qrels, run, ["recip_rank"])["recip_rank"] == pytest.approx(1 / 3)
    qrels = {"q": {"d10": 1}}
    assert trec_evaluate(qrels, run, ["recip_rank"])["recip_rank"] == 1.0


def test_ragmeter_names_use_the_same_kernels():
    got = trec_evaluate(QRELS, RUN, ["mrr", "ndcg@10", "ndcg(gain=linear)@3", "map@3", "precision@5",
                                     "recall@5", "hit_rate@3", "r_precision"], per_query=True)
    assert got["mrr"]["q1"] == pytest.approx(Q1["recip_rank"])
    # ragmeter's ndcg default is exponential gain: 2^g - 1
    assert got["ndcg@10"]["q1"] == pytest.approx((1 / 2 + 3 / L5) / (3 + 1 / L3 + 1 / 2))
    assert got["ndcg(gain=linear)@3"]["q1"] == pytest.approx(Q1["ndcg_cut_3"])
    assert got["map@3"]["q1"] == pytest.approx(Q1["map_cut_3"])
    assert got["precision@5"]["q1"] == pytest.approx(Q1["P_5"])
    assert got["recall@5"]["q1"] == pytest.approx(Q1["recall_5"])
    assert got["hit_rate@3"]["q1"] == 1.0
    assert got["r_precision"]["q1"] == pytest.approx(Q1["Rprec"])


def test_measure_syntax():
    names = [m.name for m in resolve_measures(["success.2,5", "P.10,5", "map", "recall_100", "ndcg_cut.23.4,10"])]
    assert names == ["map", "P_5", "P_10", "recall_100", "ndcg_cut_10", "ndcg_cut_23", "success_2", "success_5"]
    assert [m.name for m in resolve_measures("P")][:3] == ["P_5", "P_10", "P_15"]
    # explicit parameters replace the defaults; the first parameter list wins (trec_eval)
    assert [m.name for m in resolve_measures(["P", "P.7", "P.8"])] == ["P_7"]
    official = [m.name for m in resolve_measures("official")]
    assert official[:10] == ["runid", "num_q", "num_ret", "num_rel", "num_rel_ret", "map", "gm_map", "Rprec",
                             "bpref", "recip_rank"]
    assert official[10:21] == [f"iprec_at_recall_{x / 10:3.2f}" for x in range(11)]
    # fractional cutoffs named with %3.2f, sorted; double parameters name the column as typed
    assert [m.name for m in resolve_measures(["iprec_at_recall..5,.25", "utility.2,-1,0,0", "ndcg.1=3,2=9"])] == [
        "iprec_at_recall_0.25", "iprec_at_recall_0.50", "utility_2,-1,0,0", "ndcg_1=3,2=9"]
    assert [m.name for m in resolve_measures(["Rprec_mult.0.2", "iprec_at_recall_0.50", "bpref"])] == [
        "bpref", "iprec_at_recall_0.50", "Rprec_mult_0.20"]
    with pytest.raises(InvalidParameterError, match="takes no parameters"):
        resolve_measures("bpref.5")
    with pytest.raises(InvalidParameterError, match="level=gain"):
        resolve_measures("ndcg.1=3,2")
    with pytest.raises(InvalidParameterError, match="4 coefficients"):
        resolve_measures("utility.1,2")
    with pytest.raises(InvalidParameterError, match="duplicate"):
        resolve_measures("P.5,5.5")
    with pytest.raises(InvalidParameterError, match=">= 1"):
        resolve_measures("P.0")


def test_unknown_measure():
    with pytest.raises(UnknownMetricError) as err:
        trec_evaluate(QRELS, RUN, ["mapp"])
    assert "unknown measure 'mapp'" in str(err.value)
    assert "map" in err.value.suggestions
    with pytest.raises(UnknownMetricError, match="prefs"):
        resolve_measures("prefs_simp")  # a trec_eval measure that needs another relevance format
    with pytest.raises(UnknownMetricError, match="bpreff"):
        resolve_measures(["map", "bpreff"])  # never a silently shorter output
    with pytest.raises(UnknownMetricError):
        resolve_measures("faithfulness")  # a ragmeter metric that is not a retrieval measure


def test_every_input_form_gives_the_same_values(tmp_path):
    expected = trec_evaluate(QRELS, RUN, ["map", "P_5", "ndcg_cut_3", "num_q"])
    qdf = Qrels.from_dict(QRELS).to_dataframe()
    rdf = Run.from_dict(RUN).to_dataframe()
    Qrels.from_dict(QRELS).save(tmp_path / "q.txt")
    Run.from_dict(RUN).save(tmp_path / "r.txt.gz")
    forms = [
        (qdf, rdf),
        (pa.Table.from_pandas(qdf), pa.Table.from_pandas(rdf)),
        (qdf.astype({"qid": "category"}), rdf.astype({"qid": "category", "docid": "category"})),
        (Qrels.from_dict(QRELS), Run.from_dict(RUN)),
        (str(tmp_path / "q.txt"), tmp_path / "r.txt.gz"),
    ]
    for qrels, run in forms:
        assert trec_evaluate(qrels, run, ["map", "P_5", "ndcg_cut_3", "num_q"]) == expected


def test_duplicate_docids_are_errors_like_trec_eval():
    run = pd.DataFrame({"qid": ["q1", "q1", "q1"], "docid": ["a", "b", "a"], "score": [3.0, 2.0, 1.0]})
    with pytest.raises(InputError, match="'a' appears twice"):
        trec_evaluate(QRELS, run, ["map"])
    # trec_eval checks the ranking after -M: a duplicate below the cut is not seen
    assert trec_evaluate(QRELS, run, ["num_ret"], max_ret=2)["num_ret"] == 2
    qrels = pd.DataFrame({"qid": ["q1", "q1"], "docid": ["a", "a"], "rel": [1, 0]})
    with pytest.raises(InputError, match="judged twice"):
        trec_evaluate(qrels, RUN, ["map"])


def test_no_common_query_is_an_error():
    with pytest.raises(InputError, match="no query has both"):
        trec_evaluate({"1": {"a": 1}}, {"q1": {"a": 1.0}}, ["map"], missing="skip")


def test_result_object_renders_trec_eval_lines():
    result = evaluate_trec(QRELS, RUN, ["num_q", "P_5", "num_ret"], missing="skip")
    assert result.to_trec_lines(per_query=True) == [
        "num_ret               \tq1\t5",
        "P_5                   \tq1\t0.4000",
        "num_ret               \tq2\t1",
        "P_5                   \tq2\t0.0000",
        "num_q                 \tall\t2",
        "num_ret               \tall\t6",
        "P_5                   \tall\t0.2000",
    ]


def test_scores_are_compared_as_doubles_like_trec_eval():
    # 1.00000001 and 1.0 are one float32 (pytrec_eval would see a tie and rank b first by docid)
    qrels = {"q": {"b": 1}}
    run = {"q": {"a": 1.00000001, "b": 1.0}}
    assert trec_evaluate(qrels, run, ["recip_rank"])["recip_rank"] == 0.5


def test_categorical_run_columns_keep_ties_and_duplicate_rules():
    run = pd.DataFrame({"qid": ["q1"] * 4, "docid": ["a", "c", "b", "z"], "score": [1.0, 1.0, 1.0, 0.5]})
    cat = run.astype({"qid": "category", "docid": "category"})
    qrels = {"q1": {"a": 1}}
    # ties: c, b, a (docid descending) -> a at rank 3
    assert trec_evaluate(qrels, cat, ["recip_rank"])["recip_rank"] == pytest.approx(1 / 3)
    assert trec_evaluate(qrels, pa.Table.from_pandas(cat), ["recip_rank"])["recip_rank"] == pytest.approx(1 / 3)
    dup = pd.concat([run, run.iloc[[1]]]).astype({"docid": "category"})
    with pytest.raises(InputError, match="'c' appears twice"):
        trec_evaluate(qrels, dup, ["map"])


def test_trec_eval_measures_hand_computed():
    # ranking: e (not in qrels), a (rel), b (judged non-relevant), d (negative grade: pooled, unjudged), c (rel)
    qrels = {"q": {"a": 1, "b": 0, "c": 1, "d": -1}}
    run = {"q": {"e": 5.0, "a": 4.0, "b": 3.0, "d": 2.0, "c": 1.0}}
    got = trec_evaluate(qrels, run, ["bpref", "infAP", "map", "iprec_at_recall..0,.3,.5,.7,.8,1",
                                     "Rprec_mult.0.5,2,3", "unj.5", "set_F", "num_nonrel_judged_ret", "binG",
                                     "rbp", "rbp_resid", "relstring"], per_query=True)
    q = {name: col["q"] for name, col in got.items()}
    assert q["bpref"] == pytest.approx((1 + (1 - 1 / 1)) / 2)  # a: no non-relevant above; c: b above
    assert q["infAP"] == pytest.approx((1 / 2 + (1 / 5 + 4 / 5 * (3 / 4) * 0.5)) / 2)
    assert q["map"] == pytest.approx((1 / 2 + 2 / 5) / 2)
    # P(2) = .5, P(5) = .4; c = lround(f * 2): 0 -> 0 (from the first relevant on: .5), .3 -> 1, .5 -> 1,
    # .7 -> lround(1.4) = 1 (trec_eval 9: 2), .8 -> 2, 1 -> 2
    assert [q[f"iprec_at_recall_{f:3.2f}"] for f in (0, .3, .5, .7, .8, 1)] == pytest.approx(
        [.5, .5, .5, .5, .4, .4])
    # c = floor(m * 2 + .9): 1 -> P(1) = 0; 4 -> P(4) = 1/4; 6 > ret -> rr / 6
    assert [q["Rprec_mult_0.50"], q["Rprec_mult_2.00"], q["Rprec_mult_3.00"]] == pytest.approx([0, 1 / 4, 2 / 6])
    assert q["unj_5"] == pytest.approx(2 / 5)
    assert q["set_F"] == pytest.approx(2 * 0.4 * 1 / (0.4 + 1))
    assert q["num_nonrel_judged_ret"] == 1
    assert q["binG"] == pytest.approx((1 / math.log2(3) + 1 / math.log2(5)) / 2)
    assert q["rbp"] == pytest.approx(0.1 * (0.9 + 0.9**4))
    assert q["rbp_resid"] == pytest.approx(0.9**5 + 0.1 * (1 + 0.9**3))
    assert q["relstring"] == "-10.1"
    means = trec_evaluate(qrels, run, ["gm_map", "map"])
    assert means["gm_map"] == pytest.approx(means["map"])  # one query: exp(log(x)) = x


def test_one_entry_point_and_its_aliases() -> None:
    """``ragmeter.trec.evaluate`` keeps every per-query value; ``trec_evaluate`` (also
    ``ragmeter.trec_evaluate``) and ``evaluate_trec`` are the same run. Values by hand: q1 ranks
    d3 (grade 2), d1 (1), d2 (0): P_2 1, recip_rank 1; q2 ranks d5 (unjudged), d4 (1): P_2 1/2,
    recip_rank 1/2."""
    import ragmeter
    from ragmeter import trec

    qrels = {"q1": {"d1": 1, "d2": 0, "d3": 2}, "q2": {"d4": 1}}
    run = {"q1": {"d3": 0.9, "d1": 0.5, "d2": 0.1}, "q2": {"d5": 0.9, "d4": 0.3}}
    result = trec.evaluate(qrels, run, ["P_2", "recip_rank", "num_rel"])
    assert result.per_query() == {"P_2": {"q1": 1.0, "q2": 0.5}, "recip_rank": {"q1": 1.0, "q2": 0.5},
                                  "num_rel": {"q1": 2, "q2": 1}}
    means = {k: v for k, v in result.aggregate().items() if k != "runid"}
    assert means == {"P_2": 0.75, "recip_rank": 0.75, "num_rel": 3}
    assert ragmeter.trec_evaluate(qrels, run, ["P_2", "recip_rank", "num_rel"]) == means
    assert trec.trec_evaluate(qrels, run, ["P_2"], per_query=True) == {"P_2": {"q1": 1.0, "q2": 0.5}}
    assert trec.evaluate_trec(qrels, run, ["P_2"]).aggregate() == trec.evaluate(qrels, run, ["P_2"]).aggregate()
