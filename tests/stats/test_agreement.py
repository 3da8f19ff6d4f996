"""Judge-vs-human agreement: kappa, confusion matrix, ECE, rank correlations."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import stats

from ragmeter.errors import InvalidParameterError
from ragmeter.stats import agreement, cohen_kappa, confusion_matrix, expected_calibration_error


def test_kappa_hand_computed():
    # labels 1 1 0 0, judge 1 0 0 0: p_o = 3/4; p_e = P(y=1)P(j=1) + P(y=0)P(j=0) = .5*.25 + .5*.75 = .5
    # kappa = (.75 - .5) / (1 - .5) = .5
    assert cohen_kappa([1, 1, 0, 0], [1, 0, 0, 0]) == pytest.approx(0.5)
    assert cohen_kappa([1, 1], [1, 1]) is None  # p_e = 1: undefined
    assert cohen_kappa([], []) is None


def test_kappa_matches_sklearn():
    metrics = pytest.importorskip("sklearn.metrics")
    rng = np.random.default_rng(0)
    y = rng.integers(0, 3, 200)
    p = np.where(rng.random(200) < 0.7, y, rng.integers(0, 3, 200))
    assert cohen_kappa(y, p) == pytest.approx(metrics.cohen_kappa_score(y, p), abs=1e-12)


def test_confusion_matrix_hand_computed():
    cm = confusion_matrix([1, 1, 0, 0, 1], [1, 0, 0, 1, 1])
    # rows = labels (0, 1), cols = predictions: (0,0)=1, (0,1)=1, (1,0)=1, (1,1)=2
    assert cm == {"levels": [0.0, 1.0], "matrix": [[1, 1], [1, 2]]}


def test_ece_hand_computed():
    # 10 bins; scores .05 (bin 0), .15 (bin 1), .95 .95 (bin 9)
    # bin 0: |0 - .05| * 1/4; bin 1: |1 - .15| * 1/4; bin 9: |.5 - .95| * 2/4
    # ECE = .0125 + .2125 + .225 = .45
    res = expected_calibration_error([0, 1, 1, 0], [0.05, 0.15, 0.95, 0.95])
    assert res["ece"] == pytest.approx(0.45)
    assert [b["n"] for b in res["bins"]] == [1, 1, 2]
    # a score of exactly 1.0 falls in the last bin
    assert expected_calibration_error([1], [1.0], bins=4)["bins"][0]["low"] == 0.75
    assert expected_calibration_error([], [])["ece"] is None
    with pytest.raises(InvalidParameterError, match=r"values in \[0, 1\]"):
        expected_calibration_error([1], [3.0])


def test_agreement_binary():
    a = agreement([1, 1, 0, 0], [0.9, 0.4, 0.2, 0.1], threshold=0.5)
    # judge verdicts 1 0 0 0 -> accuracy 3/4, kappa .5 (as above)
    assert a["label_kind"] == "binary"
    assert a["accuracy"] == 0.75 and a["cohen_kappa"] == pytest.approx(0.5)
    assert a["confusion"]["matrix"] == [[2, 0], [1, 1]]
    assert a["ece"]["ece"] is not None


def test_agreement_graded_matches_scipy():
    rng = np.random.default_rng(1)
    y = rng.integers(1, 6, 60).astype(float)
    f = np.clip(y + rng.normal(0, 1, 60), 1, 5).round()
    a = agreement(y, f)
    assert a["label_kind"] == "graded"
    assert a["spearman"] == pytest.approx(stats.spearmanr(y, f).statistic)
    assert a["kendall"] == pytest.approx(stats.kendalltau(y, f).statistic)
    assert a["mae"] == pytest.approx(np.abs(f - y).mean())
    assert a["bias"] == pytest.approx(f.mean() - y.mean())
    assert "confusion" in a and a["ece"] is None  # 1..5 is not in [0, 1]


def test_agreement_graded_hand_computed():
    # y = .2 .5 .9, f = .1 .6 .8: same order -> Spearman 1, Kendall 1; MAE = (.1 + .1 + .1) / 3
    a = agreement([0.2, 0.5, 0.9], [0.1, 0.6, 0.8])
    assert a["spearman"] == pytest.approx(1.0) and a["kendall"] == pytest.approx(1.0)
    assert a["mae"] == pytest.approx(0.1)
    assert agreement([0.5, 0.5], [0.1, 0.2])["spearman"] is None  # constant labels
