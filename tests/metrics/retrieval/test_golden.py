"""Hand-computed golden values for every retrieval metric and its edge cases.

The main fixture: contexts d1..d5 in rank order, graded labels {d2: 3, d4: 1, d7: 2} (d7 never
retrieved). Relevant ranks are 2 and 4, |G| = 3, ideal grades [3, 2, 1].
"""

from __future__ import annotations

import math

import pytest

from ragmeter import Sample, get_evaluator

LOG2_3 = math.log2(3)  # 1.5849625
LOG2_5 = math.log2(5)  # 2.3219281


def sample(contexts, relevant=None, reference=None, sid="s"):
    return Sample(id=sid, query="q", contexts=contexts, relevant=relevant, reference=reference)


GRADED = sample(
    [{"id": f"d{i}", "text": f"text {i}"} for i in range(1, 6)],
    relevant={"d2": 3, "d4": 1, "d7": 2},
)

CASES = [
    ("hit_rate@1", 0.0),  # rank 1 not relevant
    ("hit_rate@2", 1.0),
    ("hit_rate", 1.0),
    ("recall@2", 1 / 3),  # d2 of {d2, d4, d7}
    ("recall@5", 2 / 3),
    ("recall@100", 2 / 3),
    ("precision@2", 1 / 2),
    ("precision@5", 2 / 5),
    ("precision@10", 2 / 10),  # k larger than the list: still divided by k
    ("precision", 2 / 5),  # no cutoff: divided by the number retrieved
    ("mrr", 1 / 2),
    ("mrr@1", 0.0),
    ("map", (1 / 2 + 2 / 4) / 3),  # P@2 + P@4 over |G| = 3
    ("map@2", (1 / 2) / 3),
    ("r_precision", 1 / 3),  # R = 3: top 3 holds one relevant
    # exp gain: DCG = (2^3-1)/log2(3) + (2^1-1)/log2(5); IDCG = 7/1 + 3/log2(3) + 1/log2(4)
    ("ndcg@5", (7 / LOG2_3 + 1 / LOG2_5) / (7 + 3 / LOG2_3 + 1 / 2)),
    ("ndcg", (7 / LOG2_3 + 1 / LOG2_5) / (7 + 3 / LOG2_3 + 1 / 2)),
    # cutoff 2: DCG = 7/log2(3); IDCG = 7 + 3/log2(3)
    ("ndcg@2", (7 / LOG2_3) / (7 + 3 / LOG2_3)),
    # linear gain (trec_eval ndcg_cut): DCG = 3/log2(3) + 1/log2(5); IDCG = 3 + 2/log2(3) + 1/2
    ("ndcg(gain=linear)@5", (3 / LOG2_3 + 1 / LOG2_5) / (3 + 2 / LOG2_3 + 1 / 2)),
    ("context_precision", (1 / 2 + 2 / 4) / 2),  # relevant ranks 2, 4
    ("context_precision@3", 1 / 2),  # only rank 2 within the top 3
    ("context_recall", 2 / 3),
]


@pytest.mark.parametrize(("name", "expected"), CASES)
def test_graded_golden(name, expected):
    result = get_evaluator(name).evaluate(GRADED)
    assert result.error is None
    assert result.score == pytest.approx(expected, abs=1e-12)


def test_rel_level_threshold():
    # rel_level=2: only d2 (3) and d7 (2) are relevant -> |G| = 2, d4 (1) no longer counts
    ev = get_evaluator("recall(rel_level=2)@5")
    assert ev.evaluate(GRADED).score == pytest.approx(1 / 2)
    assert get_evaluator("precision(rel_level=2)@5").evaluate(GRADED).score == pytest.approx(1 / 5)
    # nDCG's gains do not depend on the binary threshold
    assert get_evaluator("ndcg(rel_level=2)@5").evaluate(GRADED).score == pytest.approx(
        get_evaluator("ndcg@5").evaluate(GRADED).score
    )


def test_fractional_grades_are_not_truncated():
    s = sample([{"id": "a"}, {"id": "b"}], relevant={"a": 0.5, "b": 1.5})
    # exp gain: DCG = (2^.5-1)/1 + (2^1.5-1)/log2(3); IDCG = (2^1.5-1) + (2^.5-1)/log2(3)
    g05, g15 = 2**0.5 - 1, 2**1.5 - 1
    expected = (g05 + g15 / LOG2_3) / (g15 + g05 / LOG2_3)
    assert get_evaluator("ndcg@2").evaluate(s).score == pytest.approx(expected)
    # binary: 0.5 < rel_level 1 -> only b relevant, at rank 2
    assert get_evaluator("mrr").evaluate(s).score == pytest.approx(0.5)


def test_empty_contexts_score_zero_with_reason():
    s = sample([], relevant=["d1", "d2"])
    for name in ("hit_rate@5", "recall@5", "precision@5", "mrr", "map", "ndcg@5", "r_precision",
                 "context_precision", "context_recall"):
        r = get_evaluator(name).evaluate(s)
        assert r.score == 0.0, name
        assert "no contexts retrieved" in r.reason


def test_no_labels_no_reference_is_undefined():
    s = sample(["some text"], relevant=None, reference=None)
    for name in ("hit_rate@5", "recall@5", "mrr", "ndcg@5", "context_recall"):
        r = get_evaluator(name).evaluate(s)
        assert r.score is None and r.error is None
        assert "undefined" in r.reason


def test_context_recall_without_labels_reason():
    s = sample(["Paris is the capital of France."], reference="Paris")
    r = get_evaluator("context_recall").evaluate(s)
    assert r.score is None
    assert r.reason == "recall undefined: no labelled relevant chunks"
    for name in ("recall@5", "map", "r_precision"):
        assert get_evaluator(name).evaluate(s).score is None


def test_labels_present_but_none_relevant():
    s = sample([{"id": "a"}, {"id": "b"}], relevant={"a": 0, "b": -1})
    # |G| = 0: recall and AP are 0 as in trec_eval; nDCG has IDCG 0 -> 0
    assert get_evaluator("recall@2").evaluate(s).score == 0.0
    assert get_evaluator("map").evaluate(s).score == 0.0
    assert get_evaluator("ndcg@2").evaluate(s).score == 0.0
    assert get_evaluator("hit_rate@2").evaluate(s).score == 0.0


def test_duplicated_contexts_count_once():
    s = sample([{"id": "d2"}, {"id": "d2"}, {"id": "d4"}], relevant=["d2", "d4"])
    # rel = [1, 0, 1]: the second d2 is a duplicate
    assert get_evaluator("recall@2").evaluate(s).score == pytest.approx(1 / 2)
    assert get_evaluator("precision@2").evaluate(s).score == pytest.approx(1 / 2)
    assert get_evaluator("map").evaluate(s).score == pytest.approx((1 / 1 + 2 / 3) / 2)
    assert get_evaluator("context_recall").evaluate(s).score == pytest.approx(1.0)


def test_reference_matching_without_labels():
    s = sample(
        [
            "Berlin is the capital of Germany.",
            "The capital of France is Paris, a city on the Seine.",
            "France borders Spain.",
        ],
        reference="the capital of France is Paris",
    )
    # context 2 contains the reference as a token sequence -> relevant at rank 2 only
    assert get_evaluator("mrr").evaluate(s).score == pytest.approx(1 / 2)
    assert get_evaluator("hit_rate@1").evaluate(s).score == 0.0
    assert get_evaluator("precision@3").evaluate(s).score == pytest.approx(1 / 3)
    assert get_evaluator("context_precision").evaluate(s).score == pytest.approx(1 / 2)
    r = get_evaluator("ndcg@3").evaluate(s)
    # content words of the reference: {capital, france, paris}; overlaps: 1/3, 3/3, 1/3
    # gains (exp): 2^(1/3)-1, 1, 2^(1/3)-1 ; IDCG from the same gains sorted: 1, g, g
    g = 2 ** (1 / 3) - 1
    dcg = g / 1 + 1 / LOG2_3 + g / 2
    idcg = 1 / 1 + g / LOG2_3 + g / 2
    assert r.score == pytest.approx(dcg / idcg)
    assert r.details["relevance_from"] == "reference"


def test_text_labels_match_retrieved_texts():
    s = sample(
        ["  THE EIFFEL tower is 330 metres tall!  ", "Unrelated text about cheese."],
        relevant=["The Eiffel Tower is 330 metres tall.", "Montmartre is a hill in Paris."],
    )
    assert get_evaluator("context_recall").evaluate(s).score == pytest.approx(1 / 2)
    assert get_evaluator("mrr").evaluate(s).score == 1.0
    r = get_evaluator("mrr").evaluate(s)
    assert r.details["matched_by"] == ["text", None]


def test_reference_miss_is_never_a_perfect_ndcg():
    s = sample(["The Louvre is a museum in Paris.", "France is in Europe."],
               reference="the capital of France is Paris")
    # no context contains the reference; overlaps with {capital, france, paris}: 1/3 and 1/3
    # ideal = retrieved gains plus a perfect context (1.0): [1, 1/3, 1/3]
    g = 2 ** (1 / 3) - 1
    dcg = g / 1 + g / LOG2_3
    idcg = 1 / 1 + g / LOG2_3
    r = get_evaluator("ndcg@2").evaluate(s)
    assert r.score == pytest.approx(dcg / idcg)
    assert r.score < 1 and get_evaluator("mrr").evaluate(s).score == 0.0


@pytest.mark.parametrize("top", [1024, 1100, 5000])
def test_ndcg_of_grades_whose_exponential_gain_overflows_a_float(top):
    # d2 (grade 1) at rank 1, d1 (grade top) at rank 2; ideal order d1, d2. With g(r) = 2^r - 1 and
    # 2^top beyond a float, DCG / IDCG = (1 + (2^top - 1)/log2 3) / ((2^top - 1) + 1/log2 3), which
    # is 1/log2 3 to within 2^-top relative: far below a float's precision.
    s = sample([{"id": "d2"}, {"id": "d1"}], relevant={"d1": top, "d2": 1})
    r = get_evaluator("ndcg@5").evaluate(s)
    assert r.score == pytest.approx(1 / LOG2_3, rel=1e-12), r.reason
    # linear gain (trec_eval): (1 + top/log2 3) / (top + 1/log2 3)
    want = (1 + top / LOG2_3) / (top + 1 / LOG2_3)
    assert get_evaluator("ndcg(gain=linear)@5").evaluate(s).score == pytest.approx(want, rel=1e-12)


def test_ndcg_of_linear_grades_whose_sum_overflows_a_float():
    s = sample([{"id": "d2"}, {"id": "d1"}], relevant={"d1": 1.5e308, "d2": 1.5e308})
    assert get_evaluator("ndcg(gain=linear)@5").evaluate(s).score == pytest.approx(1.0, rel=1e-12)
