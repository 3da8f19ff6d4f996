"""Paired tests for two systems scored on the same samples, effect sizes, and Holm's correction.

Every function takes the per-sample scores of system A and system B on the *same* samples (in
the same order) and tests the mean difference :math:`d_i = b_i - a_i`:

* :func:`paired_permutation_test`: sign-flipping randomisation test (exact enumeration of all
  :math:`2^m` sign patterns when the m non-zero differences are few, else seeded Monte Carlo);
* :func:`paired_ttest`: Student's paired t-test;
* :func:`mcnemar_test`: McNemar's test for binary scores (exact binomial when the discordant
  pairs are few);
* :func:`cohens_dz` (effect size) and :func:`holm` (family-wise correction).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from .._dist import binom_test_half, chi2_sf_1, t_cdf, t_sf
from .._validate import as_float_array, check_choice, check_int, check_seed
from ..errors import InvalidParameterError

ALTERNATIVES = ("two-sided", "greater", "less")
#: Exact enumeration is used up to this many non-zero differences (2**16 = 65,536 patterns).
EXACT_MAX = 16


@dataclass(frozen=True)
class TestResult:
    """The outcome of a paired test.

    Attributes
    ----------
    method:
        ``"permutation-exact"``, ``"permutation-mc"``, ``"t-test"``, ``"mcnemar-exact"`` or
        ``"mcnemar-chi2"``.
    statistic:
        The test statistic (mean difference; t; discordant count or chi-square).
    p_value:
        The p-value, None when the test is undefined (n = 0, or n < 2 for the t-test).
    n:
        Number of pairs.
    extra:
        Method-specific numbers (e.g. ``n_resamples``, ``df``, discordant counts).
    """

    __test__ = False  # not a pytest test class

    method: str
    statistic: float | None
    p_value: float | None
    n: int
    extra: dict[str, Any] = field(default_factory=dict)


def _pairs(a: Any, b: Any) -> np.ndarray:
    xa = as_float_array(a, "a", allow_nan=False)
    xb = as_float_array(b, "b", allow_nan=False)
    if xa.shape != xb.shape:
        raise InvalidParameterError(f"a, b: expected the same length (paired samples), got {xa.size} and {xb.size}")
    return xb - xa


def paired_permutation_test(
    a: Any,
    b: Any,
    *,
    alternative: str = "two-sided",
    n_resamples: int = 10_000,
    seed: int = 0,
    exact: bool | None = None,
) -> TestResult:
    """Paired randomisation test of the mean difference by sign flipping.

    Under H0 (A and B exchangeable within each sample) every :math:`d_i = b_i - a_i` is as likely
    to have the other sign. With :math:`T = \\bar d`:

    .. math::

        p_{\\text{two-sided}} = \\frac{\\#\\{s : |T(s)| \\ge |T_{obs}|\\}}{2^m},\\qquad
        T(s) = \\frac{1}{n} \\sum_i s_i d_i,\\ s \\in \\{-1, 1\\}^m

    over all sign patterns of the m non-zero differences (zeros cannot change T). ``greater``
    counts :math:`T(s) \\ge T_{obs}`, ``less`` :math:`T(s) \\le T_{obs}`. Comparisons allow a
    relative tolerance of 1e-9 for floating-point ties. Monte Carlo (when exact enumeration is
    off): ``n_resamples`` random sign patterns from ``default_rng(seed)`` and
    :math:`p = (1 + \\#\\{\\ldots\\}) / (1 + B)`, never 0 (Phipson & Smyth 2010).

    Parameters
    ----------
    a, b:
        Scores of systems A and B on the same samples, in the same order (no NaN).
    alternative:
        ``"two-sided"``, ``"greater"`` (B > A) or ``"less"`` (B < A).
    n_resamples:
        Monte Carlo resamples (>= 1).
    seed:
        Seed; same data and seed give the same p-value.
    exact:
        None: exact when m <= 16 (2**16 patterns); True: force (refused above m = 24); False: Monte Carlo.

    Returns
    -------
    TestResult
        n = 0 gives ``p_value`` None; all differences 0 gives p = 1.

    Examples
    --------
    >>> paired_permutation_test([0, 0, 0], [1, 1, 1]).p_value  # 2 of 8 patterns as extreme
    0.25
    """
    d, alternative, n_resamples, seed = _permutation_args(a, b, alternative, n_resamples, seed, exact)
    n = d.size
    if n == 0:
        return TestResult("permutation-exact", None, None, 0)
    nz = d[d != 0]
    m = nz.size
    t_obs = float(d.mean())
    count = _extreme_counter(alternative, t_obs, tol=1e-9 * max(1.0, float(np.abs(d).sum()) / n))
    if _use_exact(exact, m):
        patterns = 1 << m
        return TestResult("permutation-exact", t_obs, _exact_count(nz, n, count) / patterns, n,
                          {"n_patterns": patterns, "nonzero": m})
    hits = _monte_carlo_count(nz, n, n_resamples, seed, count)
    return TestResult("permutation-mc", t_obs, (1 + hits) / (1 + n_resamples), n,
                      {"n_resamples": n_resamples, "seed": seed, "nonzero": m})


def _permutation_args(a: Any, b: Any, alternative: str, n_resamples: int, seed: int,
                      exact: bool | None) -> tuple[np.ndarray, str, int, int]:
    """Validate :func:`paired_permutation_test`'s arguments: the differences ``b - a`` and the
    checked ``alternative``, ``n_resamples`` and ``seed``."""
    d = _pairs(a, b)
    alternative = check_choice(alternative, "alternative", ALTERNATIVES)
    n_resamples = check_int(n_resamples, "n_resamples", minimum=1)
    seed = check_seed(seed)
    if exact is not None and not isinstance(exact, bool):
        raise InvalidParameterError(f"exact: expected True, False or None, got {exact!r}")
    return d, alternative, n_resamples, seed


def _use_exact(exact: bool | None, m: int) -> bool:
    """Whether to enumerate all :math:`2^m` sign patterns: by default up to :data:`EXACT_MAX`
    non-zero differences; forcing it is refused above 24."""
    use_exact = m <= EXACT_MAX if exact is None else exact
    if use_exact and m > 24:
        raise InvalidParameterError(f"exact: expected at most 24 non-zero differences for exact enumeration, got {m}")
    return use_exact


def _extreme_counter(alternative: str, t_obs: float, tol: float) -> Callable[[np.ndarray], int]:
    """A function counting the statistics at least as extreme as ``t_obs`` in the direction of
    ``alternative``, with tolerance ``tol`` for floating-point ties."""

    def count(t: np.ndarray) -> int:
        if alternative == "two-sided":
            return int((np.abs(t) >= abs(t_obs) - tol).sum())
        if alternative == "greater":
            return int((t >= t_obs - tol).sum())
        return int((t <= t_obs + tol).sum())

    return count


def _exact_count(nz: np.ndarray, n: int, count: Callable[[np.ndarray], int]) -> int:
    """How many of the :math:`2^m` sign patterns of the non-zero differences ``nz`` give a
    statistic as extreme (``count``), enumerated in blocks of 65,536 patterns."""
    m = nz.size
    total = 0
    patterns = 1 << m
    step = 1 << 16
    shifts = np.arange(m, dtype=np.int64)
    for start in range(0, patterns, step):
        codes = np.arange(start, min(patterns, start + step), dtype=np.int64)
        bits = ((codes[:, None] >> shifts) & 1).astype(np.float64)
        total += count((nz.sum() - 2 * bits @ nz) / n)
    return total


def _monte_carlo_count(nz: np.ndarray, n: int, n_resamples: int, seed: int,
                       count: Callable[[np.ndarray], int]) -> int:
    """How many of ``n_resamples`` random sign patterns (from ``default_rng(seed)``) of the
    non-zero differences ``nz`` give a statistic as extreme (``count``)."""
    m = nz.size
    rng = np.random.default_rng(seed)
    # Each resample is m random bits (bit 1 = flip the sign), drawn as m/8 random bytes. For each
    # byte position j a 256-entry table holds the sum of the differences its set bits select, so a
    # resample's flipped sum is m/8 table look-ups instead of m multiply-adds.
    nb = (m + 7) // 8
    padded = np.zeros(nb * 8)
    padded[:m] = nz
    byte_bits = np.unpackbits(np.arange(256, dtype=np.uint8)[:, None], axis=1).astype(np.float64)  # (256, 8)
    table = (padded.reshape(nb, 8) @ byte_bits.T).ravel()  # table[j * 256 + v]
    offsets = np.arange(nb, dtype=np.int64) * 256
    total_sum = float(nz.sum())
    hits = 0
    chunk = max(1, min(n_resamples, 2_000_000 // nb))
    done = 0
    while done < n_resamples:
        size = min(chunk, n_resamples - done)
        raw = np.frombuffer(rng.bytes(size * nb), dtype=np.uint8).reshape(size, nb)
        flipped = table[raw + offsets].sum(axis=1)
        hits += count((total_sum - 2 * flipped) / n)
        done += size
    return hits


def paired_ttest(a: Any, b: Any, *, alternative: str = "two-sided") -> TestResult:
    """Student's paired t-test of the mean difference :math:`d = b - a`.

    .. math:: t = \\frac{\\bar d}{s_d / \\sqrt n},\\qquad s_d^2 = \\frac{1}{n-1}\\sum (d_i - \\bar d)^2,
              \\qquad \\mathrm{df} = n - 1

    Same result as :func:`scipy.stats.ttest_rel(b, a) <scipy.stats.ttest_rel>`. Edge cases:
    n < 2 gives p None; :math:`s_d = 0` gives p = 1 when :math:`\\bar d = 0` (no evidence) and
    p = 0 with t = ±inf otherwise (every pair moved by the same non-zero amount).

    Examples
    --------
    >>> r = paired_ttest([1, 2, 3], [2, 4, 5])   # d = 1, 2, 2; mean 5/3; s_d = 0.57735
    >>> round(r.statistic, 4)                     # (5/3) / (0.57735 / sqrt 3) = 5.0
    5.0
    """
    d = _pairs(a, b)
    alternative = check_choice(alternative, "alternative", ALTERNATIVES)
    n = d.size
    if n < 2:
        return TestResult("t-test", None, None, n, {"df": max(n - 1, 0)})
    mean = float(d.mean())
    sd = float(d.std(ddof=1))
    df = n - 1
    if sd == 0:
        if mean == 0:
            return TestResult("t-test", 0.0, 1.0, n, {"df": df})
        t = math.copysign(math.inf, mean)
        p = 0.0 if alternative == "two-sided" or (alternative == "greater") == (mean > 0) else 1.0
        return TestResult("t-test", t, p, n, {"df": df})
    t = mean / (sd / math.sqrt(n))
    if alternative == "two-sided":
        p = 2 * t_sf(abs(t), df)
    elif alternative == "greater":
        p = t_sf(t, df)
    else:
        p = t_cdf(t, df)
    return TestResult("t-test", t, min(1.0, p), n, {"df": df})


def mcnemar_test(a: Any, b: Any, *, exact: bool | None = None) -> TestResult:
    """McNemar's test for paired binary scores (two-sided).

    With :math:`n_{01}` = pairs where A scored 0 and B scored 1 (B better) and :math:`n_{10}`
    the reverse, H0 is :math:`P(01) = P(10)`. Exact: :math:`n_{01} \\sim \\mathrm{Bin}(n_{01} + n_{10}, 1/2)`,
    :math:`p = \\min(1, 2 P(X \\le \\min(n_{01}, n_{10})))`. Asymptotic (with continuity
    correction): :math:`\\chi^2 = (|n_{01} - n_{10}| - 1)^2 / (n_{01} + n_{10})` on 1 df.

    ``extra`` holds ``b_better`` (:math:`n_{01}`), ``a_better`` (:math:`n_{10}`) and the
    ``odds_ratio`` :math:`n_{01} / n_{10}` (None when :math:`n_{10} = 0`).

    Parameters
    ----------
    a, b:
        0/1 scores of A and B on the same samples.
    exact:
        None: exact when :math:`n_{01} + n_{10} < 25`; True / False force it.

    Returns
    -------
    TestResult
        No discordant pair gives p = 1; n = 0 gives p None.

    Examples
    --------
    >>> r = mcnemar_test([1, 1, 0, 0, 0], [1, 0, 1, 1, 1])  # n01 = 3, n10 = 1
    >>> r.p_value                                          # 2 * P(Bin(4, .5) <= 1) = 2 * 5/16
    0.625
    """
    xa = as_float_array(a, "a", allow_nan=False)
    xb = as_float_array(b, "b", allow_nan=False)
    if xa.shape != xb.shape:
        raise InvalidParameterError(f"a, b: expected the same length (paired samples), got {xa.size} and {xb.size}")
    for name, x in (("a", xa), ("b", xb)):
        if not np.all((x == 0) | (x == 1)):
            raise InvalidParameterError(f"{name}: expected only 0 and 1 for McNemar's test, got other values")
    if exact is not None and not isinstance(exact, bool):
        raise InvalidParameterError(f"exact: expected True, False or None, got {exact!r}")
    n01 = int(((xa == 0) & (xb == 1)).sum())
    n10 = int(((xa == 1) & (xb == 0)).sum())
    disc = n01 + n10
    extra: dict[str, Any] = {"b_better": n01, "a_better": n10, "odds_ratio": (n01 / n10) if n10 else None}
    use_exact = disc < 25 if exact is None else exact
    method = "mcnemar-exact" if use_exact else "mcnemar-chi2"
    if xa.size == 0:
        return TestResult(method, None, None, 0, extra)
    if disc == 0:
        return TestResult(method, 0.0, 1.0, int(xa.size), extra)
    if use_exact:
        return TestResult(method, float(n01), binom_test_half(n01, disc), int(xa.size), extra)
    chi2 = (abs(n01 - n10) - 1) ** 2 / disc
    return TestResult(method, float(chi2), chi2_sf_1(chi2), int(xa.size), extra)


def cohens_dz(a: Any, b: Any) -> float | None:
    """Cohen's :math:`d_z` for paired data: :math:`\\bar d / s_d` with :math:`d = b - a`, ddof 1.

    None when n < 2 or :math:`s_d = 0` (undefined: every pair moved by the same amount).
    Rough reading (Cohen): 0.2 small, 0.5 medium, 0.8 large.

    Examples
    --------
    >>> round(cohens_dz([1, 2, 3], [2, 4, 5]), 4)  # (5/3) / 0.57735
    2.8868
    """
    d = _pairs(a, b)
    if d.size < 2:
        return None
    sd = float(d.std(ddof=1))
    return None if sd == 0 else float(d.mean()) / sd


def holm(p_values: Any) -> list[float | None]:
    """Holm's step-down adjusted p-values (controls the family-wise error rate).

    Sort the m defined p-values ascending, :math:`p_{(1)} \\le \\dots \\le p_{(m)}`; then

    .. math:: \\tilde p_{(j)} = \\min\\left(1, \\max_{i \\le j} (m - i + 1)\\, p_{(i)}\\right)

    None or NaN entries (undefined tests) are kept as None and not counted in m.

    Examples
    --------
    >>> holm([0.01, 0.04, 0.03])   # sorted .01,.03,.04 -> 3*.01, max(.03, 2*.03), max(.06, 1*.04)
    [0.03, 0.06, 0.06]
    """
    raw = [None if p is None or (isinstance(p, float) and math.isnan(p)) else p for p in p_values]
    defined = [(i, float(p)) for i, p in enumerate(raw) if p is not None]
    for _, p in defined:
        if not 0.0 <= p <= 1.0:
            raise InvalidParameterError(f"p_values: expected numbers in [0, 1] or None, got {p!r}")
    out: list[float | None] = [None] * len(raw)
    m = len(defined)
    running = 0.0
    for rank, (i, p) in enumerate(sorted(defined, key=lambda t: t[1])):
        running = max(running, min(1.0, (m - rank) * p))
        out[i] = running
    return out
