"""passage_recall_score: the issue's examples and the edge cases, computed by hand."""

from __future__ import annotations

import pytest

from ragmeter import InvalidParameterError
from ragmeter.metrics.generation.passage_recall_math import passage_recall_score


@pytest.mark.parametrize(
    ("essential", "bonus", "expected"),
    [
        ([4, 3], [4, 0], 4.0),  # 3.5 + 4/(2*2*2) = 3.5 + 0.5
        ([1, 2], [], 1.5),  # no bonus: B = 0 -> bonus term 0
        ([5, 5], [5, 5], 5.0),  # 5 + 10/8 = 6.25 -> capped at 5
        ([5], [1], 5.0),  # 5 + 1/2 = 5.5 -> capped
        ([1, 1, 2], [], 1.33),  # 4/3 = 1.3333 -> 1.33
        ([1, 2, 2], [], 1.67),  # 5/3 = 1.6667 -> 1.67
        ([2, 1, 1, 1, 1, 1, 1, 1], [], 1.13),  # 9/8 = 1.125 exactly: half-up -> 1.13 (banker's would be 1.12)
        ([3], [0, 0, 0], 3.0),  # zero bonus adds nothing
        ([3], [5, 5, 5], 5.0),  # 3 + 15/(2*1*3) = 5.5 -> 5
        ([2, 2], [3], 2.75),  # 2 + 3/(2*2*1) = 2.75
        ([1], [1, 0, 0, 0, 0, 0, 0, 0], 1.06),  # 1 + 1/16 = 1.0625 -> 1.06
        ([1], [3, 0, 0, 0, 0, 0, 0, 0], 1.19),  # 1 + 3/16 = 1.1875 -> 1.19
        ([2.5, 3.5], [], 3.0),  # fractional scores are accepted
    ],
)
def test_golden(essential, bonus, expected):
    assert passage_recall_score(essential, bonus) == expected


@pytest.mark.parametrize(
    ("essential", "bonus"),
    [([], []), ([0], []), ([6], []), ([3], [-1]), ([3], [5.5]), (["4"], []), ([float("nan")], []),
     ([True], []), ("45", [])],
)
def test_invalid_inputs(essential, bonus):
    with pytest.raises(InvalidParameterError):
        passage_recall_score(essential, bonus)
