"""Conformal risk control for abstention: hand example and the guarantee by simulation."""

from __future__ import annotations

import numpy as np
import pytest

from ragmeter.errors import InvalidParameterError
from ragmeter.stats import abstention_threshold
from ragmeter.stats.abstain import DEFAULT_GRID, crc_thresholds


def test_hand_computed_threshold():
    # n = 19, alpha = .1: the bound (losses + 1) / 20 <= .1 allows 1 answered bad sample.
    # Bad samples score .1 .2 .3 -> the lowest grid point t with #{bad, s >= t} <= 1 is .201
    s = [0.1, 0.2, 0.3] + [0.9] * 16
    y = [0, 0, 0] + [1] * 16
    r = abstention_threshold(s, y, alpha=0.1)
    assert r.threshold == pytest.approx(0.201)
    assert r.empirical_risk == pytest.approx(1 / 19)
    assert r.risk_bound == pytest.approx(2 / 20)
    assert r.answer_rate == pytest.approx(17 / 19)
    assert r.error_rate_when_answered == pytest.approx(1 / 17)


def test_too_few_labels_means_always_abstain():
    # alpha = .1 needs n >= 1/alpha - 1 = 9 before any answer can be certified
    r = abstention_threshold([0.9] * 5, [1] * 5, alpha=0.1)
    assert r.threshold is None and "at least 9" in r.note
    assert r.answer_rate == 0.0


def test_all_good_answers_everything():
    r = abstention_threshold(np.linspace(0, 1, 50), np.ones(50), alpha=0.1, scores_unlabelled=[0.3, 0.0])
    assert r.threshold == 0.0 and r.answer_rate == 1.0 and r.answer_rate_all == 1.0


def test_custom_grid_and_validation():
    r = abstention_threshold([2.0, 5.0, 8.0] * 10, [0, 1, 1] * 10, alpha=0.2, grid=[1, 3, 6])
    assert r.threshold == 3.0
    with pytest.raises(InvalidParameterError, match="expected a grid"):
        abstention_threshold([2.0, 5.0], [0, 1])
    with pytest.raises(InvalidParameterError, match="alpha"):
        abstention_threshold([0.2], [1], alpha=0)


def test_realised_risk_is_at_most_alpha_on_average():
    rng = np.random.default_rng(2024)
    trials, n, m, alpha = 2000, 200, 2000, 0.1

    def draw(size):
        bad = rng.random(size) < 0.3
        scores = np.where(bad, rng.beta(2, 5, size), rng.beta(5, 2, size))
        return scores, bad

    s_cal, bad_cal = draw((trials, n))
    thr = crc_thresholds(s_cal, bad_cal, DEFAULT_GRID, alpha)
    s_new, bad_new = draw((trials, m))
    realised = ((s_new >= thr[:, None]) & bad_new).mean(axis=1)
    # the guarantee: E[risk] <= alpha; CRC is also tight (E[risk] >= alpha - 1/(n+1) for continuous scores)
    assert realised.mean() <= alpha + 0.002  # Monte Carlo sd of the mean ~ 0.0002
    assert realised.mean() >= alpha - 0.02
    answered = (s_new >= thr[:, None]).mean()
    assert answered > 0.5
