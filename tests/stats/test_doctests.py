"""The examples in the docstrings of ragmeter.stats (and of ragmeter.intervals, which it re-exports) run
and are right."""

from __future__ import annotations

import doctest
import importlib

import pytest

MODULES = ["ragmeter.intervals", *(f"ragmeter.stats.{m}" for m in (
    "paired", "agreement", "ppi", "abstain", "fusion", "compare", "calibrate", "diagnose", "_io", "_render"))]


@pytest.mark.parametrize("name", MODULES)
def test_docstring_examples(name):
    mod = importlib.import_module(name)
    result = doctest.testmod(mod, optionflags=doctest.NORMALIZE_WHITESPACE)
    assert result.failed == 0
