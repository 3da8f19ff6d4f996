"""Prediction-powered inference (PPI / PPI++) for the mean of a human label.

A judge scores every sample (N unlabelled + n labelled); humans label only the n. PPI
(Angelopoulos, Bates, Fannjiang, Jordan, Zrnic, *Science* 2023) estimates the mean human label
over the whole set by using the judge on the unlabelled samples and the labelled samples to
correct the judge's bias. Power tuning (PPI++, Angelopoulos, Duchi, Zrnic 2023) scales the
judge by :math:`\\lambda \\in [0, 1]` so that a useless judge cannot make the interval wider
than the labels-only one (:math:`\\lambda = 0`).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from .._validate import as_float_array, check_probability
from ..errors import InvalidParameterError
from ..intervals import Interval, normal_interval


@dataclass(frozen=True)
class PPIResult:
    """A PPI estimate. ``interval`` is the normal interval; ``lam`` the power-tuning weight used.

    ``se`` is :math:`\\sqrt{\\mathrm{Var}(\\lambda f_U)/N + \\mathrm{Var}(Y - \\lambda f_L)/n}`.
    """

    interval: Interval
    lam: float
    se: float | None
    n: int
    N: int

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready dict."""
        return {**self.interval.to_dict(), "lambda": self.lam, "se": self.se, "n_labelled": self.n,
                "n_unlabelled": self.N}


def ppi_batch(
    y: np.ndarray, f_lab: np.ndarray, f_unlab: np.ndarray, lam: float | None = None
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Vectorised PPI++ over T independent problems: arrays of shape (T, n), (T, n), (T, N).

    Returns ``(theta, se, lam)``, each of shape (T,). See :func:`ppi_mean` for the formulas.
    Needs n >= 2 and N >= 1 (the public function handles smaller sizes); with N = 1 the
    unlabelled variance term is 0.
    """
    n, big_n = y.shape[1], f_unlab.shape[1]
    if lam is None:
        yc = y - y.mean(axis=1, keepdims=True)
        fc = f_lab - f_lab.mean(axis=1, keepdims=True)
        cov = (yc * fc).mean(axis=1)  # 1/n, as ppi-python
        var_all = np.concatenate([f_lab, f_unlab], axis=1).var(axis=1, ddof=1)
        with np.errstate(divide="ignore", invalid="ignore"):
            lam_arr = np.where(var_all > 0, cov / ((1 + n / big_n) * var_all), 0.0)
        lam_arr = np.clip(lam_arr, 0.0, 1.0)
    else:
        lam_arr = np.full(y.shape[0], float(lam))
    lc = lam_arr[:, None]
    rect = y - lc * f_lab
    theta = (lc * f_unlab).mean(axis=1) + rect.mean(axis=1)
    var_u = (lc * f_unlab).var(axis=1, ddof=1) if big_n >= 2 else np.zeros(y.shape[0])
    se = np.sqrt(var_u / big_n + rect.var(axis=1, ddof=1) / n)
    return theta, se, lam_arr


def ppi_mean(
    labels: Any,
    scores_labelled: Any,
    scores_unlabelled: Any,
    *,
    confidence: float = 0.95,
    lam: float | str = "auto",
) -> PPIResult:
    """Prediction-powered confidence interval for the mean label, with power tuning (PPI++).

    With labels :math:`Y_i` and judge scores :math:`f_i` on the n labelled samples and judge
    scores :math:`\\tilde f_j` on the N unlabelled ones:

    .. math::

        \\hat\\theta = \\frac1N \\sum_j \\lambda \\tilde f_j + \\frac1n \\sum_i (Y_i - \\lambda f_i),\\qquad
        \\widehat{SE} = \\sqrt{\\frac{\\mathrm{Var}(\\lambda \\tilde f)}{N} + \\frac{\\mathrm{Var}(Y - \\lambda f)}{n}}

    and the interval :math:`\\hat\\theta \\pm z_{1-\\alpha/2} \\widehat{SE}`. Variances use
    ddof = 1. With ``lam="auto"``:

    .. math::

        \\lambda = \\mathrm{clip}_{[0,1]}\\left(
            \\frac{\\mathrm{Cov}(Y, f)}{(1 + n/N)\\,\\mathrm{Var}(f_{\\text{all}})}\\right)

    (Cov over the labelled samples with 1/n, Var over all n + N judge scores with ddof 1, as
    ``ppi_py.ppi_mean_ci``). ``lam=1`` is classic PPI, ``lam=0`` the labels-only CLT interval.

    Parameters
    ----------
    labels:
        Human labels :math:`Y` (n values).
    scores_labelled:
        Judge scores on the same n samples, in the same order.
    scores_unlabelled:
        Judge scores on the N samples without a label.
    confidence:
        Nominal coverage in (0, 1).
    lam:
        ``"auto"`` (PPI++) or a fixed number in [0, 1].

    Returns
    -------
    PPIResult
        Edge cases: n = 0 gives an interval of Nones; n = 1 gives the degenerate interval at
        the estimate (no variance estimate, ``se`` None); N = 0 (nothing unlabelled) falls back
        to the labels-only interval with :math:`\\lambda = 0`; N = 1 uses :math:`\\mathrm{Var} = 0`
        for the unlabelled term; a constant judge gives :math:`\\lambda = 0`.

    Examples
    --------
    >>> r = ppi_mean([1, 0, 1, 1], [0.9, 0.2, 0.8, 0.6], [0.7, 0.9, 0.1, 0.8, 0.6, 0.4], lam=1)
    >>> # theta = mean(f_U) + mean(Y - f_L) = 3.5/6 + (0.1 - 0.2 + 0.2 + 0.4)/4 = 0.58333 + 0.125
    >>> round(r.interval.estimate, 5)
    0.70833
    """
    y, fl, fu, confidence, fixed = _ppi_args(labels, scores_labelled, scores_unlabelled, confidence, lam)
    n, big_n = y.size, fu.size
    if n <= 1 or big_n == 0:
        return _ppi_small(y, fl, fu, fixed, confidence)
    theta_a, se_a, lam_a = ppi_batch(y[None, :], fl[None, :], fu[None, :], fixed)
    theta, se, lam_v = float(theta_a[0]), float(se_a[0]), float(lam_a[0])
    iv = normal_interval(theta, se, n + big_n, confidence)
    return PPIResult(Interval(iv.estimate, iv.low, iv.high, n + big_n, "ppi++" if fixed is None else "ppi",
                              confidence), lam_v, se, n, big_n)


def _ppi_args(labels: Any, scores_labelled: Any, scores_unlabelled: Any, confidence: float,
              lam: float | str) -> tuple[np.ndarray, np.ndarray, np.ndarray, float, float | None]:
    """Validate :func:`ppi_mean`'s arguments: the three arrays, the confidence and the fixed
    :math:`\\lambda` (None for ``"auto"``)."""
    confidence = check_probability(confidence, "confidence")
    y = as_float_array(labels, "labels", allow_nan=False)
    fl = as_float_array(scores_labelled, "scores_labelled", allow_nan=False)
    fu = as_float_array(scores_unlabelled, "scores_unlabelled", allow_nan=False)
    if y.shape != fl.shape:
        raise InvalidParameterError(f"labels, scores_labelled: expected the same length, got {y.size} and {fl.size}")
    fixed: float | None
    if isinstance(lam, str):
        if lam != "auto":
            raise InvalidParameterError(f"lam: expected 'auto' or a number in [0, 1], got {lam!r}")
        fixed = None
    else:
        fixed = check_probability(lam, "lam", open_interval=False)
    return y, fl, fu, confidence, fixed


def _ppi_small(y: np.ndarray, fl: np.ndarray, fu: np.ndarray, fixed: float | None,
               confidence: float) -> PPIResult:
    """:func:`ppi_mean`'s edge cases: n = 0 (Nones), n = 1 (degenerate at the estimate, with
    :math:`\\lambda` = 1 or the fixed value) and N = 0 (labels only, :math:`\\lambda = 0`)."""
    n, big_n = y.size, fu.size
    if n == 0:
        return PPIResult(Interval(None, None, None, 0, "none", confidence), 0.0, None, 0, big_n)
    lam_v = 0.0 if big_n == 0 else (1.0 if fixed is None else fixed)
    theta = (lam_v * fu.mean() if big_n else 0.0) + float((y - lam_v * fl).mean())
    if n == 1:
        return PPIResult(Interval(theta, theta, theta, 1, "degenerate", confidence), lam_v, None, 1, big_n)
    se = float(y.std(ddof=1) / np.sqrt(n))
    return PPIResult(normal_interval(theta, se, n, confidence), lam_v, se, n, big_n)


def labels_only_interval(labels: Any, *, confidence: float = 0.95) -> Interval:
    """The classical interval from the labels alone: :math:`\\bar Y \\pm z\\, s_Y / \\sqrt n` (ddof 1).

    n = 0 gives Nones; n = 1 the degenerate interval.
    """
    confidence = check_probability(confidence, "confidence")
    y = as_float_array(labels, "labels", allow_nan=False)
    if y.size == 0:
        return Interval(None, None, None, 0, "none", confidence)
    if y.size == 1:
        return Interval(float(y[0]), float(y[0]), float(y[0]), 1, "degenerate", confidence)
    return normal_interval(float(y.mean()), float(y.std(ddof=1) / np.sqrt(y.size)), int(y.size), confidence)

