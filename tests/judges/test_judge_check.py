"""judge-check: AUROC and DeLong interval by hand, the verdict rule, and the check end to end on loopback."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest

from ragmeter.errors import InputError, InvalidParameterError
from ragmeter.judges.check import Thresholds, bundled_path, judge_check, load_labelled, verdict
from ragmeter.stats.roc import auroc, auroc_interval

from .fake_server import Reply

# ---- AUROC and DeLong by hand ---------------------------------------------------------------------

# pos = [0.9, 0.8, 0.4], neg = [0.5, 0.3]; psi(x_i, y_j) = [x > y] + [x = y] / 2:
#   0.9: vs 0.5 -> 1, vs 0.3 -> 1      V10 = 1
#   0.8: vs 0.5 -> 1, vs 0.3 -> 1      V10 = 1
#   0.4: vs 0.5 -> 0, vs 0.3 -> 1      V10 = 1/2
#   V01(0.5) = (1 + 1 + 0) / 3 = 2/3,  V01(0.3) = 3/3 = 1
# A = 5 / 6
# S10 = var([1, 1, 1/2], ddof 1) = ((1/6)^2 + (1/6)^2 + (1/3)^2) / 2 = (1/36 + 1/36 + 4/36) / 2 = 1/12
# S01 = var([2/3, 1], ddof 1) = ((1/6)^2 + (1/6)^2) / 1 = 1/18
# Var = S10 / 3 + S01 / 2 = 1/36 + 1/36 = 1/18, se = sqrt(1/18) = 0.235702
# 95%: 5/6 -+ 1.959964 * 0.235702 = 0.833333 -+ 0.461968 -> [0.371365, 1.295301] -> clipped [0.371365, 1]
POS, NEG = [0.9, 0.8, 0.4], [0.5, 0.3]


def test_auroc_by_hand():
    assert auroc(POS, NEG) == pytest.approx(5 / 6)
    # ties count one half: pos [1, .5], neg [.5, 0] -> (1 + 1 + 1/2 + 1) / 4 = 0.875
    assert auroc([1.0, 0.5], [0.5, 0.0]) == pytest.approx(0.875)
    assert auroc([0.2], [0.2]) == pytest.approx(0.5)
    assert auroc([], [0.1]) is None and auroc([0.1], []) is None


def test_auroc_agrees_with_sklearn():
    sk = pytest.importorskip("sklearn.metrics")
    import numpy as np

    rng = np.random.default_rng(3)
    scores = rng.integers(0, 5, 40) / 4  # many ties
    labels = rng.integers(0, 2, 40)
    assert auroc(scores[labels == 1], scores[labels == 0]) == pytest.approx(sk.roc_auc_score(labels, scores))


def test_delong_interval_by_hand():
    iv = auroc_interval(POS, NEG)
    assert iv.estimate == pytest.approx(5 / 6)
    half = 1.959964 * math.sqrt(1 / 18)
    assert iv.low == pytest.approx(5 / 6 - half, abs=1e-5)
    assert iv.high == 1.0  # 5/6 + 0.462 > 1, clipped
    assert iv.method == "delong" and iv.n == 5
    # a 90% interval is narrower: z = 1.644854
    assert auroc_interval(POS, NEG, confidence=0.9).low == pytest.approx(5 / 6 - 1.644854 * math.sqrt(1 / 18),
                                                                           abs=1e-5)


def test_delong_edge_cases():
    perfect = auroc_interval([0.9, 0.8], [0.1, 0.2])
    assert perfect.ci == [1.0, 1.0] and perfect.method == "delong-degenerate"
    one_neg = auroc_interval([0.9, 0.8], [0.1])
    assert one_neg.estimate == 1.0 and one_neg.ci is None and one_neg.method == "none"
    empty = auroc_interval([], [0.1, 0.2])
    assert empty.estimate is None and empty.ci is None


# ---- the verdict rule -------------------------------------------------------------------------------

def _report(**kw):
    base = {"rows": 20, "errors": 0, "unit": "row", "n_pos": 10, "n_neg": 10, "auroc": 0.9, "auroc_ci": [0.8, 1.0],
            "graded": False, "spearman": None}
    return {**base, **kw}


def test_verdict_rule_each_condition():
    t = Thresholds()
    assert verdict(_report(), t)[0] == "usable"
    assert verdict(_report(auroc=0.74), t) == ("not usable", ["AUROC 0.740 < 0.75"])
    v, why = verdict(_report(auroc_ci=[0.5, 1.0]), t)
    assert v == "not usable" and "lower end 0.500 <= 0.5" in why[0]
    v, why = verdict(_report(n_neg=4), t)
    assert v == "not usable" and "4 negative" in why[0]
    v, why = verdict(_report(errors=3), t)  # 3 of 20 = 15% > 10%
    assert v == "not usable" and "errors on 3 of 20" in why[0]
    assert verdict(_report(errors=2), t)[0] == "usable"  # 10% is tolerated
    v, why = verdict(_report(graded=True, spearman={"rho": 0.4}), t)
    assert v == "not usable" and "rho 0.400 < 0.5" in why[0]
    assert verdict(_report(graded=True, spearman={"rho": 0.6}), t)[0] == "usable"


# ---- end to end on the loopback server ------------------------------------------------------------

def labelled_rows(n_good: int = 6, n_bad: int = 6) -> list[dict]:
    """Rows whose answers name their own label, so a scripted judge can be right or wrong on purpose."""
    rows = []
    for i in range(n_good + n_bad):
        good = i < n_good
        rows.append({"id": f"r{i}", "query": f"question {i}?", "contexts": [f"context {i} says fact {i}."],
                     "answer": f"answer {i} ({'GOOD' if good else 'BAD'}{i})",
                     "labels": {"faithful": good, "relevant": True, "correct": 5 if good else 1}})
    return rows


def write_rows(path: Path, rows: list[dict]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path


def say(yes_for: set[str]):
    """A rule answering "yes" to the direct faithfulness question for rows whose marker is in ``yes_for``."""
    def rule(call):
        for marker in yes_for:
            if f"({marker})" in call.user_text:
                return Reply(content="yes")
        return Reply(content="no")
    return rule


GOOD = {f"GOOD{i}" for i in range(6)}
BAD = {f"BAD{i}" for i in range(6, 12)}
M = "faithfulness(mode=direct)"


def test_separating_judge_is_usable(fake_llm, make_judge, tmp_path):
    data = write_rows(tmp_path / "l.jsonl", labelled_rows())
    fake_llm.rule = say(GOOD)
    check = judge_check(make_judge(), metrics=[M], data=data)
    (rep,) = check.metrics
    assert rep["auroc"] == 1.0 and rep["n_pos"] == 6 and rep["n_neg"] == 6 and rep["errors"] == 0
    assert rep["agreement"]["accuracy"] == 1.0
    assert rep["verdict"] == "usable"
    assert rep["calls"] == 12 and rep["requests"] == 12 and fake_llm.kinds()["ok"] == 12
    # rows for calibrate: the judge's score and the human label per sample
    assert {r["id"]: (r["score"], r["label"]) for r in check.rows[M]}["r0"] == (1.0, 1.0)
    assert {r["id"]: (r["score"], r["label"]) for r in check.rows[M]}["r7"] == (0.0, 0.0)


def test_judge_that_does_not_separate_is_not_usable(fake_llm, make_judge, tmp_path):
    data = write_rows(tmp_path / "l.jsonl", labelled_rows())
    fake_llm.rule = say(GOOD | BAD)  # "yes" to everything: every score 1 -> AUROC 1/2
    (rep,) = judge_check(make_judge(), metrics=[M], data=data).metrics
    assert rep["auroc"] == 0.5 and rep["verdict"] == "not usable"
    assert rep["agreement"]["accuracy"] == 0.5


def test_partly_separating_judge_auroc_by_hand(fake_llm, make_judge, tmp_path):
    # yes for the 6 good rows and for 2 of the 6 bad ones: pos scores 1 x6; neg 1 x2, 0 x4
    # AUROC = (6*4*1 + 6*2*(1/2)) / 36 = 30/36 = 5/6
    # DeLong: V10 = 4/6 + (2/6)/2 = 5/6 for every pos (S10 = 0); V01 = 1 for the four 0s, 1/2 for the two 1s
    # S01 = var([1,1,1,1,.5,.5], ddof 1) = (4*(1/6)^2 + 2*(1/3)^2) / 5 = (4/36 + 8/36) / 5 = 1/15
    # Var = 0/6 + (1/15)/6 = 1/90; low = 5/6 - 1.959964 * sqrt(1/90) = 0.626738
    data = write_rows(tmp_path / "l.jsonl", labelled_rows())
    fake_llm.rule = say(GOOD | {"BAD6", "BAD7"})
    (rep,) = judge_check(make_judge(), metrics=[M], data=data).metrics
    assert rep["auroc"] == pytest.approx(5 / 6)
    assert rep["auroc_ci"][0] == pytest.approx(5 / 6 - 1.959964 * math.sqrt(1 / 90), abs=1e-5)
    assert rep["verdict"] == "usable"  # 0.833 >= 0.75 and 0.627 > 0.5
    # kappa: judge yes 8 / no 4, human 6 / 6; agree on 10 of 12: p_o = 10/12, p_e = (8*6 + 4*6)/144 = 1/2
    assert rep["agreement"]["cohen_kappa"] == pytest.approx((10 / 12 - 0.5) / 0.5)


def test_judge_errors_are_counted_not_scored(fake_llm, make_judge, tmp_path):
    data = write_rows(tmp_path / "l.jsonl", labelled_rows())

    def rule(call):
        if "(GOOD0)" in call.user_text or "(GOOD1)" in call.user_text:
            return Reply.server_error(400, "bad request")  # not retried: a recorded error
        return say(GOOD)(call)
    fake_llm.rule = rule
    (rep,) = judge_check(make_judge(max_retries=0), metrics=[M], data=data).metrics
    assert rep["errors"] == 2 and rep["n_pos"] == 4 and rep["n"] == 10
    assert rep["verdict"] == "not usable" and "errors on 2 of 12" in rep["reasons"][0]


def test_missing_label_is_named_before_any_call(fake_llm, make_judge, tmp_path):
    rows = labelled_rows()
    del rows[3]["labels"]["faithful"]
    data = write_rows(tmp_path / "l.jsonl", rows)
    with pytest.raises(InputError) as info:
        judge_check(make_judge(), metrics=[M], data=data)
    assert "l.jsonl" in str(info.value) and "4" in str(info.value) and "labels.faithful" in str(info.value)
    assert not fake_llm.log


def test_unknown_metric_without_data(make_judge):
    with pytest.raises(InvalidParameterError, match="no bundled labelled set"):
        judge_check(make_judge(), metrics=["rouge_l"])


def test_bundled_sets_ship_as_package_data():
    samples, labels = load_labelled(bundled_path("judge_validation.jsonl"))
    assert len(samples) == 72 and all("faithful" in lab for lab in labels)
    samples, labels = load_labelled(bundled_path("passage_recall_validation.jsonl"), limit=5)
    assert len(samples) == 5 and all("complete" in lab for lab in labels)
    assert "ragmeter" in bundled_path("judge_validation.jsonl").parts


@pytest.mark.parametrize("module", ["ragmeter.stats.roc", "ragmeter.cli.judge_check"])
def test_docstring_examples(module):
    import doctest
    import importlib

    result = doctest.testmod(importlib.import_module(module), optionflags=doctest.NORMALIZE_WHITESPACE)
    assert result.failed == 0 and result.attempted >= 1


def graded_rows(n: int = 12) -> list[dict]:
    """Rows with a 1-5 grade (``correct``) and two chunks, the relevant one first on even rows."""
    rows = []
    for i in range(n):
        grade = 1 + i % 5
        chunks = [f"chunk RELEVANT {i}.", f"chunk OTHER {i}."]
        rel = [1, 0]
        if i % 2:
            chunks, rel = chunks[::-1], rel[::-1]
        rows.append({"id": f"g{i}", "query": f"question {i}?", "contexts": chunks, "reference": f"reference {i}.",
                     "answer": f"answer {i} (G{grade})", "labels": {"correct": grade, "context_relevance": rel}})
    return rows


def test_graded_label_rho_and_verdict(fake_llm, make_judge, tmp_path):
    # grades 1..5 cycle over 12 rows: 1,2,3,4,5,1,2,3,4,5,1,2 -> correct >= 4 on 4 rows (pos), 8 neg
    import re

    data = write_rows(tmp_path / "g.jsonl", graded_rows())
    fake_llm.rule = lambda call: {"reason": "r", "rating": 2 * int(re.search(r"\(G(\d)\)", call.user_text)[1])}
    (rep,) = judge_check(make_judge(), metrics=["correctness(scale=graded)"], data=data,
                         thresholds=Thresholds(min_per_class=4)).metrics
    # the judge's rating is 2 x the grade: a monotone map, so rho = 1 and every pos scores above every neg
    assert rep["spearman"]["rho"] == pytest.approx(1.0) and rep["auroc"] == 1.0
    assert (rep["n_pos"], rep["n_neg"]) == (4, 8) and rep["verdict"] == "usable"
    fake_llm.rule = lambda call: {"reason": "r", "rating": 5}  # one rating for all: no ranking at all
    (rep,) = judge_check(make_judge(), metrics=["correctness(scale=graded)"], data=data,
                         thresholds=Thresholds(min_per_class=4)).metrics
    assert rep["auroc"] == 0.5 and rep["spearman"] is None and rep["verdict"] == "not usable"
    assert any("Spearman rho n/a" in r for r in rep["reasons"])


def test_chunk_labels_and_position_profile(fake_llm, make_judge, tmp_path):
    data = write_rows(tmp_path / "g.jsonl", graded_rows())

    def rule(call):  # 9 for the relevant chunk, 1 for the other, in the order the prompt shows them
        text = call.user_text
        first_relevant = text.index("chunk RELEVANT") < text.index("chunk OTHER")
        r = [9, 1] if first_relevant else [1, 9]
        return {"ratings": [{"passage": k + 1, "reason": "r", "rating": r[k]} for k in range(2)]}
    fake_llm.rule = rule
    check = judge_check(make_judge(), metrics=["context_relevancy(scale=graded)"], data=data)
    (rep,) = check.metrics
    assert rep["unit"] == "chunk" and (rep["n_pos"], rep["n_neg"]) == (12, 12) and rep["auroc"] == 1.0
    assert rep["mean_pos"] == 9.0 and rep["mean_neg"] == 1.0 and rep["agreement"]["accuracy"] == 1.0
    # relevant first on the 6 even rows: judged "yes" (rating >= 5) at position 1 on 6 of 12, as the humans
    prof = check.positions["context_relevancy(scale=graded)"]
    assert prof[0] == {"position": "1", "n": 12, "judged_yes": 0.5, "human_yes": 0.5}
    assert prof[1]["judged_yes"] == 0.5 and prof[2]["n"] == 0
    # the per-row label for calibrate is the share of relevant chunks: 1/2 on every row
    assert {r["label"] for r in check.rows["context_relevancy(scale=graded)"]} == {0.5}
