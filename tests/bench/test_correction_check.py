"""bench/correction_check.py: the share of the answer's fact words a corrected copy keeps, by hand."""

from __future__ import annotations

import pytest

from .loader import load_bench

cc = load_bench("correction_check")


def test_a_changed_number_loses_its_double_weight():
    # fact words: tower 1, floor 1, "58" 2 (a number counts twice); the copy keeps tower and floor
    assert cc.fact_words("The tower has 58 floors.") == {"tower": 1, "floor": 1, "58": 2}
    assert cc.kept_share("The tower has 58 floors.", "The tower has 56 floors.") == pytest.approx(2 / 4)


def test_greetings_are_not_counted_and_a_name_run_counts_twice():
    # "Hello there!" is a greeting, not counted; "Dusek" is a name-run word (2), "Anna" opens the
    # counted text, and fact_consistency.names does not read a sentence's first word as a name (1);
    # kept: finish 1 + "1911" 2 of 1 + 2 + 2 + 1
    answer = "Hello there! Anna Dusek finished it in 1911."
    assert cc.fact_words(answer) == {"anna": 1, "dusek": 2, "finish": 1, "1911": 2}
    assert cc.kept_share(answer, "Karel Moor finished it in 1911.") == pytest.approx(3 / 6)


def test_an_answer_with_no_fact_word_scores_one():
    assert cc.kept_share("I love that film!", "A different text.") == 1.0
    assert cc.kept_share("The tower has 58 floors.", "The tower has 58 floors.") == 1.0
