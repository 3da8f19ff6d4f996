"""Validation helpers shared by the public functions of :mod:`ragmeter.stats`, :mod:`ragmeter.intervals`
and judge-check.

Every helper raises :class:`~ragmeter.errors.InvalidParameterError` with an
"expected X, got Y" message naming the parameter.
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from typing import Any

import numpy as np

from .errors import InvalidParameterError


def _show(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


def as_float_array(values: Any, name: str, *, allow_nan: bool = True) -> np.ndarray:
    """``values`` as a 1-D float64 array (a copy when conversion is needed).

    Raises when the input is not one-dimensional, not numeric, holds infinities, or holds NaN
    while ``allow_nan`` is False.
    """
    if isinstance(values, str | bytes | dict):
        raise InvalidParameterError(f"{name}: expected a 1-D sequence of numbers, got {type(values).__name__}")
    try:
        arr = np.asarray(values, dtype=np.float64)
    except (TypeError, ValueError):
        raise InvalidParameterError(
            f"{name}: expected a 1-D sequence of numbers, got {_show(values)}"
        ) from None
    if arr.ndim != 1:
        raise InvalidParameterError(f"{name}: expected a 1-D sequence of numbers, got an array of shape {arr.shape}")
    if np.isinf(arr).any():
        raise InvalidParameterError(f"{name}: expected finite numbers (NaN = no score), got an infinity")
    if not allow_nan and np.isnan(arr).any():
        raise InvalidParameterError(f"{name}: expected numbers without NaN, got {int(np.isnan(arr).sum())} NaN")
    return arr


def check_probability(value: Any, name: str, *, open_interval: bool = True) -> float:
    """A float strictly inside (0, 1) (or within [0, 1] when ``open_interval`` is False)."""
    if isinstance(value, bool) or not isinstance(value, int | float | np.floating | np.integer):
        raise InvalidParameterError(f"{name}: expected a number in (0, 1), got {_show(value)}")
    v = float(value)
    ok = (0.0 < v < 1.0) if open_interval else (0.0 <= v <= 1.0)
    if not ok or math.isnan(v):
        bounds = "(0, 1)" if open_interval else "[0, 1]"
        raise InvalidParameterError(f"{name}: expected a number in {bounds}, got {_show(value)}")
    return v


def check_int(value: Any, name: str, *, minimum: int) -> int:
    """An int >= ``minimum`` (bools are refused)."""
    if isinstance(value, bool) or not isinstance(value, int | np.integer):
        raise InvalidParameterError(f"{name}: expected an integer >= {minimum}, got {_show(value)}")
    if int(value) < minimum:
        raise InvalidParameterError(f"{name}: expected an integer >= {minimum}, got {value}")
    return int(value)


def check_choice(value: Any, name: str, choices: Iterable[str]) -> str:
    """One of ``choices``."""
    options = tuple(choices)
    if value not in options:
        raise InvalidParameterError(f"{name}: expected one of {', '.join(map(repr, options))}, got {_show(value)}")
    return str(value)


def check_seed(value: Any, name: str = "seed") -> int:
    """A non-negative int seed (a fixed seed is what makes every result reproducible)."""
    return check_int(value, name, minimum=0)


def check_finite(value: Any, name: str) -> float:
    """A finite float."""
    if isinstance(value, bool) or not isinstance(value, int | float | np.floating | np.integer):
        raise InvalidParameterError(f"{name}: expected a number, got {_show(value)}")
    v = float(value)
    if not math.isfinite(v):
        raise InvalidParameterError(f"{name}: expected a finite number, got {_show(value)}")
    return v


def clean(value: Any) -> Any:
    """JSON-safe: numpy scalars to Python, NaN/inf to None, recursively through lists/dicts/tuples."""
    if isinstance(value, dict):
        return {str(k): clean(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [clean(v) for v in value]
    if isinstance(value, np.ndarray):
        return [clean(v) for v in value.tolist()]
    if isinstance(value, np.bool_):
        return bool(value)
    if isinstance(value, np.integer):
        return int(value)
    if isinstance(value, float | np.floating):
        v = float(value)
        return v if math.isfinite(v) else None
    return value
