"""Agreement between judge scores and human labels: accuracy, Cohen's kappa, rank correlations,
confusion matrix and expected calibration error."""

from __future__ import annotations

from typing import Any

import numpy as np

from .._dist import kendall_tau_b, spearman
from .._validate import as_float_array, check_finite, check_int
from ..errors import InvalidParameterError


def _paired(labels: Any, scores: Any) -> tuple[np.ndarray, np.ndarray]:
    y = as_float_array(labels, "labels", allow_nan=False)
    f = as_float_array(scores, "scores", allow_nan=False)
    if y.shape != f.shape:
        raise InvalidParameterError(f"labels, scores: expected the same length, got {y.size} and {f.size}")
    return y, f


def cohen_kappa(labels: Any, predictions: Any) -> float | None:
    """Cohen's kappa between two categorical ratings of the same items.

    .. math::

        \\kappa = \\frac{p_o - p_e}{1 - p_e},\\quad p_o = \\frac{1}{n}\\sum_i [y_i = \\hat y_i],\\quad
        p_e = \\sum_k \\frac{n_{y=k}}{n} \\cdot \\frac{n_{\\hat y=k}}{n}

    None when n = 0 or :math:`p_e = 1` (both raters use one and the same category: chance
    agreement is perfect and kappa is undefined). Same value as scikit-learn's
    ``cohen_kappa_score``.

    Examples
    --------
    >>> cohen_kappa([1, 1, 0, 0], [1, 0, 0, 0])  # p_o = 3/4, p_e = .5*.25 + .5*.75 = .5 -> .25/.5
    0.5
    """
    y, p = _paired(labels, predictions)
    if y.size == 0:
        return None
    cats = np.union1d(y, p)
    po = float((y == p).mean())
    pe = float(sum((y == c).mean() * (p == c).mean() for c in cats))
    return None if pe >= 1.0 else (po - pe) / (1 - pe)


def confusion_matrix(labels: Any, predictions: Any) -> dict[str, Any]:
    """Counts of (label, prediction) pairs: ``{"levels": [...], "matrix": rows=labels, cols=predictions}``.

    Levels are the sorted union of the values seen in both.

    Examples
    --------
    >>> confusion_matrix([1, 1, 0], [1, 0, 0])
    {'levels': [0.0, 1.0], 'matrix': [[1, 0], [1, 1]]}
    """
    y, p = _paired(labels, predictions)
    levels = np.union1d(y, p)
    iy, ip = np.searchsorted(levels, y), np.searchsorted(levels, p)
    mat = np.zeros((levels.size, levels.size), dtype=np.int64)
    np.add.at(mat, (iy, ip), 1)
    return {"levels": [float(v) for v in levels], "matrix": mat.tolist()}


def expected_calibration_error(labels: Any, scores: Any, *, bins: int = 10) -> dict[str, Any]:
    """Expected calibration error of scores in [0, 1] against labels in [0, 1].

    Equal-width bins over [0, 1]: bin :math:`b` holds scores in :math:`[b/B, (b+1)/B)`, the last
    bin also holds 1.0. Empty bins are skipped.

    .. math:: \\mathrm{ECE} = \\sum_b \\frac{n_b}{n} \\left| \\bar y_b - \\bar f_b \\right|

    With 0/1 labels, :math:`\\bar y_b` is the observed rate of positives among items the judge
    scored in bin b; with graded labels in [0, 1] it is their mean (a regression calibration
    error). Returns ``{"ece", "bins": [{"low", "high", "n", "mean_score", "mean_label"}]}``;
    ``ece`` is None when n = 0.

    Examples
    --------
    >>> # bin [0, .5): scores .3, .2, labels 1, 1 -> |1 - .25| * 2/4 = .375
    >>> # bin [.5, 1]: scores .9, .8, labels 1, 0 -> |.5 - .85| * 2/4 = .175
    >>> round(expected_calibration_error([1, 0, 1, 1], [0.9, 0.8, 0.3, 0.2], bins=2)["ece"], 6)
    0.55
    """
    y, f = _paired(labels, scores)
    bins = check_int(bins, "bins", minimum=1)
    for name, x in (("labels", y), ("scores", f)):
        if x.size and (x.min() < 0 or x.max() > 1):
            raise InvalidParameterError(f"{name}: expected values in [0, 1] for the calibration error, "
                                        f"got values in [{x.min():g}, {x.max():g}]")
    if y.size == 0:
        return {"ece": None, "bins": []}
    idx = np.minimum((f * bins).astype(np.int64), bins - 1)
    out = []
    ece = 0.0
    for b in range(bins):
        sel = idx == b
        nb = int(sel.sum())
        if nb == 0:
            continue
        my, mf = float(y[sel].mean()), float(f[sel].mean())
        ece += nb / y.size * abs(my - mf)
        out.append({"low": b / bins, "high": (b + 1) / bins, "n": nb, "mean_score": mf, "mean_label": my})
    return {"ece": ece, "bins": out}


def agreement(labels: Any, scores: Any, *, threshold: float = 0.5, bins: int = 10) -> dict[str, Any]:
    """Judge-vs-human agreement on the labelled items.

    Binary labels (all 0/1): the judge's score is turned into a 0/1 verdict by
    ``score >= threshold``; reports ``accuracy``, ``cohen_kappa``, the 2x2 ``confusion`` (rows =
    human, columns = judge), and ``ece`` when scores lie in [0, 1]. Graded labels: ``spearman``
    and ``kendall`` (tau-b) with p-values (as :func:`scipy.stats.spearmanr` and
    :func:`scipy.stats.kendalltau` give them), ``mae``
    :math:`= \\frac1n \\sum |f_i - y_i|`, ``bias`` :math:`= \\bar f - \\bar y`, the confusion
    matrix when both sides take at most 10 distinct values, and ``ece`` when both lie in [0, 1].
    Always: ``n`` and ``label_kind``. Correlations are None when n < 2 or a side is constant.
    """
    y, f = _paired(labels, scores)
    threshold = check_finite(threshold, "threshold")
    out: dict[str, Any] = {"n": int(y.size)}
    binary = bool(y.size) and bool(np.all((y == 0) | (y == 1)))
    in_unit = bool(y.size) and f.min() >= 0 and f.max() <= 1 and y.min() >= 0 and y.max() <= 1
    out["label_kind"] = "binary" if binary else "graded"
    if binary:
        verdict = (f >= threshold).astype(np.float64)
        out["threshold"] = threshold
        out["accuracy"] = float((verdict == y).mean())
        out["cohen_kappa"] = cohen_kappa(y, verdict)
        out["confusion"] = confusion_matrix(y, verdict)
    else:
        constant = y.size < 2 or np.ptp(y) == 0 or np.ptp(f) == 0
        sp = None if constant else spearman(y, f)
        kt = None if constant else kendall_tau_b(y, f)
        out["spearman"], out["spearman_p"] = (None, None) if sp is None else sp
        out["kendall"], out["kendall_p"] = (None, None) if kt is None else kt
        out["mae"] = float(np.abs(f - y).mean()) if y.size else None
        out["bias"] = float(f.mean() - y.mean()) if y.size else None
        if np.unique(y).size <= 10 and np.unique(f).size <= 10:
            out["confusion"] = confusion_matrix(y, f)
    out["ece"] = expected_calibration_error(y, f, bins=bins) if in_unit else None
    return out
