"""token_f1: hand-computed golden values, SQuAD's own script as an oracle, edge cases."""

from __future__ import annotations

import collections
import re
import string

import pytest
from hypothesis import given
from hypothesis import strategies as st

from ragmeter import Sample, get_evaluator
from ragmeter.metrics.lexical.token_f1 import normalize_answer, token_f1


def ev(answer, reference):
    return get_evaluator("token_f1").evaluate(Sample(id="s", answer=answer, reference=reference))


GOLDEN = [
    # answer tokens [eiffel, tower, is, in, paris] (article 'the' and '.' removed), reference [paris]:
    # c = 1, P = 1/5, R = 1/1, F1 = 2 * 0.2 * 1 / 1.2 = 1/3
    ("The Eiffel Tower is in Paris.", "Paris", 1 / 3),
    # [paris, france] vs [paris]: P = 1/2, R = 1, F1 = 2 * 0.5 / 1.5 = 2/3
    ("Paris, France", "Paris", 2 / 3),
    # multiset: [cat, cat, cat] vs [cat, dog, cat]: c = min(3, 2) = 2, P = R = 2/3, F1 = 2/3
    ("the cat the cat cat", "cat dog cat", 2 / 3),
    # punctuation removed inside words: "U.S.A!" -> "usa"
    ("U.S.A!", "usa", 1.0),
    # Unicode punctuation too: «Paris» -> paris
    ("«Paris»", "Paris", 1.0),
    # no shared token
    ("London", "Paris", 0.0),
    # "an apple" vs "apple pie": [apple] vs [apple, pie]: P = 1, R = 1/2, F1 = 2/3
    ("an apple", "apple pie", 2 / 3),
    # both normalise to nothing (articles only): SQuAD gives 1
    ("The", "a", 1.0),
    # only one normalises to nothing: 0
    ("The", "Paris", 0.0),
    ("", "Paris", 0.0),
]


@pytest.mark.parametrize(("answer", "reference", "expected"), GOLDEN)
def test_golden(answer, reference, expected):
    assert token_f1(answer, reference) == pytest.approx(expected, abs=1e-12)
    r = ev(answer, reference)
    assert r.score == pytest.approx(expected, abs=1e-12)
    assert r.name == "token_f1" and r.version == "1"


def test_details_and_reason():
    r = ev("The Eiffel Tower is in Paris.", "Paris")
    assert r.details == {"precision": 0.2, "recall": 1.0, "common_tokens": 1, "answer_tokens": 5,
                         "reference_tokens": 1}
    assert "1 shared token" in r.reason


def test_normalize_answer():
    assert normalize_answer("  The  Quick, brown fox!  ") == "quick brown fox"
    assert normalize_answer("Anna and the theatre") == "anna and theatre"  # 'an'/'the' only as words


@pytest.mark.parametrize(("answer", "reference", "reason"), [
    (None, "Paris", "no answer"),
    ("Paris", None, "no reference answer"),
    ("Paris", "   ", "no reference answer"),
])
def test_undefined(answer, reference, reason):
    r = ev(answer, reference)
    assert r.score is None and r.status == "undefined"
    assert reason in r.reason


# --- oracle: the official SQuAD v1.1 evaluation functions, verbatim (ASCII text only, where ours agrees)

def _squad_normalize(s):
    def remove_articles(text):
        return re.sub(r"\b(a|an|the)\b", " ", text)

    def white_space_fix(text):
        return " ".join(text.split())

    def remove_punc(text):
        exclude = set(string.punctuation)
        return "".join(ch for ch in text if ch not in exclude)

    return white_space_fix(remove_articles(remove_punc(s.lower())))


def _squad_f1(prediction, ground_truth):
    prediction_tokens = _squad_normalize(prediction).split()
    ground_truth_tokens = _squad_normalize(ground_truth).split()
    if len(prediction_tokens) == 0 or len(ground_truth_tokens) == 0:  # SQuAD v2.0 rule
        return int(prediction_tokens == ground_truth_tokens)
    common = collections.Counter(prediction_tokens) & collections.Counter(ground_truth_tokens)
    num_same = sum(common.values())
    if num_same == 0:
        return 0
    precision = 1.0 * num_same / len(prediction_tokens)
    recall = 1.0 * num_same / len(ground_truth_tokens)
    return (2 * precision * recall) / (precision + recall)


_WORDS = st.sampled_from(["the", "a", "an", "Paris", "paris,", "cat", "dog.", "U.S.", "is", "(big)", "-", "42"])
_TEXT = st.lists(_WORDS, max_size=12).map(" ".join)


@given(_TEXT, _TEXT)
def test_matches_official_squad_script(answer, reference):
    assert token_f1(answer, reference) == pytest.approx(_squad_f1(answer, reference), abs=1e-12)
