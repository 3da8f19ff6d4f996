"""Confidence intervals for an aggregate (the mean of a metric over samples).

The interval every ``summary.json`` holds (:meth:`ragmeter.results.RunResult.summary`), so it sits
below both :mod:`ragmeter.results` and :mod:`ragmeter.stats` (which re-exports its functions).

Which interval :func:`metric_ci` picks (``method="auto"``):

* no scored value (n = 0): no interval (``None``), method ``"none"``;
* every scored value in {0, 1} (a proportion): the Wilson score interval, method ``"wilson"``
  (well defined for every n >= 1, e.g. n = 1, k = 1 gives [0.207, 1]);
* one scored value that is not 0/1 (n = 1): the degenerate interval [x, x], method
  ``"degenerate"``: one sample shows no variability, so this interval says nothing about
  uncertainty; read it as "not enough data";
* otherwise: a bootstrap over samples, BCa by default (method ``"bootstrap-bca"``), or
  percentile (``"bootstrap-percentile"``). All values equal gives [x, x].

The bootstrap resampler (:func:`bootstrap_means`) is vectorised and seeded. Drawing n indices
per resample costs O(n) per resample; instead the resampler draws, per resample, how many times
each distinct value is picked, ``C ~ Multinomial(n, counts / n)``, which has exactly the law of
the counts an index resample produces, and takes ``C @ values / n``. That is exact and costs
O(distinct values) per resample. When a metric has more than ``max_cells`` distinct values
(continuous scores), values are grouped into ``max_cells`` equal-width bins, each represented by
the mean of its values (so the observed mean is kept exactly); the spread lost inside bins is
put back by adding, to each resample's sum, a normal draw with the variance the within-bin
residuals of the drawn values have, ``sum_b C_b * var_b``. The first two moments of every
resample mean therefore match index resampling exactly; only the shape of the tiny within-bin
part is approximated (see docs/statistics.md for the accuracy check).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from statistics import NormalDist
from typing import Any

import numpy as np

from ._optional import require
from ._validate import as_float_array, check_choice, check_int, check_probability, check_seed
from .errors import InvalidParameterError

_NORMAL = NormalDist()


def _ndtri(p: float) -> float:
    """The standard normal quantile of ``p`` (``scipy.special.ndtri``: -inf at 0, inf at 1), from
    the standard library (within 1e-15 of scipy's; importing ``scipy.special`` costs ~0.18 CPU-s,
    paid by every run that prints a summary)."""
    if p <= 0.0:
        return -math.inf
    if p >= 1.0:
        return math.inf
    return _NORMAL.inv_cdf(p)


def _ndtr(x: float) -> float:
    """The standard normal distribution function at ``x`` (``scipy.special.ndtr``)."""
    return _NORMAL.cdf(x)


#: Default number of bootstrap resamples.
N_RESAMPLES = 2000
#: Default number of cells of the binned resampler.
MAX_CELLS = 128


@dataclass(frozen=True)
class Interval:
    """A point estimate with its confidence interval.

    Attributes
    ----------
    estimate:
        The statistic on the data (the mean), None when n = 0.
    low, high:
        The interval's bounds, None when n = 0.
    n:
        The number of values the interval rests on.
    method:
        ``"wilson"``, ``"bootstrap-bca"``, ``"bootstrap-percentile"``, ``"normal"``,
        ``"degenerate"`` (n = 1) or ``"none"`` (n = 0).
    confidence:
        The nominal coverage, e.g. 0.95.
    """

    estimate: float | None
    low: float | None
    high: float | None
    n: int
    method: str
    confidence: float

    @property
    def ci(self) -> list[float] | None:
        """``[low, high]`` or None."""
        if self.low is None or self.high is None:
            return None
        return [self.low, self.high]

    @property
    def width(self) -> float | None:
        """``high - low`` or None."""
        return None if self.low is None or self.high is None else self.high - self.low

    def to_dict(self) -> dict[str, Any]:
        """``{"estimate", "ci", "ci_method", "confidence", "n"}``."""
        return {"estimate": self.estimate, "ci": self.ci, "ci_method": self.method,
                "confidence": self.confidence, "n": self.n}


def _none(n: int, confidence: float) -> Interval:
    return Interval(None, None, None, n, "none", confidence)


def wilson_interval(successes: int, n: int, *, confidence: float = 0.95) -> Interval:
    """Wilson score interval for a binomial proportion.

    .. math::

        \\hat p = k / n,\\quad
        \\text{centre} = \\frac{\\hat p + z^2 / (2n)}{1 + z^2 / n},\\quad
        \\text{half} = \\frac{z}{1 + z^2 / n} \\sqrt{\\frac{\\hat p (1 - \\hat p)}{n} + \\frac{z^2}{4 n^2}}

    with :math:`z = \\Phi^{-1}(1 - (1 - \\text{confidence}) / 2)`. Bounds are clipped to [0, 1].

    Parameters
    ----------
    successes:
        k, the number of ones (0 <= k <= n).
    n:
        The number of trials. n = 0 gives an interval of Nones (method ``"none"``).
    confidence:
        Nominal coverage in (0, 1).

    Examples
    --------
    >>> iv = wilson_interval(0, 10)
    >>> round(iv.low, 4), round(iv.high, 4)
    (0.0, 0.2775)
    """
    confidence = check_probability(confidence, "confidence")
    n = check_int(n, "n", minimum=0)
    k = check_int(successes, "successes", minimum=0)
    if k > n:
        raise InvalidParameterError(f"successes: expected an integer <= n = {n}, got {k}")
    if n == 0:
        return _none(0, confidence)
    z = float(_ndtri(1 - (1 - confidence) / 2))
    p = k / n
    denom = 1 + z * z / n
    centre = (p + z * z / (2 * n)) / denom
    half = z / denom * np.sqrt(p * (1 - p) / n + z * z / (4 * n * n))
    # k = 0 (k = n): centre - half (centre + half) is exactly 0 (1); rounding must not move it
    low = 0.0 if k == 0 else max(0.0, float(centre - half))
    high = 1.0 if k == n else min(1.0, float(centre + half))
    return Interval(p, low, high, n, "wilson", confidence)


def _cells(x: np.ndarray, max_cells: int) -> tuple[np.ndarray, np.ndarray, np.ndarray | None]:
    """Distinct values and their counts, or (beyond ``max_cells``) bin means, counts and variances."""
    values, counts = np.unique(x, return_counts=True)
    if values.size <= max_cells:
        return values, counts, None
    lo, hi = float(x.min()), float(x.max())
    idx = np.minimum(((x - lo) / (hi - lo) * max_cells).astype(np.int64), max_cells - 1)
    counts = np.bincount(idx, minlength=max_cells)
    keep = counts > 0
    means = np.bincount(idx, weights=x, minlength=max_cells)[keep] / counts[keep]
    full_means = np.zeros(max_cells)
    full_means[keep] = means
    resid = x - full_means[idx]
    var = np.bincount(idx, weights=resid * resid, minlength=max_cells)[keep] / counts[keep]
    return means, counts[keep], var


def bootstrap_means(
    values: Any,
    *,
    n_resamples: int = N_RESAMPLES,
    seed: int = 0,
    max_cells: int = MAX_CELLS,
) -> np.ndarray:
    """The means of ``n_resamples`` bootstrap resamples of ``values`` (vectorised, seeded).

    .. math::

        \\bar x^*_b = \\frac{1}{n} \\sum_j C_{bj} v_j,\\qquad
        C_{b\\cdot} \\sim \\mathrm{Multinomial}(n, c / n)

    where :math:`v_j` are the distinct values and :math:`c_j` their counts: the law of
    :math:`C` is the law of the counts of n indices drawn with replacement, so this is the
    ordinary (Efron) bootstrap of the mean. With more than ``max_cells`` distinct values the
    values are binned (see the module docstring): each resample sum gets an extra
    :math:`\\sqrt{\\sum_b C_{bb} s^2_b}\\, Z_b` term (bin counts :math:`C_{bb}`, within-bin
    variances :math:`s^2_b`, :math:`Z_b \\sim N(0, 1)`), so its first two moments match index
    resampling exactly.

    Parameters
    ----------
    values:
        1-D finite numbers without NaN; n >= 1.
    n_resamples:
        Number of resamples B (>= 1).
    seed:
        Seed of ``numpy.random.default_rng``; the same seed and data give the same output.
    max_cells:
        Distinct values beyond which the binned resampler is used (>= 2).

    Returns
    -------
    numpy.ndarray
        Shape ``(n_resamples,)``.
    """
    x = as_float_array(values, "values", allow_nan=False)
    if x.size == 0:
        raise InvalidParameterError("values: expected at least one value, got an empty sequence")
    n_resamples = check_int(n_resamples, "n_resamples", minimum=1)
    seed = check_seed(seed)
    max_cells = check_int(max_cells, "max_cells", minimum=2)
    rng = np.random.default_rng(seed)
    reps, counts, var = _cells(x, max_cells)
    n = x.size
    if reps.size == 1:
        return np.full(n_resamples, reps[0])
    draws = rng.multinomial(n, counts / n, size=n_resamples)
    sums = draws @ reps
    if var is not None:
        sums += np.sqrt(draws @ var) * rng.standard_normal(n_resamples)
    return sums / n


def _percentile_of_score(boot: np.ndarray, theta: float) -> float:
    # midpoint rule for ties, as scipy.stats.bootstrap
    return float(((boot < theta).sum() + (boot <= theta).sum()) / (2 * boot.size))


def bca_interval_from(
    boot: np.ndarray, theta: float, x: np.ndarray, confidence: float
) -> tuple[float, float]:
    """BCa bounds from a bootstrap distribution of the mean (Efron 1987).

    .. math::

        z_0 = \\Phi^{-1}(\\hat G(\\hat\\theta)),\\qquad
        a = \\frac{\\sum_i (x_i - \\bar x)^3}{6 \\left(\\sum_i (x_i - \\bar x)^2\\right)^{3/2}},\\qquad
        \\alpha_{1,2} = \\Phi\\left(z_0 + \\frac{z_0 + z_{\\alpha/2,\\,1-\\alpha/2}}
                          {1 - a (z_0 + z_{\\alpha/2,\\,1-\\alpha/2})}\\right)

    and the bounds are the :math:`\\alpha_1, \\alpha_2` quantiles of the bootstrap means.
    :math:`\\hat G(\\hat\\theta)` counts ties as half (as :func:`scipy.stats.bootstrap`); ``a``
    is the jackknife acceleration, which for the mean has the closed form above. When
    :math:`z_0` is infinite (every resample on one side), or the acceleration makes the
    adjusted levels invalid, the percentile levels are used.
    """
    alpha = 1 - confidence
    z0 = float(_ndtri(_percentile_of_score(boot, theta)))
    dev = x - x.mean()
    ss = float((dev * dev).sum())
    a = float((dev**3).sum() / (6 * ss**1.5)) if ss > 0 else 0.0
    if not np.isfinite(z0):
        lo, hi = np.quantile(boot, [alpha / 2, 1 - alpha / 2])
        return float(lo), float(hi)
    probs = []
    for q in (alpha / 2, 1 - alpha / 2):
        zq = float(_ndtri(q))
        denom = 1 - a * (z0 + zq)
        probs.append(float(_ndtr(z0 + (z0 + zq) / denom)) if denom > 0 else q)
    if not probs[0] <= probs[1]:  # a pathological acceleration: keep the percentile levels
        probs = [alpha / 2, 1 - alpha / 2]
    lo, hi = np.quantile(boot, probs)
    return float(lo), float(hi)


def bootstrap_ci(
    values: Any,
    *,
    confidence: float = 0.95,
    method: str = "bca",
    n_resamples: int = N_RESAMPLES,
    seed: int = 0,
    statistic: Callable[[np.ndarray], float] | None = None,
) -> Interval:
    """Bootstrap confidence interval of the mean of ``values`` (or of ``statistic``).

    For the mean (``statistic=None``) the fast resampler :func:`bootstrap_means` is used; any
    other statistic is handed to :func:`scipy.stats.bootstrap` with the same seed (scipy is an
    optional dependency: :class:`~ragmeter.errors.MissingBackendError` says how to install it).

    Percentile: the :math:`\\alpha/2` and :math:`1-\\alpha/2` quantiles of the bootstrap
    statistics. BCa: see :func:`bca_interval_from`.

    Parameters
    ----------
    values:
        1-D numbers; NaN (no score) is dropped.
    confidence:
        Nominal coverage in (0, 1).
    method:
        ``"bca"`` or ``"percentile"``.
    n_resamples, seed:
        Number of resamples and the seed; same inputs, same interval.
    statistic:
        None for the mean, else a function of a 1-D array.

    Returns
    -------
    Interval
        n = 0: bounds None (method ``"none"``); n = 1: ``[x, x]`` (method ``"degenerate"``);
        all values equal: ``[x, x]``.

    Examples
    --------
    >>> iv = bootstrap_ci([0.2, 0.4, 0.4, 0.9, 1.0], seed=0)
    >>> iv.estimate, iv.method
    (0.58, 'bootstrap-bca')
    """
    confidence = check_probability(confidence, "confidence")
    method = check_choice(method, "method", ("bca", "percentile"))
    n_resamples = check_int(n_resamples, "n_resamples", minimum=1)
    seed = check_seed(seed)
    x = as_float_array(values, "values")
    x = x[~np.isnan(x)]
    if statistic is not None and not callable(statistic):
        raise InvalidParameterError(f"statistic: expected a callable or None, got {statistic!r}")
    if x.size == 0:
        return _none(0, confidence)
    theta = float(x.mean()) if statistic is None else float(statistic(x))
    if x.size == 1:
        return Interval(theta, theta, theta, 1, "degenerate", confidence)
    label = f"bootstrap-{method}"
    if statistic is not None:
        stats = require("scipy.stats", "bootstrap_ci(statistic=...)")
        res = stats.bootstrap((x,), statistic, confidence_level=confidence, n_resamples=n_resamples,
                              method="BCa" if method == "bca" else "percentile",
                              rng=np.random.default_rng(seed), vectorized=False)
        lo, hi = float(res.confidence_interval.low), float(res.confidence_interval.high)
        return Interval(theta, lo, hi, int(x.size), label, confidence)
    if float(x.min()) == float(x.max()):
        return Interval(theta, theta, theta, int(x.size), label, confidence)
    boot = bootstrap_means(x, n_resamples=n_resamples, seed=seed)
    if method == "bca":
        lo, hi = bca_interval_from(boot, theta, x, confidence)
    else:
        alpha = 1 - confidence
        lo, hi = (float(v) for v in np.quantile(boot, [alpha / 2, 1 - alpha / 2]))
    return Interval(theta, lo, hi, int(x.size), label, confidence)


def is_binary(x: np.ndarray) -> bool:
    """True when every value is 0 or 1 (and there is at least one)."""
    return bool(x.size) and bool(np.all((x == 0) | (x == 1)))


def metric_ci(
    values: Any,
    *,
    confidence: float = 0.95,
    method: str = "auto",
    n_resamples: int = N_RESAMPLES,
    seed: int = 0,
) -> Interval:
    """The confidence interval of a metric's mean, with the method chosen by the data.

    ``method="auto"``: Wilson when every scored value is 0 or 1, else BCa bootstrap; n = 0 gives
    None bounds, n = 1 (non-binary) gives the degenerate ``[x, x]`` (see the module docstring).
    ``"wilson"`` (binary values only), ``"bca"`` and ``"percentile"`` force a method.

    Parameters
    ----------
    values:
        The per-sample scores; NaN (no score) is dropped and not counted in n.
    confidence:
        Nominal coverage in (0, 1).
    method:
        ``"auto"``, ``"wilson"``, ``"bca"`` or ``"percentile"``.
    n_resamples, seed:
        Bootstrap settings (seeded: same data, same interval).

    Examples
    --------
    >>> metric_ci([1, 0, 1, 1]).method
    'wilson'
    >>> metric_ci([0.5]).ci
    [0.5, 0.5]
    """
    confidence = check_probability(confidence, "confidence")
    method = check_choice(method, "method", ("auto", "wilson", "bca", "percentile"))
    x = as_float_array(values, "values")
    x = x[~np.isnan(x)]
    if method == "wilson" or (method == "auto" and is_binary(x)):
        if x.size and not is_binary(x):
                raise InvalidParameterError("values: expected only 0 and 1 for method='wilson', got other values")
        return wilson_interval(int(x.sum()), int(x.size), confidence=confidence)
    return bootstrap_ci(x, confidence=confidence, method="bca" if method == "auto" else method,
                        n_resamples=n_resamples, seed=seed)


def normal_interval(estimate: float, se: float, n: int, confidence: float) -> Interval:
    """``estimate ± z * se`` with :math:`z = \\Phi^{-1}(1 - \\alpha/2)` (method ``"normal"``)."""
    z = float(_ndtri(1 - (1 - confidence) / 2))
    return Interval(float(estimate), float(estimate - z * se), float(estimate + z * se), n, "normal", confidence)
