"""AUROC of a score against a binary label, with DeLong's confidence interval.

The AUROC of scores ``pos`` (label 1) and ``neg`` (label 0) is the Mann-Whitney probability that a
random positive scores above a random negative, ties counting one half:

.. math::

    A = \\frac{1}{n_1 n_0} \\sum_{i=1}^{n_1} \\sum_{j=1}^{n_0} \\psi(x_i, y_j),\\qquad
    \\psi(x, y) = [x > y] + \\tfrac12 [x = y]

0.5 is chance, 1 perfect separation, 0 perfect inversion. Its variance (DeLong, DeLong and
Clarke-Pearson 1988) comes from the placement values
:math:`V_{10}(x_i) = \\frac{1}{n_0}\\sum_j \\psi(x_i, y_j)` and
:math:`V_{01}(y_j) = \\frac{1}{n_1}\\sum_i \\psi(x_i, y_j)`:

.. math::

    \\widehat{\\mathrm{Var}}(A) = \\frac{S_{10}}{n_1} + \\frac{S_{01}}{n_0}

with :math:`S_{10}, S_{01}` their sample variances (ddof 1); the interval is
:math:`A \\pm z\\,\\sqrt{\\widehat{\\mathrm{Var}}}` clipped to [0, 1] (method ``"delong"``).

Edge cases: no positive or no negative -> AUROC None, interval method ``"none"``; fewer than two
of either class -> no variance estimate, method ``"none"`` with the point estimate kept; a zero
variance estimate (perfect separation, or every score tied) -> the degenerate interval [A, A]
with method ``"delong-degenerate"``: the data show no spread, which says "not enough data" rather
than certainty, so callers should also require enough rows of each class (as ``judge-check`` does).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from .._validate import as_float_array, check_probability
from ..intervals import Interval, normal_interval


def _psi(pos: np.ndarray, neg: np.ndarray) -> np.ndarray:
    """The ``n1 x n0`` matrix of :math:`\\psi(x_i, y_j)`."""
    diff = pos[:, None] - neg[None, :]
    return (diff > 0).astype(np.float64) + 0.5 * (diff == 0)


def auroc(pos: Any, neg: Any) -> float | None:
    """AUROC of positives' scores ``pos`` against negatives' ``neg`` (ties 1/2); None when a side is empty.

    >>> auroc([0.9, 0.8, 0.4], [0.5, 0.3])
    0.8333333333333334
    """
    x = as_float_array(pos, "pos", allow_nan=False)
    y = as_float_array(neg, "neg", allow_nan=False)
    if x.size == 0 or y.size == 0:
        return None
    return float(_psi(x, y).mean())


def auroc_interval(pos: Any, neg: Any, *, confidence: float = 0.95) -> Interval:
    """The AUROC of ``pos`` against ``neg`` with DeLong's interval (see the module docstring).

    ``Interval.n`` is the number of scores, n1 + n0.

    >>> iv = auroc_interval([0.9, 0.8, 0.4], [0.5, 0.3])
    >>> round(iv.estimate, 4), round(iv.low, 4), iv.high, iv.method
    (0.8333, 0.3714, 1.0, 'delong')
    """
    confidence = check_probability(confidence, "confidence")
    x = as_float_array(pos, "pos", allow_nan=False)
    y = as_float_array(neg, "neg", allow_nan=False)
    n = int(x.size + y.size)
    if x.size == 0 or y.size == 0:
        return Interval(None, None, None, n, "none", confidence)
    psi = _psi(x, y)
    a = float(psi.mean())
    if x.size < 2 or y.size < 2:
        return Interval(a, None, None, n, "none", confidence)
    v10, v01 = psi.mean(axis=1), psi.mean(axis=0)
    var = float(v10.var(ddof=1) / x.size + v01.var(ddof=1) / y.size)
    if var <= 0.0:
        return Interval(a, a, a, n, "delong-degenerate", confidence)
    iv = normal_interval(a, float(np.sqrt(var)), n, confidence)
    return Interval(a, max(0.0, float(iv.low or 0.0)), min(1.0, float(iv.high or 1.0)), n, "delong", confidence)
