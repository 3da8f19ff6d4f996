"""The arithmetic of the ESSENTIAL/BONUS passage-recall grader, computed by ragmeter, never by the judge.

The judge scores how much of each ground-truth section the answer contains: each ESSENTIAL
section 1-5, each BONUS section 0-5. With E essential and B bonus sections:

.. math::

   \\text{essential} = \\frac{\\sum e_i}{E}, \\qquad
   \\text{bonus} = \\frac{\\sum b_j}{2EB} \\; (0 \\text{ when } B = 0), \\qquad
   \\text{final} = \\operatorname{round}_{2,\\,\\text{half-up}}\\big(\\min(5, \\text{essential} + \\text{bonus})\\big)

The sums are done in exact rational arithmetic (:class:`fractions.Fraction` of the scores'
decimal forms), so half-up rounding at the third decimal is exact: 1.125 -> 1.13, never 1.12.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from decimal import ROUND_HALF_UP, Decimal
from fractions import Fraction

from ...errors import InvalidParameterError


def _exact(values: Sequence[float], low: float, what: str) -> list[Fraction]:
    out = []
    for i, v in enumerate(values):
        if isinstance(v, bool) or not isinstance(v, int | float) or not math.isfinite(v):
            raise InvalidParameterError(f"{what} score #{i + 1}: expected a number, got {v!r}")
        if not low <= v <= 5:
            raise InvalidParameterError(f"{what} score #{i + 1}: expected {low:g}-5, got {v!r}")
        out.append(Fraction(str(v)))
    return out


def passage_recall_score(essential_scores: Sequence[float], bonus_scores: Sequence[float] = ()) -> float:
    """The 1-5 final passage-recall score from per-section scores.

    Parameters
    ----------
    essential_scores:
        One score per ESSENTIAL section, each in [1, 5]; at least one section.
    bonus_scores:
        One score per BONUS section, each in [0, 5]; may be empty.

    Returns
    -------
    float
        ``min(5, sum(e)/E + sum(b)/(2*E*B))`` rounded half-up to 2 decimals (bonus term 0 when B = 0).

    Examples
    --------
    >>> passage_recall_score([4, 3], [4, 0])   # 3.5 + 4/(2*2*2)
    4.0
    >>> passage_recall_score([1, 2])
    1.5

    Raises :class:`~ragmeter.errors.InvalidParameterError` on an empty essential list, a score
    out of range, or a non-number.
    """
    if isinstance(essential_scores, str | bytes) or isinstance(bonus_scores, str | bytes):
        raise InvalidParameterError("expected sequences of numbers, got a string")
    ess = _exact(list(essential_scores), 1, "essential")
    bon = _exact(list(bonus_scores), 0, "bonus")
    if not ess:
        raise InvalidParameterError("expected at least one essential section score, got none")
    e, b = len(ess), len(bon)
    total = sum(ess, Fraction(0)) / e
    if b:
        total += sum(bon, Fraction(0)) / (2 * e * b)
    total = min(Fraction(5), total)
    rounded = (Decimal(total.numerator) / Decimal(total.denominator)).quantize(Decimal("0.01"), ROUND_HALF_UP)
    return float(rounded)
