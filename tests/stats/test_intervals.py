"""Confidence intervals: Wilson, the vectorised bootstrap (percentile and BCa), metric_ci policy."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats

from ragmeter.errors import InvalidParameterError
from ragmeter.stats import bootstrap_ci, bootstrap_means, metric_ci, wilson_interval

Z = 1.959963984540054


def test_wilson_hand_computed_zero_successes():
    # k = 0, n = 10: centre = (z^2/20) / (1 + z^2/10) = 0.192073 / 1.384146 = 0.138766
    # half = z / 1.384146 * sqrt(z^2 / 400) = 1.416009 * 0.097998 = 0.138766 -> [0, 0.277533]
    iv = wilson_interval(0, 10)
    assert iv.low == 0.0
    assert iv.high == pytest.approx(0.2775328, abs=1e-6)
    assert (iv.estimate, iv.n, iv.method) == (0.0, 10, "wilson")


def test_wilson_hand_computed_three_of_four():
    # p = .75, z^2 = 3.841459, denom = 1 + z^2/4 = 1.960365
    # centre = (.75 + z^2/8) / denom = 1.230182 / 1.960365 = 0.627527
    # half = z / denom * sqrt(.75 * .25 / 4 + z^2 / 64) = 0.999796 * sqrt(0.046875 + 0.060023) = 0.326885
    iv = wilson_interval(3, 4)
    assert iv.low == pytest.approx(0.627527 - 0.326885, abs=2e-6)
    assert iv.high == pytest.approx(0.627527 + 0.326885, abs=2e-6)


@pytest.mark.parametrize(("k", "n"), [(0, 1), (1, 1), (7, 20), (20, 20), (512, 1000)])
def test_wilson_matches_statsmodels_and_the_formula(k, n):
    p = k / n
    centre = (p + Z * Z / (2 * n)) / (1 + Z * Z / n)
    half = Z / (1 + Z * Z / n) * math.sqrt(p * (1 - p) / n + Z * Z / (4 * n * n))
    iv = wilson_interval(k, n)
    assert iv.low == pytest.approx(max(0.0, centre - half), abs=1e-12)
    assert iv.high == pytest.approx(min(1.0, centre + half), abs=1e-12)
    sm = pytest.importorskip("statsmodels.stats.proportion")
    lo, hi = sm.proportion_confint(k, n, alpha=0.05, method="wilson")
    assert (iv.low, iv.high) == pytest.approx((lo, hi), abs=1e-9)


def test_wilson_n_zero_and_bad_input():
    assert wilson_interval(0, 0).ci is None
    with pytest.raises(InvalidParameterError, match="expected an integer <= n"):
        wilson_interval(3, 2)
    with pytest.raises(InvalidParameterError, match=r"confidence: expected a number in \(0, 1\)"):
        wilson_interval(1, 2, confidence=1.0)


def _discrete(n, seed=1):
    # a skewed metric with few distinct values (the exact multinomial path)
    return np.round(np.random.default_rng(seed).beta(0.7, 2.0, n), 2)


@pytest.mark.parametrize("method", ["percentile", "bca"])
def test_bootstrap_agrees_with_scipy(method):
    x = _discrete(40)
    se = x.std() / math.sqrt(x.size)
    ours = bootstrap_ci(x, method=method, n_resamples=50_000, seed=3)
    ref = stats.bootstrap((x,), np.mean, method="BCa" if method == "bca" else "percentile",
                          n_resamples=50_000, rng=np.random.default_rng(4)).confidence_interval
    # two Monte Carlo estimates of the same bounds (each with a Monte Carlo sd of ~0.02-0.03 se in
    # the skewed tails): they agree to a small fraction of the standard error
    assert ours.low == pytest.approx(ref.low, abs=0.12 * se)
    assert ours.high == pytest.approx(ref.high, abs=0.12 * se)
    assert ours.method == f"bootstrap-{method}"


def test_bootstrap_means_have_the_exact_bootstrap_moments():
    # E*[mean*] = mean(x); Var*[mean*] = var(x, ddof=0) / n, for index resampling
    x = _discrete(500)
    boot = bootstrap_means(x, n_resamples=8000, seed=0)
    se = x.std() / math.sqrt(x.size)
    assert boot.mean() == pytest.approx(x.mean(), abs=4 * se / math.sqrt(boot.size))
    assert boot.std() / se == pytest.approx(1.0, abs=0.04)


def test_binned_resampler_keeps_the_moments_and_the_bounds():
    # continuous, skewed scores: more distinct values than max_cells -> binned resampler
    x = np.random.default_rng(7).lognormal(0, 1, 1500) / 20
    se = x.std() / math.sqrt(x.size)
    binned = bootstrap_means(x, n_resamples=6000, seed=1)
    exact = bootstrap_means(x, n_resamples=6000, seed=2, max_cells=10**6)  # one cell per distinct value
    assert binned.mean() == pytest.approx(x.mean(), abs=4 * se / math.sqrt(binned.size))
    assert binned.std() / se == pytest.approx(1.0, abs=0.05)
    # the bounds of two Monte Carlo runs (B = 6000) differ by ~0.05 se on their own
    for q in (0.025, 0.975):
        assert np.quantile(binned, q) == pytest.approx(np.quantile(exact, q), abs=0.15 * se)


def test_bootstrap_is_seeded_and_reproducible():
    x = _discrete(100)
    assert bootstrap_ci(x, seed=5) == bootstrap_ci(x, seed=5)
    assert bootstrap_ci(x, seed=5).low != bootstrap_ci(x, seed=6).low
    np.testing.assert_array_equal(bootstrap_means(x, seed=9), bootstrap_means(x, seed=9))


def test_bootstrap_edge_cases():
    assert bootstrap_ci([]).ci is None and bootstrap_ci([]).method == "none"
    one = bootstrap_ci([0.3])
    assert (one.ci, one.method, one.n) == ([0.3, 0.3], "degenerate", 1)
    const = bootstrap_ci([0.4, 0.4, 0.4])
    assert const.ci == pytest.approx([0.4, 0.4]) and const.width == 0
    nan = bootstrap_ci([0.2, float("nan"), 0.6])
    assert nan.n == 2 and nan.estimate == pytest.approx(0.4)


def test_bootstrap_other_statistic_goes_to_scipy():
    x = _discrete(30)
    iv = bootstrap_ci(x, statistic=np.median, method="percentile", n_resamples=2000, seed=0)
    assert iv.estimate == np.median(x)
    assert iv.low <= iv.estimate <= iv.high
    assert iv == bootstrap_ci(x, statistic=np.median, method="percentile", n_resamples=2000, seed=0)


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"values": [[1, 2]]}, "expected a 1-D sequence"),
        ({"values": "abc"}, "expected a 1-D sequence"),
        ({"values": [1, math.inf]}, "got an infinity"),
        ({"values": [1, 2], "method": "bc"}, "method: expected one of"),
        ({"values": [1, 2], "n_resamples": 0}, "n_resamples: expected an integer >= 1"),
        ({"values": [1, 2], "seed": -1}, "seed: expected an integer >= 0"),
        ({"values": [1, 2], "confidence": 95}, "confidence: expected a number"),
    ],
)
def test_bootstrap_validates(kwargs, message):
    values = kwargs.pop("values")
    with pytest.raises(InvalidParameterError, match=message):
        bootstrap_ci(values, **kwargs)


def test_metric_ci_policy():
    assert metric_ci([1, 0, 1, 1]).method == "wilson"
    assert metric_ci([1.0]).method == "wilson"  # a proportion: Wilson is defined for n = 1
    assert metric_ci([0.5]).method == "degenerate"
    assert metric_ci([]).method == "none"
    assert metric_ci([float("nan")]).n == 0
    assert metric_ci([0.1, 0.5, 0.9]).method == "bootstrap-bca"
    assert metric_ci([0, 1, 1], method="bca").method == "bootstrap-bca"
    with pytest.raises(InvalidParameterError, match="only 0 and 1"):
        metric_ci([0.5, 1], method="wilson")


def test_bca_covers_at_nominal_rate_on_a_skewed_metric():
    # 300 seeded experiments, n = 60 from a skewed 0..1 metric: coverage near 95%
    rng = np.random.default_rng(11)
    true_mean = 0.7 / 2.7
    hits = 0
    for _ in range(300):
        x = rng.beta(0.7, 2.0, 60)
        iv = bootstrap_ci(x, n_resamples=1000, seed=0)
        hits += iv.low <= true_mean <= iv.high
    assert 0.90 <= hits / 300 <= 0.99
