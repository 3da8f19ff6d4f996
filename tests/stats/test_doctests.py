"""The examples in the docstrings of ragmeter.stats run and are right."""

from __future__ import annotations

import doctest
import importlib

import pytest

MODULES = ["intervals", "paired", "agreement", "ppi", "abstain", "fusion", "compare", "calibrate", "diagnose", "_io"]


@pytest.mark.parametrize("name", MODULES)
def test_docstring_examples(name):
    mod = importlib.import_module(f"ragmeter.stats.{name}")
    result = doctest.testmod(mod, optionflags=doctest.NORMALIZE_WHITESPACE)
    assert result.failed == 0
