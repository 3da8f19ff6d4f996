"""Calibrated abstention thresholds with a conformal risk-control guarantee.

A RAG system answers when a score (e.g. the judge's faithfulness) is at least a threshold t
and abstains otherwise. On n labelled samples (label 1 = acceptable answer, 0 = unfaithful /
wrong), the loss of sample i at threshold t is

.. math:: L_i(t) = \\mathbf 1\\{s_i \\ge t \\text{ and } y_i = 0\\} \\in [0, 1]

which is non-increasing in t. Conformal risk control (Angelopoulos, Bates, Fisch, Lei,
Schuster, *Conformal Risk Control*, ICLR 2024, Theorem 1) picks, over a grid
:math:`\\Lambda` fixed before seeing the data and ending at :math:`+\\infty` (abstain always,
loss 0),

.. math:: \\hat t = \\min\\left\\{t \\in \\Lambda : \\frac{n}{n+1} \\hat R_n(t) + \\frac{1}{n+1} \\le \\alpha\\right\\},
          \\qquad \\hat R_n(t) = \\frac1n \\sum_i L_i(t)

and guarantees, for a new sample exchangeable with the labelled ones,
:math:`P(\\text{answered and unacceptable}) = E[L_{n+1}(\\hat t)] \\le \\alpha`. The guarantee is on
the joint event, averaged over the draw of the labelled set; it is not a bound on
P(unacceptable | answered).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from .._validate import as_float_array, check_finite, check_probability
from ..errors import InvalidParameterError

#: The default grid for scores in [0, 1]: 0, 0.001, ..., 1, then +inf (abstain on everything).
DEFAULT_GRID = np.append(np.arange(1001) / 1000, np.inf)


@dataclass(frozen=True)
class AbstentionResult:
    """A calibrated threshold. ``threshold`` is None when the only safe choice is to always abstain.

    Attributes
    ----------
    threshold:
        Answer when ``score >= threshold``.
    alpha:
        The guaranteed bound on P(answered and unacceptable).
    n:
        Labelled samples used.
    empirical_risk:
        :math:`\\hat R_n(\\hat t)` on the labelled samples.
    risk_bound:
        :math:`(n \\hat R_n(\\hat t) + 1) / (n + 1)` (<= alpha by construction).
    answer_rate:
        Share of labelled samples with ``score >= threshold``.
    answer_rate_all:
        Same share over every scored sample (labelled and unlabelled) when given, else None.
    error_rate_when_answered:
        Empirical P(unacceptable | answered) on the labelled samples (not guaranteed).
    note:
        Why the threshold is None, when it is.
    """

    threshold: float | None
    alpha: float
    n: int
    empirical_risk: float
    risk_bound: float
    answer_rate: float
    answer_rate_all: float | None
    error_rate_when_answered: float | None
    note: str | None = None

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready dict."""
        return dict(self.__dict__)


def crc_thresholds(scores: np.ndarray, bad: np.ndarray, grid: np.ndarray, alpha: float) -> np.ndarray:
    """Vectorised CRC over T independent calibration sets: ``scores``, ``bad`` of shape (T, n).

    ``grid`` must be sorted ascending and end with ``inf``. Returns the chosen thresholds (T,).
    A sample contributes loss at every grid point :math:`t \\le s_i`; counting those by
    ``searchsorted`` and a reverse cumulative sum gives :math:`n \\hat R_n(t)` for the whole grid
    in O(T (n + |grid|)).
    """
    t, n = scores.shape
    g = grid.size
    j = np.searchsorted(grid, scores, side="right")  # number of grid points <= s
    j = np.where(bad, j, 0)  # good samples never contribute loss
    flat = (j + (np.arange(t)[:, None] * (g + 1))).ravel()
    hist = np.bincount(flat, minlength=t * (g + 1)).reshape(t, g + 1)
    # losses at grid index k = #{bad samples with j > k}
    losses = np.cumsum(hist[:, ::-1], axis=1)[:, ::-1][:, 1:]
    ok = losses + 1 <= alpha * (n + 1) + 1e-9
    ok[:, -1] = True  # +inf: abstain on everything, loss 0 (bound 1/(n+1) may exceed alpha: still safe)
    return grid[np.argmax(ok, axis=1)]


def abstention_threshold(
    scores: Any,
    labels: Any,
    *,
    alpha: float = 0.1,
    positive: float = 0.5,
    grid: Any = None,
    scores_unlabelled: Any = None,
) -> AbstentionResult:
    """Choose the lowest threshold whose conformal risk bound P(answered and unacceptable) <= alpha.

    See the module docstring for the loss and the guarantee.

    Parameters
    ----------
    scores:
        Score of each labelled sample (higher = more trustworthy), e.g. the judge's faithfulness.
    labels:
        Human label of each sample; acceptable when ``label >= positive`` (0/1 labels: 1 is
        acceptable).
    alpha:
        Tolerated risk in (0, 1). With fewer than :math:`1/\\alpha - 1` labelled samples no
        threshold but "always abstain" can be certified (``threshold`` None, with a note).
    positive:
        Label at or above which an answer is acceptable.
    grid:
        Candidate thresholds, fixed in advance (default: 0, 0.001, ..., 1, which needs scores
        in [0, 1]); ``+inf`` is always appended.
    scores_unlabelled:
        Scores of the samples without a label, to report the answer rate over the whole run.

    Returns
    -------
    AbstentionResult

    Examples
    --------
    >>> # n = 19, alpha = 0.1: need (losses + 1) / 20 <= 0.1, i.e. at most 1 bad sample answered.
    >>> # Bad samples score 0.1, 0.2, 0.3: the lowest grid point above 0.2 answers only the 0.3 one.
    >>> s = [0.1, 0.2, 0.3] + [0.9] * 16
    >>> y = [0, 0, 0] + [1] * 16
    >>> abstention_threshold(s, y, alpha=0.1).threshold
    0.201
    """
    s, y, alpha, positive, g = _abstention_args(scores, labels, alpha, positive, grid)
    bad = y < positive
    thr = float(crc_thresholds(s[None, :], bad[None, :], g, alpha)[0])
    return _abstention_result(s, bad, thr, alpha, scores_unlabelled)


def _abstention_args(scores: Any, labels: Any, alpha: float, positive: float,
                     grid: Any) -> tuple[np.ndarray, np.ndarray, float, float, np.ndarray]:
    """Validate :func:`abstention_threshold`'s arguments: scores, labels, alpha, positive and the
    grid (the default for scores in [0, 1], else the given one, sorted, with ``+inf`` appended)."""
    s = as_float_array(scores, "scores", allow_nan=False)
    y = as_float_array(labels, "labels", allow_nan=False)
    if s.shape != y.shape:
        raise InvalidParameterError(f"scores, labels: expected the same length, got {s.size} and {y.size}")
    alpha = check_probability(alpha, "alpha")
    positive = check_finite(positive, "positive")
    if grid is None:
        if s.size and (s.min() < 0 or s.max() > 1):
            raise InvalidParameterError(
                f"grid: expected a grid of thresholds for scores outside [0, 1] (the default grid covers "
                f"[0, 1]), got scores in [{s.min():g}, {s.max():g}]")
        g = DEFAULT_GRID
    else:
        g = as_float_array(grid, "grid", allow_nan=False)
        g = np.append(np.unique(g), np.inf)
    if s.size == 0:
        raise InvalidParameterError("scores: expected at least one labelled sample, got none")
    return s, y, alpha, positive, g


def _abstention_result(s: np.ndarray, bad: np.ndarray, thr: float, alpha: float,
                       scores_unlabelled: Any) -> AbstentionResult:
    """The :class:`AbstentionResult` of threshold ``thr`` (``inf``: always abstain) on the labelled
    scores ``s`` with ``bad`` marking the unacceptable ones."""
    n = s.size
    answered = s >= thr
    loss = float((answered & bad).sum())
    note = None
    if np.isinf(thr):
        need = int(np.ceil(1 / alpha - 1))
        note = ("no threshold keeps the bound under alpha: always abstain" if n >= need else
                f"{n} labelled samples cannot certify risk <= {alpha}: at least {need} are needed")
    all_scores = s
    rate_all = None
    if scores_unlabelled is not None:
        su = as_float_array(scores_unlabelled, "scores_unlabelled", allow_nan=False)
        all_scores = np.concatenate([s, su])
        rate_all = float((all_scores >= thr).mean())
    return AbstentionResult(
        threshold=None if np.isinf(thr) else thr,
        alpha=alpha,
        n=n,
        empirical_risk=loss / n,
        risk_bound=(loss + 1) / (n + 1),
        answer_rate=float(answered.mean()),
        answer_rate_all=rate_all,
        error_rate_when_answered=float(loss / answered.sum()) if answered.any() else None,
        note=note,
    )
