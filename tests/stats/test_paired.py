"""Paired tests, effect size and Holm: hand-computed values and agreement with scipy / statsmodels."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import stats

from ragmeter.errors import InvalidParameterError
from ragmeter.stats import cohens_dz, holm, mcnemar_test, paired_permutation_test, paired_ttest


def test_permutation_hand_computed():
    # d = 1, 1, 1: T = 1; of the 8 sign patterns only +++ and --- reach |T| >= 1 -> 2/8
    r = paired_permutation_test([0, 0, 0], [1, 1, 1])
    assert (r.p_value, r.statistic, r.method) == (0.25, 1.0, "permutation-exact")
    # d = 1, 2, 0: zeros cannot change T; patterns of (1, 2): T = 1, 1/3, -1/3, -1
    # two-sided: |T| >= 1 -> 2/4; greater: T >= 1 -> 1/4; less: T <= 1 -> 4/4
    a, b = [0, 0, 5], [1, 2, 5]
    assert paired_permutation_test(a, b).p_value == 0.5
    assert paired_permutation_test(a, b, alternative="greater").p_value == 0.25
    assert paired_permutation_test(a, b, alternative="less").p_value == 1.0


def test_permutation_all_zero_and_empty():
    assert paired_permutation_test([0.3, 0.5], [0.3, 0.5]).p_value == 1.0
    assert paired_permutation_test([], []).p_value is None


@pytest.mark.parametrize("alternative", ["two-sided", "greater", "less"])
def test_permutation_exact_matches_scipy(alternative):
    rng = np.random.default_rng(0)
    a = rng.random(11)
    b = a + rng.normal(0.15, 0.3, 11)
    ours = paired_permutation_test(a, b, alternative=alternative)
    ref = stats.permutation_test((a, b), lambda x, y, axis: np.mean(y - x, axis=axis), vectorized=True,
                                 permutation_type="samples", n_resamples=np.inf, alternative=alternative)
    assert ours.method == "permutation-exact"
    assert ours.p_value == pytest.approx(ref.pvalue, abs=1e-12)


def test_permutation_exact_with_ties_matches_scipy():
    # discrete scores give tied statistics: the tolerance must count them as "as extreme"
    a = np.array([0.0, 0.5, 0.5, 1.0, 0.0, 0.5, 1.0, 0.0])
    b = np.array([0.5, 0.5, 1.0, 1.0, 0.5, 0.0, 1.0, 0.5])
    ours = paired_permutation_test(a, b)
    ref = stats.permutation_test((a, b), lambda x, y, axis: np.mean(y - x, axis=axis), vectorized=True,
                                 permutation_type="samples", n_resamples=np.inf)
    assert ours.p_value == pytest.approx(ref.pvalue, abs=1e-12)


def test_permutation_monte_carlo_is_reproducible_and_close_to_exact():
    rng = np.random.default_rng(1)
    a = rng.random(20)
    b = a + rng.normal(0.1, 0.3, 20)
    exact = paired_permutation_test(a, b, exact=True).p_value  # 2**20 patterns
    mc1 = paired_permutation_test(a, b, exact=False, n_resamples=40_000, seed=3)
    mc2 = paired_permutation_test(a, b, exact=False, n_resamples=40_000, seed=3)
    assert mc1 == mc2
    assert mc1.method == "permutation-mc"
    # Monte Carlo sd is sqrt(p(1-p)/B) <= 0.0025
    assert mc1.p_value == pytest.approx(exact, abs=0.01)


def test_permutation_monte_carlo_never_returns_zero():
    d = np.linspace(1, 2, 40)
    r = paired_permutation_test(np.zeros(40), d, n_resamples=999, seed=0)
    assert r.p_value == pytest.approx(1 / 1000)


def test_permutation_validation():
    with pytest.raises(InvalidParameterError, match="same length"):
        paired_permutation_test([1, 2], [1])
    with pytest.raises(InvalidParameterError, match="alternative: expected one of"):
        paired_permutation_test([1], [2], alternative="bigger")
    with pytest.raises(InvalidParameterError, match="at most 24"):
        paired_permutation_test(np.zeros(30), np.arange(1, 31), exact=True)
    with pytest.raises(InvalidParameterError, match="without NaN"):
        paired_permutation_test([1, float("nan")], [1, 2])


def test_ttest_hand_computed():
    # d = 1, 2, 2: mean 5/3, s_d = sqrt(((-2/3)^2 + 2 (1/3)^2) / 2) = sqrt(1/3) = 0.57735
    # t = (5/3) / (0.57735 / sqrt 3) = (5/3) / (1/3) = 5; df = 2; p = 2 * t.sf(5, 2) = 0.037750
    r = paired_ttest([1, 2, 3], [2, 4, 5])
    assert r.statistic == pytest.approx(5.0)
    assert r.p_value == pytest.approx(0.0377504, abs=1e-6)
    assert r.extra["df"] == 2


@pytest.mark.parametrize("alternative", ["two-sided", "greater", "less"])
def test_ttest_matches_scipy(alternative):
    rng = np.random.default_rng(2)
    a = rng.random(25)
    b = a + rng.normal(0.05, 0.2, 25)
    ours = paired_ttest(a, b, alternative=alternative)
    ref = stats.ttest_rel(b, a, alternative=alternative)
    assert ours.statistic == pytest.approx(ref.statistic, rel=1e-12)
    assert ours.p_value == pytest.approx(ref.pvalue, rel=1e-10)


def test_ttest_edge_cases():
    assert paired_ttest([1], [2]).p_value is None
    assert paired_ttest([1, 2], [1, 2]).p_value == 1.0
    r = paired_ttest([1, 2], [2, 3])  # every pair moved by +1: s_d = 0
    assert r.statistic == math.inf and r.p_value == 0.0


def test_mcnemar_hand_computed():
    # n01 (B right, A wrong) = 3, n10 = 1: exact p = 2 * P(Bin(4, 1/2) <= 1) = 2 * (1 + 4) / 16 = 0.625
    r = mcnemar_test([1, 1, 0, 0, 0], [1, 0, 1, 1, 1])
    assert r.p_value == 0.625
    assert r.extra == {"b_better": 3, "a_better": 1, "odds_ratio": 3.0}
    assert r.method == "mcnemar-exact"


def test_mcnemar_matches_statsmodels_and_scipy():
    sm = pytest.importorskip("statsmodels.stats.contingency_tables")
    rng = np.random.default_rng(3)
    a = (rng.random(400) < 0.6).astype(float)
    b = np.where(rng.random(400) < 0.2, 1 - a, a)
    b[:30] = 1
    n01 = int(((a == 0) & (b == 1)).sum())
    n10 = int(((a == 1) & (b == 0)).sum())
    table = [[int(((a == 0) & (b == 0)).sum()), n01], [n10, int(((a == 1) & (b == 1)).sum())]]
    exact = mcnemar_test(a, b, exact=True)
    assert exact.p_value == pytest.approx(sm.mcnemar(table, exact=True).pvalue, rel=1e-9)
    assert exact.p_value == pytest.approx(stats.binomtest(n01, n01 + n10).pvalue, rel=1e-12)
    chi = mcnemar_test(a, b)  # >= 25 discordant pairs: chi-square with continuity correction
    assert chi.method == "mcnemar-chi2"
    ref = sm.mcnemar(table, exact=False, correction=True)
    assert chi.statistic == pytest.approx(ref.statistic)
    assert chi.p_value == pytest.approx(ref.pvalue, rel=1e-9)


def test_mcnemar_edge_cases_and_validation():
    assert mcnemar_test([1, 0], [1, 0]).p_value == 1.0  # no discordant pair
    assert mcnemar_test([0, 0], [1, 1]).extra["odds_ratio"] is None  # n10 = 0
    assert mcnemar_test([], []).p_value is None
    with pytest.raises(InvalidParameterError, match="only 0 and 1"):
        mcnemar_test([0.5, 1], [1, 1])


def test_cohens_dz():
    assert cohens_dz([1, 2, 3], [2, 4, 5]) == pytest.approx((5 / 3) / math.sqrt(1 / 3))
    assert cohens_dz([1], [2]) is None
    assert cohens_dz([1, 2], [2, 3]) is None  # s_d = 0


def test_holm_hand_computed_and_none():
    # sorted .01, .03, .04 (m = 3): 3 * .01 = .03; max(.03, 2 * .03) = .06; max(.06, 1 * .04) = .06
    assert holm([0.01, 0.04, 0.03]) == pytest.approx([0.03, 0.06, 0.06])
    # None is kept and not counted: m = 2 -> .02 * 2 = .04; max(.04, .5) = .5
    assert holm([0.5, None, 0.02]) == [0.5, None, pytest.approx(0.04)]
    assert holm([0.6, 0.9]) == [1.0, 1.0]  # 2 * .6 = 1.2 -> 1; max(1, .9) = 1
    with pytest.raises(InvalidParameterError, match=r"expected numbers in \[0, 1\]"):
        holm([1.5])


@settings(max_examples=15, deadline=None)  # statsmodels takes ~0.1 s a call
@given(st.lists(st.floats(0, 1), min_size=1, max_size=12))
def test_holm_matches_statsmodels(ps):
    sm = pytest.importorskip("statsmodels.stats.multitest")
    ref = sm.multipletests(ps, method="holm")[1]
    assert holm(ps) == pytest.approx(list(ref), abs=1e-12)


@settings(max_examples=30, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 4), st.integers(0, 4)), min_size=2, max_size=8),
       st.sampled_from(["two-sided", "greater", "less"]))
def test_exact_permutation_matches_scipy_on_discrete_scores(pairs, alternative):
    # discrete scores (k/4) produce many tied statistics: the hardest case for exact p-values
    a = np.array([p[0] for p in pairs]) / 4
    b = np.array([p[1] for p in pairs]) / 4
    ours = paired_permutation_test(a, b, alternative=alternative).p_value
    ref = stats.permutation_test((a, b), lambda x, y, axis: np.mean(y - x, axis=axis), vectorized=True,
                                 permutation_type="samples", n_resamples=np.inf, alternative=alternative).pvalue
    assert ours == pytest.approx(ref, abs=1e-12)
