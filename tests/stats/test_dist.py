"""ragmeter._dist against scipy.stats (the independent oracle) and closed forms, on a grid with the edges."""

from __future__ import annotations

import math
import warnings

import numpy as np
import pytest

from ragmeter import _dist as D

stats = pytest.importorskip("scipy.stats")

TOL = 1e-10  # relative; the worst cases measured are in the comments
pytestmark = pytest.mark.filterwarnings("ignore::RuntimeWarning")  # scipy on constant or near-constant input


def close(got: float, want: float, tol: float = TOL) -> bool:
    if math.isnan(want):
        return math.isnan(got)
    return got == want or abs(got - want) <= tol * abs(want)


DFS = (1, 2, 3, 5, 30, 100, 2.5, 0.7, 1e4, 1e6)
TS = (0.0, 0.1, 0.5, 1.0, 2.0, 3.0, 5.0, 10.0, 30.0, 100.0, 1e5, -1.0, -5.0, -30.0, math.inf, -math.inf)


@pytest.mark.parametrize("df", DFS)
def test_t_sf_and_cdf_match_scipy(df):
    # worst seen: 4e-11 at df = 1e6 (t = 3); <= 2e-15 for df <= 100
    for t in TS:
        assert close(D.t_sf(t, df), float(stats.t.sf(t, df))), (t, df)
        assert close(D.t_cdf(t, df), float(stats.t.cdf(t, df))), (t, df)


@pytest.mark.parametrize("t", (1e-8, 1e-3, 0.3, 1.0, 7.0, 1e3, 1e8, -1e-8, -2.0))
def test_t_sf_closed_forms_at_one_and_two_df(t):
    # Cauchy: P(T > t) = 1/2 - atan(t)/pi = atan(1/t)/pi for t > 0; df = 2, s = sqrt(2 + t^2):
    # 1/2 - t/(2s) = 1/(s (s + t)). scipy itself is off by 3e-9 at df = 1, t = 1e-8, so the
    # closed forms (each written without cancellation) are the oracle here.
    s = math.sqrt(2 + t * t)
    cauchy, two = (math.atan2(1, t) / math.pi, 1 / (s * (s + t))) if t > 0 else (0.5 - math.atan(t) / math.pi,
                                                                                  0.5 - t / (2 * s))
    assert close(D.t_sf(t, 1), cauchy, 1e-14)
    assert close(D.t_sf(t, 2), two, 1e-14)


def test_t_sf_undefined():
    assert math.isnan(D.t_sf(math.nan, 3)) and math.isnan(D.t_sf(1.0, 0)) and math.isnan(D.t_sf(1.0, math.nan))
    assert D.t_sf(0.0, 7) == 0.5


def test_betainc_matches_scipy():
    special = pytest.importorskip("scipy.special")
    for a in (0.5, 1.0, 2.5, 10.0, 300.0):
        for b in (0.5, 1.0, 3.0, 50.0):
            for x in (0.0, 1e-12, 0.01, 0.3, 0.5, 0.9, 0.999, 1.0):
                assert close(D.betainc(a, b, x, 1 - x), float(special.betainc(a, b, x)), 1e-12), (a, b, x)


def test_chi2_sf_1_matches_scipy():
    for x in (0.0, 1e-12, 1e-3, 0.5, 1.0, 3.841458820694124, 10.0, 50.0, 200.0, 700.0):
        assert close(D.chi2_sf_1(x), float(stats.chi2.sf(x, 1)), 1e-13), x


def test_binom_test_half_matches_scipy_on_every_k():
    # worst seen: 5e-14 up to n = 20,000 (exact sums: what is left is scipy's rounding), 4e-11 beyond (betainc)
    for n in (*range(1, 81), 99, 100, 101, 150, 199, 200):
        for k in range(n + 1):
            assert close(D.binom_test_half(k, n), float(stats.binomtest(k, n, 0.5).pvalue), 1e-12), (k, n)
    for n, k in ((1000, 400), (5000, 2400), (10000, 4700), (2000, 3), (3000, 0), (20_000, 9_800),
                 (20_001, 9_800), (50_000, 24_700), (100_000, 49_000)):  # exact sums, then betainc
        assert close(D.binom_test_half(k, n), float(stats.binomtest(k, n, 0.5).pvalue)), (k, n)


def test_binom_test_half_by_hand():
    assert D.binom_test_half(1, 4) == 2 * 5 / 16
    assert D.binom_test_half(0, 10) == 2 / 1024
    assert D.binom_test_half(3, 10) == 2 * (1 + 10 + 45 + 120) / 1024
    assert D.binom_test_half(2, 4) == 1.0 and D.binom_test_half(0, 1) == 1.0
    with pytest.raises(ValueError):
        D.binom_test_half(5, 4)


def _samples(seed: int, count: int):
    rng = np.random.default_rng(seed)
    for i in range(count):
        n = int(rng.integers(2, 60)) if i < count - 20 else int(rng.integers(60, 400))
        if i % 3 == 0:  # ties on both sides
            a, b = rng.integers(0, 4, n).astype(float), rng.integers(0, 5, n).astype(float)
        else:
            a = rng.normal(size=n)
            b = a + rng.normal(size=n) * rng.uniform(0, 3)
        if i % 7 == 0:
            b = a.copy()
        if i % 11 == 0:
            b = -a
        yield a, b


def test_spearman_matches_scipy():
    # worst seen: 1.4e-13 (p-value)
    for a, b in _samples(0, 300):
        rho, p = D.spearman(a, b)
        want = stats.spearmanr(a, b)
        assert close(rho, float(want.statistic), 1e-12) and close(p, float(want.pvalue)), (a, b)


def test_kendall_tau_b_matches_scipy():
    # worst seen: 1.3e-13; both the exact (no ties, n <= 33) and the asymptotic p-value are reached
    for a, b in _samples(1, 300):
        tau, p = D.kendall_tau_b(a, b)
        want = stats.kendalltau(a, b)
        assert close(tau, float(want.statistic), 1e-12) and close(p, float(want.pvalue)), (a, b)


def test_kendall_exact_at_the_edges():
    for n in (2, 3, 33, 34, 100, 171, 172, 300):
        x = np.arange(n, dtype=float)
        for y in (x, -x, np.concatenate(([1.0, 0.0], x[2:]))):
            assert close(D.kendall_tau_b(x, y)[1], float(stats.kendalltau(x, y).pvalue), 1e-12), n
    # n = 4, one pair swapped: 1 inversion; P(<= 1 of 24 orders) = 4/24, two-sided 1/3
    assert D.kendall_tau_b([1, 2, 3, 4], [2, 1, 3, 4]) == pytest.approx((4 / 6, 1 / 3), rel=1e-15)


@pytest.mark.parametrize("x, y", [([1.0], [2.0]), ([1.0, 1.0, 1.0], [1.0, 2.0, 3.0]), ([1, 2, 3], [5, 5, 5]),
                                  ([1.0, math.nan, 3.0], [1.0, 2.0, 3.0]), ([1.0, 2.0], [3.0, 1.0])])
def test_rank_correlations_where_scipy_gives_nan(x, y):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        sp, kt = stats.spearmanr(x, y), stats.kendalltau(x, y)
    assert all(close(g, float(w), 1e-15) for g, w in zip(D.spearman(x, y), (sp.statistic, sp.pvalue), strict=True))
    assert all(close(g, float(w), 1e-15) for g, w in zip(D.kendall_tau_b(x, y), (kt.statistic, kt.pvalue),
                                                        strict=True))


def test_average_ranks_match_scipy():
    rng = np.random.default_rng(2)
    for n in (1, 2, 5, 50):
        x = rng.integers(0, 4, n).astype(float)
        np.testing.assert_array_equal(D.average_ranks(x), stats.rankdata(x))


def test_welch_matches_scipy():
    # worst seen: 2e-14
    rng = np.random.default_rng(3)
    for i in range(300):
        na, nb = (int(v) for v in rng.integers(2, 80, 2))
        a, b = rng.normal(size=na) * rng.uniform(0.1, 3), rng.normal(size=nb) + rng.uniform(-2, 2)
        if i % 5 == 0:
            a = np.full(na, 0.5)  # one side constant
        if i % 9 == 0:
            a = rng.integers(0, 2, na).astype(float)
        assert close(D.welch_p(a, b), float(stats.ttest_ind(a, b, equal_var=False).pvalue), 1e-12), (a, b)
    assert math.isnan(D.welch_p(np.ones(3), np.zeros(4)))  # no variance on either side
