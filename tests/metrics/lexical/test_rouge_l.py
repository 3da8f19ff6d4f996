"""rouge_l: golden values, the bit-parallel LCS against a textbook DP, and Google's rouge-score as oracle.

The oracle test needs the ``rouge-score`` package (a test-only tool, not a dependency of ragmeter);
it is skipped when that is not installed.
"""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ragmeter import Sample, get_evaluator
from ragmeter.metrics.lexical.rouge_l import lcs_length, rouge_l, rouge_tokens

try:
    from rouge_score import rouge_scorer
except ImportError:  # test-only oracle
    rouge_scorer = None


def ev(answer, reference):
    return get_evaluator("rouge_l").evaluate(Sample(id="s", answer=answer, reference=reference))


def lcs_dp(x, y):
    """The O(|x||y|) dynamic programme of every textbook."""
    table = [[0] * (len(y) + 1) for _ in range(len(x) + 1)]
    for i, a in enumerate(x):
        for j, b in enumerate(y):
            table[i + 1][j + 1] = table[i][j] + 1 if a == b else max(table[i][j + 1], table[i + 1][j])
    return table[-1][-1]


GOLDEN = [
    # [the cat sat on the mat] vs [the cat is on the mat]: LCS = the cat on the mat = 5, P = R = 5/6
    ("the cat sat on the mat", "the cat is on the mat", 5 / 6),
    # answer [a b c d e], reference [a c e]: LCS = 3, P = 3/5, R = 1, F = 2 * 0.6 / 1.6 = 0.75
    ("a b c d e", "a c e", 0.75),
    # Lin (2004)'s example: 'the gunman killed police' vs 'police killed the gunman':
    # LCS = 'the gunman' = 2, P = R = 2/4, F = 0.5
    ("the gunman killed police", "police killed the gunman", 0.5),
    # case and punctuation ignored: [paris, france] vs [paris]: LCS 1, P = 1/2, R = 1, F = 2/3
    ("PARIS, France!", "paris", 2 / 3),
    # non-ASCII letters kept: [αθήνα, είναι, πρωτεύουσα] vs [αθήνα]: P = 1/3, R = 1, F = 0.5
    # (rouge-score deletes the Greek letters and gives 0)
    ("Αθήνα είναι πρωτεύουσα", "Αθήνα", 0.5),
    ("", "Paris", 0.0),  # empty answer
    ("!!!", "Paris", 0.0),  # no token
    ("London", "Paris", 0.0),
    ("same words here", "same words here", 1.0),
]


@pytest.mark.parametrize(("answer", "reference", "expected"), GOLDEN)
def test_golden(answer, reference, expected):
    assert rouge_l(answer, reference) == pytest.approx(expected, abs=1e-12)
    assert ev(answer, reference).score == pytest.approx(expected, abs=1e-12)


def test_details():
    r = ev("a b c d e", "a c e")
    assert r.details == {"precision": 0.6, "recall": 1.0, "lcs": 3, "answer_tokens": 5, "reference_tokens": 3}
    assert "subsequence 3" in r.reason


@pytest.mark.parametrize(("answer", "reference", "reason"), [
    (None, "x", "no answer"), ("x", None, "no reference answer"), ("x", "", "no reference answer"),
])
def test_undefined(answer, reference, reason):
    r = ev(answer, reference)
    assert r.score is None and reason in r.reason


def test_tokens():
    assert rouge_tokens("It's 3.5 km_long — Café!") == ("it", "s", "3", "5", "km", "long", "café")


def test_lcs_small_cases():
    assert lcs_length([], ["a"]) == 0
    assert lcs_length(["a"], []) == 0
    assert lcs_length(list("abcbdab"), list("bdcaba")) == 4  # CLRS's example
    assert lcs_length(["x"] * 100, ["x"] * 70) == 70


_SEQ = st.lists(st.sampled_from("abcde"), max_size=40)


@settings(max_examples=400)
@given(_SEQ, _SEQ)
def test_bit_parallel_lcs_equals_dp(x, y):
    assert lcs_length(x, y) == lcs_dp(x, y)


def test_long_texts_are_fast():
    import time

    x = [f"w{i % 50}" for i in range(2000)]
    y = [f"w{(i * 7) % 50}" for i in range(2000)]
    t0 = time.perf_counter()
    lcs_length(x, y)
    assert time.perf_counter() - t0 < 1.0


_ASCII_WORDS = st.sampled_from(["the", "cat", "sat", "on", "mat", "Paris", "a", "42", "dog's", "x-ray", "!"])
_ASCII_TEXT = st.lists(_ASCII_WORDS, max_size=25).map(" ".join)


@pytest.mark.skipif(rouge_scorer is None, reason="the rouge-score package (test-only oracle) is not installed")
@settings(max_examples=300)
@given(_ASCII_TEXT, _ASCII_TEXT)
def test_matches_rouge_score_package(answer, reference):
    scorer = rouge_scorer.RougeScorer(["rougeL"], use_stemmer=False)
    expected = scorer.score(reference, answer)["rougeL"].fmeasure  # score(target, prediction)
    assert rouge_l(answer, reference) == pytest.approx(expected, abs=1e-12)
