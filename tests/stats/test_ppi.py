"""Prediction-powered inference: hand values, the ppi-python oracle, and coverage by simulation."""

from __future__ import annotations

import numpy as np
import pytest

from ragmeter.errors import InvalidParameterError
from ragmeter.stats import labels_only_interval, ppi_mean
from ragmeter.stats.ppi import ppi_batch

Z = 1.959963984540054


def test_classic_ppi_hand_computed():
    y, fl, fu = [1, 0, 1, 1], [0.9, 0.2, 0.8, 0.6], [0.7, 0.9, 0.1, 0.8, 0.6, 0.4]
    # theta = mean(f_U) + mean(Y - f_L) = 3.5/6 + (.1 - .2 + .2 + .4)/4 = .583333 + .125 = .708333
    # Var(f_U, ddof 1): deviations from .583333: .116667 .316667 -.483333 .216667 .016667 -.183333
    #   squares sum = .013611 + .100278 + .233611 + .046944 + .000278 + .033611 = .428333 -> / 5 = .085667
    # Var(Y - f_L) = var(.1, -.2, .2, .4), mean .125: .000625 + .105625 + .005625 + .075625 = .1875 / 3 = .0625
    # SE = sqrt(.085667 / 6 + .0625 / 4) = sqrt(.014278 + .015625) = sqrt(.029903) = .172925
    r = ppi_mean(y, fl, fu, lam=1)
    assert r.interval.estimate == pytest.approx(0.708333, abs=1e-6)
    assert r.se == pytest.approx(0.172925, abs=1e-6)
    assert r.interval.low == pytest.approx(0.708333 - Z * 0.172925, abs=1e-5)
    assert (r.lam, r.n, r.N, r.interval.method) == (1.0, 4, 6, "ppi")


def test_lambda_zero_is_the_labels_only_interval():
    rng = np.random.default_rng(0)
    y = rng.random(30)
    r = ppi_mean(y, rng.random(30), rng.random(100), lam=0)
    lo = labels_only_interval(y)
    assert r.interval.estimate == pytest.approx(lo.estimate)
    assert r.interval.ci == pytest.approx(lo.ci)


def test_power_tuning_matches_ppi_python():
    ppi_py = pytest.importorskip("ppi_py")
    rng = np.random.default_rng(1)
    n, big_n = 80, 1500
    y = (rng.random(n) < 0.6).astype(float)
    fl = np.clip(0.3 + 0.5 * y + rng.normal(0, 0.2, n), 0, 1)
    fu = np.clip(0.3 + 0.5 * (rng.random(big_n) < 0.6) + rng.normal(0, 0.2, big_n), 0, 1)
    ours = ppi_mean(y, fl, fu)
    # the same lambda and point estimate as ppi-python
    yc, fc = y - y.mean(), fl - fl.mean()
    lam = np.clip((yc * fc).mean() / ((1 + n / big_n) * np.concatenate([fl, fu]).var(ddof=1)), 0, 1)
    assert ours.lam == pytest.approx(lam, rel=1e-12)
    assert ours.interval.estimate == pytest.approx(
        float(ppi_py.ppi_mean_pointestimate(y, fl, fu, lam=lam)[0]), rel=1e-12)
    lo, hi = ppi_py.ppi_mean_ci(y, fl, fu, alpha=0.05)
    # ppi-python's variances use 1/n where ours use 1/(n-1): its half-width is a bit smaller
    ref_half = (float(hi[0]) - float(lo[0])) / 2
    ours_half = (ours.interval.high - ours.interval.low) / 2
    assert ref_half < ours_half < ref_half * np.sqrt(n / (n - 1)) * 1.0001
    assert ours.interval.estimate == pytest.approx((float(hi[0]) + float(lo[0])) / 2, rel=1e-10)


def test_edge_cases():
    assert ppi_mean([], [], [0.5]).interval.ci is None
    one = ppi_mean([1.0], [0.8], [0.7, 0.9])
    assert one.interval.method == "degenerate" and one.se is None
    no_unlabelled = ppi_mean([1, 0, 1], [0.9, 0.1, 0.8], [])
    assert no_unlabelled.lam == 0.0
    assert no_unlabelled.interval.ci == pytest.approx(labels_only_interval([1, 0, 1]).ci)
    constant_judge = ppi_mean([1, 0, 1], [0.5, 0.5, 0.5], [0.5, 0.5])
    assert constant_judge.lam == 0.0
    single_unlabelled = ppi_mean([1, 0, 1], [0.9, 0.1, 0.8], [0.7])
    assert single_unlabelled.interval.ci is not None
    with pytest.raises(InvalidParameterError, match="same length"):
        ppi_mean([1, 0], [0.5], [0.5])
    with pytest.raises(InvalidParameterError, match="lam: expected 'auto' or a number"):
        ppi_mean([1], [1], [1], lam="best")
    with pytest.raises(InvalidParameterError, match=r"lam: expected a number in \[0, 1\]"):
        ppi_mean([1], [1], [1], lam=1.5)


def _simulate(rng, trials, n, big_n, informative=True):
    """Binary human labels with mean 0.6; a biased, noisy judge (or pure noise)."""
    y_all = (rng.random((trials, n + big_n)) < 0.6).astype(float)
    noise = rng.normal(0, 0.2, (trials, n + big_n))
    f_all = np.clip((0.25 + 0.5 * y_all if informative else 0.5) + noise, 0, 1)
    return y_all[:, :n], f_all[:, :n], f_all[:, n:]


@pytest.mark.parametrize("lam", [None, 1.0])
def test_ppi_covers_the_true_mean_in_95_percent_of_1000_trials(lam):
    rng = np.random.default_rng(2023)
    y, fl, fu = _simulate(rng, 1000, 100, 2000)
    theta, se, _ = ppi_batch(y, fl, fu, lam)
    covered = np.abs(theta - 0.6) <= Z * se
    assert covered.mean() >= 0.93
    # narrower than labels-only when the judge is informative
    lo_se = y.std(axis=1, ddof=1) / np.sqrt(y.shape[1])
    assert np.median(se / lo_se) < 0.8


def test_ppi_plus_plus_is_not_hurt_by_a_useless_judge():
    rng = np.random.default_rng(7)
    y, fl, fu = _simulate(rng, 1000, 100, 2000, informative=False)
    theta, se, lam = ppi_batch(y, fl, fu)
    assert (np.abs(theta - 0.6) <= Z * se).mean() >= 0.93
    lo_se = y.std(axis=1, ddof=1) / np.sqrt(y.shape[1])
    assert np.median(lam) < 0.1
    assert np.median(se / lo_se) < 1.02


def test_public_function_equals_the_vectorised_kernel():
    rng = np.random.default_rng(3)
    y, fl, fu = _simulate(rng, 3, 50, 300)
    theta, se, lam = ppi_batch(y, fl, fu)
    for t in range(3):
        r = ppi_mean(y[t], fl[t], fu[t])
        assert (r.interval.estimate, r.se, r.lam) == pytest.approx((theta[t], se[t], lam[t]))
