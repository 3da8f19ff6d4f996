"""calibrate(): agreement, the three intervals, abstention, label files and the CLI."""

from __future__ import annotations

import csv
import json

import numpy as np
import pytest
from click.testing import CliRunner

from ragmeter.cli import main
from ragmeter.errors import InputError, InvalidParameterError
from ragmeter.stats import calibrate, labels_only_interval, ppi_mean


@pytest.fixture
def judged(make_run, tmp_path):
    """300 samples judged for faithfulness; 80 of them labelled by humans (CSV), plus 2 stray labels."""
    rng = np.random.default_rng(0)
    truth = (rng.random(300) < 0.7).astype(float)
    judge = np.clip(0.2 + 0.6 * truth + rng.normal(0, 0.15, 300), 0, 1).round(3)
    run = make_run("run", {f"s{i}": {"faithfulness": float(judge[i]), "mrr": 0.5} for i in range(300)})
    labels = tmp_path / "labels.csv"
    with open(labels, "w", newline="") as fh:
        w = csv.writer(fh)
        w.writerow(["id", "metric", "label"])
        for i in range(80):
            w.writerow([f"s{i}", "faithfulness", int(truth[i])])
        w.writerow(["ghost1", "faithfulness", 1])
        w.writerow(["ghost2", "faithfulness", 0])
        w.writerow(["s5", "answer_relevancy", 1])  # a metric the run lacks
    return run, labels, truth, judge


def test_report_numbers_match_the_building_blocks(judged):
    run, labels, truth, judge = judged
    c = calibrate(run, labels)
    rep = c.metrics["faithfulness"]
    assert (rep["n_labelled"], rep["n_unlabelled"]) == (80, 220)
    assert rep["labels_without_score"] == {"count": 2, "ids": ["ghost1", "ghost2"]}
    assert c.metrics_without_scores == ["answer_relevancy"]
    y, fl, fu = truth[:80], judge[:80], judge[80:]
    ppi = ppi_mean(y, fl, fu)
    assert rep["intervals"]["ppi"]["ci"] == pytest.approx(ppi.interval.ci)
    assert rep["intervals"]["labels_only"]["ci"] == pytest.approx(labels_only_interval(y).ci)
    assert rep["intervals"]["judge_only"]["estimate"] == pytest.approx(judge.mean())
    assert rep["judge_bias"] == pytest.approx((fl - y).mean())
    a = rep["agreement"]
    assert a["label_kind"] == "binary"
    assert a["accuracy"] == pytest.approx(((fl >= 0.5) == y).mean())
    assert rep["intervals"]["ppi_width_ratio"] < 1  # an informative judge narrows the interval
    ab = rep["abstention"]
    assert ab["alpha"] == 0.1 and ab["risk_bound"] <= 0.1 and ab["threshold"] is not None
    assert 0 < ab["answer_rate_all"] <= 1


def test_dict_inputs_and_graded_labels():
    scores = {"correctness": {f"s{i}": i / 20 for i in range(21)}}
    labels = {"correctness": {"s0": 0.0, "s5": 0.2, "s10": 0.6, "s15": 0.7, "s20": 1.0}}
    rep = calibrate(scores, labels).metrics["correctness"]
    a = rep["agreement"]
    assert a["label_kind"] == "graded" and a["spearman"] == pytest.approx(1.0)
    # judge .0 .25 .5 .75 1.0 vs labels 0 .2 .6 .7 1: MAE = (0 + .05 + .1 + .05 + 0) / 5 = .04
    assert a["mae"] == pytest.approx(0.04)


def test_validation(judged, tmp_path):
    run, labels, *_ = judged
    with pytest.raises(InvalidParameterError, match="expected labels for a metric the scores have"):
        calibrate(run, {"nope": {"s1": 1.0}})
    with pytest.raises(InvalidParameterError, match="metrics: expected metrics with both"):
        calibrate(run, labels, metrics=["mrr"])
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"id": "s1", "metric": "faithfulness", "label": "yes"}\n')
    with pytest.raises(InputError, match=r"bad.jsonl:1: field 'label': expected a number"):
        calibrate(run, bad)
    dup = tmp_path / "dup.csv"
    dup.write_text("id,label\ns1,1\ns1,0\n")
    with pytest.raises(InputError, match="two labels"):
        calibrate(run, dup, metric="faithfulness")


def test_scores_from_a_long_format_file(tmp_path):
    f = tmp_path / "scores.jsonl"
    rows = [{"id": f"s{i}", "metric": "faithfulness", "score": (i % 10) / 10} for i in range(40)]
    f.write_text("".join(json.dumps(r) + "\n" for r in rows))
    labels = {"faithfulness": {f"s{i}": float(i % 10 >= 5) for i in range(20)}}
    rep = calibrate(f, labels).metrics["faithfulness"]
    assert rep["agreement"]["accuracy"] == 1.0 and rep["agreement"]["cohen_kappa"] == 1.0


def test_cli(judged, tmp_path):
    run, labels, *_ = judged
    res = CliRunner().invoke(main, ["calibrate", str(run), "--labels", str(labels), "--format", "json"],
                             catch_exceptions=False)
    assert res.exit_code == 0, res.output
    data = json.loads(res.output)
    assert data["metrics"]["faithfulness"]["n_labelled"] == 80
    table = CliRunner().invoke(main, ["calibrate", str(run), "-l", str(labels)], catch_exceptions=False).output
    assert "PPI++" in table and "labels only" in table and "ghost1" in table
    md = CliRunner().invoke(main, ["calibrate", str(run), "-l", str(labels), "--format", "markdown",
                                   "--lambda", "1"], catch_exceptions=False).output
    assert "| `faithfulness` | PPI++ |" in md and "lambda=1.000" in md
    bad = CliRunner().invoke(main, ["calibrate", str(run), "-l", str(labels), "--lambda", "x"])
    assert bad.exit_code == 2 and "--lambda" in bad.output


@pytest.mark.parametrize(("metric", "bad_scores", "good_score", "want", "rule"), [
    # higher is better: the 3 unacceptable rows (label 0) score 0.1, 0.2, 0.3, the 16 others 0.9.
    # alpha 0.1, n 19: (answered bad + 1) / 20 <= 0.1 allows 1 bad row answered; the lowest grid
    # threshold answering only the 0.3 one is 0.201 ("score >= 0.201")
    ("faithfulness", [0.1, 0.2, 0.3], 0.9, 0.201, ">="),
    # lower is better (label 1 = hallucinated): the 3 hallucinated rows score 0.9, 0.8, 0.7, the 16
    # others 0.1. Answering score <= t may take 1 of them: the 0.7 one, not 0.8, so the highest grid
    # threshold is 0.799 ("score <= 0.799"), answering 17 of 19 rows
    ("hallucination_rate", [0.9, 0.8, 0.7], 0.1, 0.799, "<="),
])
def test_abstention_follows_the_metrics_direction(metric, bad_scores, good_score, want, rule):
    higher = rule == ">="
    scores = {f"b{i}": s for i, s in enumerate(bad_scores)} | {f"g{i}": good_score for i in range(16)}
    labels = {f"b{i}": 0.0 if higher else 1.0 for i in range(3)} | {f"g{i}": 1.0 if higher else 0.0
                                                                     for i in range(16)}
    c = calibrate({metric: scores}, {metric: labels}, alpha=0.1)
    ab = c.metrics[metric]["abstention"]
    assert ab["threshold"] == pytest.approx(want, abs=1e-12) and ab["answer_when"] == f"score {rule} threshold"
    assert ab["answer_rate"] == pytest.approx(17 / 19) and ab["empirical_risk"] == pytest.approx(1 / 19)
    assert ab["risk_bound"] == pytest.approx(2 / 20)
    assert f"answer when score {rule} {want:g}" in c.to_markdown()
