"""``factorize``: codes in order of first appearance and each code's first index, checked against a
plain dict walk (an independent implementation)."""

from __future__ import annotations

import subprocess
import sys

import numpy as np
from hypothesis import given
from hypothesis import strategies as st

from ragmeter._arrowbuf import factorize


def _by_dict(values: list[int]) -> tuple[list[int], list[int]]:
    seen: dict[int, int] = {}
    codes, first = [], []
    for i, v in enumerate(values):
        if v not in seen:
            seen[v] = len(seen)
            first.append(i)
        codes.append(seen[v])
    return codes, first


@given(st.lists(st.integers(-2**63, 2**63 - 1) | st.integers(-3, 3), max_size=300))
def test_codes_and_first_indices_equal_a_dict_walk(values):
    codes, first = factorize(np.array(values, dtype=np.int64))
    assert (codes.tolist(), first.tolist()) == _by_dict(values)
    assert codes.dtype == np.int64 and first.dtype == np.int64


def test_a_slice_and_a_large_array():
    big = np.random.default_rng(3).integers(0, 5000, 200_000)
    codes, first = factorize(big[7:])
    want_codes, want_first = _by_dict(big[7:].tolist())
    assert codes.tolist() == want_codes and first.tolist() == want_first
    assert (big[7:][first][codes] == big[7:]).all()


def test_does_not_import_pandas():
    code = ("import sys, numpy as np\nfrom ragmeter._arrowbuf import factorize\n"
            "factorize(np.arange(10))\nprint('pandas' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"
