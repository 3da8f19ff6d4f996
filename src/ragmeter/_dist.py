"""The distribution functions and rank statistics of the paired tests, slices and judge checks, in numpy and ``math``.

Each gives the number its :mod:`scipy.stats` namesake gives (the tests hold them to scipy):

* :func:`t_sf`, :func:`t_cdf`: Student's t (``stats.t.sf`` / ``cdf``), through the regularized
  incomplete beta function :func:`betainc` (a continued fraction, Numerical Recipes' ``betacf``
  evaluated by the modified Lentz method);
* :func:`chi2_sf_1`: the chi-squared survival function on one degree of freedom (``stats.chi2.sf(x, 1)``);
* :func:`binom_test_half`: the exact two-sided binomial test of :math:`p = 1/2` (``stats.binomtest``);
* :func:`spearman`: Spearman's rho and its t-approximation p-value (``stats.spearmanr``);
* :func:`kendall_tau_b`: Kendall's tau-b and its p-value, exact or asymptotic as scipy picks
  (``stats.kendalltau``);
* :func:`welch_p`: the two-sided p-value of Welch's t-test (``stats.ttest_ind(equal_var=False)``).

All are two-sided where a side could be chosen, the only form ragmeter reports.
"""

from __future__ import annotations

import math
import sys
from typing import Any

import numpy as np
from numpy.typing import NDArray

_HALF_LOG_2PI = 0.5 * math.log(2 * math.pi)
_EPS = 1e-16
_TINY = 1e-300
_MAX_ITER = 100_000
#: Up to this many trials :func:`binom_test_half` sums the binomial coefficients exactly (~10 ms at the limit).
BINOM_EXACT_MAX_N = 20_000
# Stirling's series of lgamma(z) - ((z - 1/2) log z - z + log(2 pi) / 2): B_2k / (2k (2k - 1))
_STIRLING = (1 / 12, -1 / 360, 1 / 1260, -1 / 1680, 1 / 1188, -691 / 360360, 1 / 156)


def _stirling_rest(z: float) -> float:
    """``lgamma(z) - ((z - 1/2) log z - z + log(2 pi) / 2)``, small for every z > 0."""
    if z < 10:
        return math.lgamma(z) - (z - 0.5) * math.log(z) + z - _HALF_LOG_2PI
    inv, inv2 = 1 / z, 1 / (z * z)
    total, power = 0.0, inv
    for c in _STIRLING:
        total += c * power
        power *= inv2
    return total


def _log_beta(a: float, b: float) -> float:
    """:math:`\\log B(a, b)`, without the cancellation of ``lgamma(a) + lgamma(b) - lgamma(a + b)``
    for large arguments (Student's t with a million degrees of freedom has a = 500,000)."""
    if a < b:
        a, b = b, a
    return (-(a - 0.5) * math.log1p(b / a) + (b - 0.5) * math.log(b) - b * math.log(a + b) + _HALF_LOG_2PI
            + _stirling_rest(a) + _stirling_rest(b) - _stirling_rest(a + b))


def _beta_fraction(a: float, b: float, x: float) -> float:
    """The continued fraction of :math:`I_x(a, b)` (Numerical Recipes ``betacf``, modified Lentz)."""
    qab, qap, qam = a + b, a + 1.0, a - 1.0
    c, d = 1.0, 1.0 - qab * x / qap
    d = 1.0 / (d if abs(d) > _TINY else _TINY)
    h = d
    for m in range(1, _MAX_ITER):
        m2 = 2 * m
        for aa in (m * (b - m) * x / ((qam + m2) * (a + m2)), -(a + m) * (qab + m) * x / ((a + m2) * (qap + m2))):
            d = 1.0 + aa * d
            d = 1.0 / (d if abs(d) > _TINY else _TINY)
            c = 1.0 + aa / c
            c = c if abs(c) > _TINY else _TINY
            h *= d * c
        if abs(d * c - 1.0) < _EPS:
            return h
    raise ArithmeticError(f"incomplete beta: no convergence for a={a}, b={b}, x={x}")


def betainc(a: float, b: float, x: float, y: float) -> float:
    """The regularized incomplete beta function :math:`I_x(a, b)` (``scipy.special.betainc``).

    ``y`` is :math:`1 - x`, passed apart so a caller that knows it exactly (Student's t near 0)
    loses nothing to the subtraction.

    .. math:: I_x(a, b) = \\frac{x^a (1 - x)^b}{a B(a, b)} \\cdot
              \\cfrac{1}{1 + \\cfrac{d_1}{1 + \\cfrac{d_2}{1 + \\cdots}}}

    with the fraction of Numerical Recipes (3rd ed., 6.4); it converges fast for
    :math:`x < (a + 1)/(a + b + 2)`, and :math:`I_x(a, b) = 1 - I_{1-x}(b, a)` gives the rest.
    """
    if x <= 0.0:
        return 0.0
    if y <= 0.0:
        return 1.0
    if x > (a + 1.0) / (a + b + 2.0):
        return 1.0 - betainc(b, a, y, x)
    log_x = math.log(x) if x < 0.5 else math.log1p(-y)  # log of a number near 1 from its distance to 1
    log_y = math.log(y) if y < 0.5 else math.log1p(-x)
    log_front = a * log_x + b * log_y - _log_beta(a, b) - math.log(a)
    return math.exp(log_front) * _beta_fraction(a, b, x)


def t_sf(t: float, df: float) -> float:
    """:math:`P(T > t)` for Student's t with ``df`` degrees of freedom (``scipy.stats.t.sf``).

    :math:`P(T > |t|) = \\tfrac12 I_{\\nu/(\\nu + t^2)}(\\nu/2, 1/2)`. NaN for a NaN ``t`` or ``df <= 0``.
    """
    if math.isnan(t) or math.isnan(df) or df <= 0:
        return math.nan
    t2 = t * t
    if t2 > df:  # x = df / (df + t2) from r = df / t2: exact at t = inf
        r = df / t2
        x, y = r / (1.0 + r), 1.0 / (1.0 + r)
    else:
        q = t2 / df
        x, y = 1.0 / (1.0 + q), q / (1.0 + q)
    tail = 0.5 * betainc(df / 2.0, 0.5, x, y)
    return tail if t > 0 else 1.0 - tail


def t_cdf(t: float, df: float) -> float:
    """:math:`P(T \\le t)` for Student's t (``scipy.stats.t.cdf``)."""
    return t_sf(-t, df)


def chi2_sf_1(x: float) -> float:
    """:math:`P(\\chi^2_1 > x) = \\operatorname{erfc}(\\sqrt{x/2})` (``scipy.stats.chi2.sf(x, 1)``)."""
    if math.isnan(x):
        return math.nan
    return 1.0 if x <= 0 else math.erfc(math.sqrt(x / 2.0))


def binom_test_half(k: int, n: int) -> float:
    """The exact two-sided p-value of ``k`` successes in ``n`` trials under :math:`p = 1/2`
    (``scipy.stats.binomtest(k, n, 0.5).pvalue``).

    scipy sums the probabilities no larger than the observed one (within a relative 1e-7); the
    distribution being symmetric, that is :math:`\\min(1, 2 P(X \\le \\min(k, n - k)))`, and 1 at
    :math:`k = n/2`. :math:`P(X \\le j) = \\sum_{i \\le j} \\binom{n}{i} / 2^n` in exact integers
    (correctly rounded: 0.625 for k = 1 of 4) up to :data:`BINOM_EXACT_MAX_N` trials, beyond as
    :math:`I_{1/2}(n - j, j + 1)`.
    """
    if not 0 <= k <= n:
        raise ValueError(f"expected 0 <= k <= n, got k={k}, n={n}")
    j = min(k, n - k)
    if 2 * j == n:
        return 1.0
    if n > BINOM_EXACT_MAX_N:
        return min(1.0, 2.0 * betainc(n - j, j + 1, 0.5, 0.5))
    term = total = 1
    for i in range(j):
        term = term * (n - i) // (i + 1)
        total += term
    return min(1.0, total / (1 << (n - 1)))


def average_ranks(x: NDArray[np.float64]) -> NDArray[np.float64]:
    """1-based ranks, ties given their average rank (``scipy.stats.rankdata``, method ``average``)."""
    order = np.argsort(x, kind="stable")
    xs = x[order]
    first = np.concatenate(([True], xs[1:] != xs[:-1]))
    starts = np.flatnonzero(first)
    ends = np.concatenate((starts[1:], [xs.size]))
    ranks = np.empty(xs.size, dtype=np.float64)
    ranks[order] = np.repeat((starts + ends + 1) / 2.0, ends - starts)
    return ranks


def _pair(x: object, y: object) -> tuple[NDArray[np.float64], NDArray[np.float64]] | None:
    """``x``, ``y`` as float arrays; None where scipy answers NaN (n < 2, a NaN, a constant side)."""
    a, b = np.asarray(x, dtype=np.float64).ravel(), np.asarray(y, dtype=np.float64).ravel()
    if a.size != b.size:
        raise ValueError(f"expected two samples of the same length, got {a.size} and {b.size}")
    if a.size < 2 or np.isnan(a).any() or np.isnan(b).any() or np.ptp(a) == 0 or np.ptp(b) == 0:
        return None
    return a, b


def spearman(x: object, y: object) -> tuple[float, float]:
    """Spearman's rho (Pearson's r of the average ranks) and its two-sided p-value
    :math:`2 P(T_{n-2} > |t|)`, :math:`t = \\rho \\sqrt{(n - 2)/((1 + \\rho)(1 - \\rho))}`.

    ``(nan, nan)`` for fewer than 2 pairs, a NaN or a constant side, as ``scipy.stats.spearmanr``.
    """
    pair = _pair(x, y)
    if pair is None:
        return math.nan, math.nan
    a, b = pair
    rho = np.corrcoef(average_ranks(a), average_ranks(b))[1, 0]
    dof = a.size - 2
    with np.errstate(divide="ignore", invalid="ignore"):  # rho = +-1: t = +-inf, p = 0
        t = float(rho * np.sqrt(np.clip(dof / ((rho + 1.0) * (1.0 - rho)), 0, None)))
    return float(rho), 2.0 * t_sf(abs(t), dof)


def _dense(x: NDArray[Any]) -> NDArray[np.intp]:
    """Dense 0-based ranks (equal values share one)."""
    return np.unique(x, return_inverse=True)[1].ravel()


def _discordant(xr: NDArray[np.intp], yr: NDArray[np.intp]) -> int:
    """Pairs ordered one way by ``xr`` and the other by ``yr`` (ties on either side excluded): the
    inversions of ``yr`` once the pairs are sorted by (x, y), counted with a Fenwick tree."""
    ys = yr[np.lexsort((yr, xr))].tolist()
    size = max(ys) + 1
    tree = [0] * (size + 1)
    dis = 0
    for seen, v in enumerate(ys):
        i, not_above = v + 1, 0
        while i > 0:
            not_above += tree[i]
            i -= i & -i
        dis += seen - not_above
        i = v + 1
        while i <= size:
            tree[i] += 1
            i += i & -i
    return dis


def _tie_sums(ranks: NDArray[np.intp]) -> tuple[int, int, int]:
    cnt = np.bincount(ranks).astype(np.int64)
    cnt = cnt[cnt > 1]
    return (int((cnt * (cnt - 1) // 2).sum()), int((cnt * (cnt - 1) * (cnt - 2)).sum()),
            int((cnt * (cnt - 1) * (2 * cnt + 5)).sum()))


def _kendall_exact_p(n: int, concordant: int) -> float:
    """Two-sided exact p-value of Kendall's tau without ties: twice the share of the n! orders with
    at most ``min(c, N - c)`` inversions (Mahonian numbers, in exact integers)."""
    tot = n * (n - 1) // 2
    c = min(concordant, tot - concordant)
    if n > 171:  # c <= 1 here; 2n/n! is below the smallest normal float, which scipy gives as 0
        return 0.0
    counts = [1] + [0] * c  # orders of 1 item with k inversions, k <= c
    for j in range(2, n + 1):
        prefix = [0]
        for v in counts:
            prefix.append(prefix[-1] + v)
        counts = [prefix[k + 1] - prefix[max(0, k - j + 1)] for k in range(c + 1)]
    p = min(1.0, 2 * sum(counts) / math.factorial(n))
    return 0.0 if p < sys.float_info.min else p


def kendall_tau_b(x: object, y: object) -> tuple[float, float]:
    """Kendall's tau-b and its two-sided p-value, as ``scipy.stats.kendalltau`` (method ``auto``).

    .. math:: \\tau_b = \\frac{n_c - n_d}{\\sqrt{(N - t_x)(N - t_y)}},\\qquad N = n(n-1)/2

    with :math:`t_x, t_y` the pairs tied in x, in y. The p-value is exact (no ties, and
    :math:`n \\le 33` or at most one pair out of order) or from the normal approximation with the
    tie-corrected variance. ``(nan, nan)`` for fewer than 2 pairs, a NaN or a constant side.
    """
    pair = _pair(x, y)
    if pair is None:
        return math.nan, math.nan
    xr, yr = _dense(pair[0]), _dense(pair[1])
    n = int(xr.size)
    dis = _discordant(xr, yr)
    joint = _dense(xr.astype(np.int64) * (int(yr.max()) + 1) + yr)
    ntie = _tie_sums(joint)[0]
    xtie, x0, x1 = _tie_sums(xr)
    ytie, y0, y1 = _tie_sums(yr)
    tot = n * (n - 1) // 2
    con_minus_dis = tot - xtie - ytie + ntie - 2 * dis
    tau = min(1.0, max(-1.0, con_minus_dis / math.sqrt(tot - xtie) / math.sqrt(tot - ytie)))
    if xtie == 0 and ytie == 0 and (n <= 33 or min(dis, tot - dis) <= 1):
        return tau, _kendall_exact_p(n, tot - dis)
    m = n * (n - 1.0)
    var = (m * (2 * n + 5) - x1 - y1) / 18 + (2 * xtie * ytie) / m + x0 * y0 / (9 * m * (n - 2))
    z = con_minus_dis / math.sqrt(var)
    return tau, math.erfc(abs(z) / math.sqrt(2.0))


def welch_p(a: NDArray[np.float64], b: NDArray[np.float64]) -> float:
    """Welch's two-sided t-test p-value of the difference of the means of ``a`` and ``b``
    (``scipy.stats.ttest_ind(a, b, equal_var=False).pvalue``), each with at least 2 values.

    .. math:: t = \\frac{\\bar a - \\bar b}{\\sqrt{s_a^2/n_a + s_b^2/n_b}},\\qquad
              \\nu = \\frac{(s_a^2/n_a + s_b^2/n_b)^2}{\\frac{(s_a^2/n_a)^2}{n_a - 1} + \\frac{(s_b^2/n_b)^2}{n_b - 1}}
    """
    vn1, vn2 = float(np.var(a, ddof=1)) / a.size, float(np.var(b, ddof=1)) / b.size
    if vn1 == 0 and vn2 == 0:
        return math.nan
    df = (vn1 + vn2) ** 2 / (vn1**2 / (a.size - 1) + vn2**2 / (b.size - 1))
    t = (float(np.mean(a)) - float(np.mean(b))) / math.sqrt(vn1 + vn2)
    return 2.0 * t_sf(abs(t), df)
