"""lexical_faithfulness: hand-computed golden values, the sentence rule, edge cases, parameters."""

from __future__ import annotations

import pytest

from ragmeter import InvalidParameterError, Sample, get_evaluator
from ragmeter.metrics.lexical.lexical_faithfulness import content_tokens, lexical_faithfulness, split_sentences

CONTEXT = "The Eiffel Tower is located in Paris. It was completed in 1889 and is 330 metres tall."
# context vocabulary: the eiffel tower is located in paris it was completed 1889 and 330 metres tall
ANSWER = ("The Eiffel Tower is in Paris. It was completed in 1889. "
          "It was designed by Gustave Eiffel's rival, a famous Spanish architect.")
# S1 content tokens {eiffel, tower, paris}: 3/3 in the contexts -> precision 1, supported
# S2 {completed, 1889}: 2/2 -> 1, supported
# S3 {designed, gustave, eiffel, s, rival, famous, spanish, architect}: only 'eiffel' -> 1/8 = 0.125
# score = 2/3; mean precision = (1 + 1 + 0.125) / 3 = 0.708333...


def ev(answer, contexts, name="lexical_faithfulness"):
    return get_evaluator(name).evaluate(Sample(id="s", answer=answer, contexts=contexts))


def test_golden():
    r = ev(ANSWER, [CONTEXT])
    assert r.score == pytest.approx(2 / 3)
    d = r.details
    assert d["threshold"] == 0.5 and d["supported"] == 2 and d["sentences_counted"] == 3
    assert d["mean_precision"] == pytest.approx((1 + 1 + 0.125) / 3)
    assert [s["precision"] for s in d["sentences"]] == pytest.approx([1.0, 1.0, 0.125])
    assert [s["supported"] for s in d["sentences"]] == [True, True, False]
    assert d["sentences"][2]["unsupported_tokens"] == ["designed", "gustave", "s", "rival", "famous", "spanish",
                                                       "architect"]
    assert "2 of 3 sentence(s)" in r.reason and "least supported" in r.reason


def test_threshold_parameter():
    r = ev(ANSWER, [CONTEXT], "lexical_faithfulness(threshold=0.1)")
    assert r.name == "lexical_faithfulness(threshold=0.1)"
    assert r.score == 1.0  # 0.125 >= 0.1
    assert ev(ANSWER, [CONTEXT], "lexical_faithfulness(threshold=1.0)").score == pytest.approx(2 / 3)


def test_precision_equal_to_threshold_is_supported():
    # {paris, beautiful}: 1 of 2 in the contexts -> 0.5 >= 0.5
    assert lexical_faithfulness("Paris is beautiful.", [CONTEXT]) == 1.0
    assert lexical_faithfulness("Paris is beautiful.", [CONTEXT], threshold=0.51) == 0.0


def test_contexts_are_joined():
    # {eiffel, tower, 1889}: eiffel, tower from the first context, 1889 from the second
    assert ev("Eiffel Tower, 1889.", ["Eiffel Tower", "Finished 1889"]).score == 1.0


def test_list_markers_and_lines():
    answer = "1. Paris hosts the tower.\n2. Lyon hosts nothing."
    # S1 {paris, hosts, tower} 3/3; S2 {lyon, hosts, nothing} 1/3 -> 1 of 2
    r = ev(answer, ["Paris hosts the tower"])
    assert r.score == 0.5 and r.details["sentences_counted"] == 2


@pytest.mark.parametrize(("text", "sentences"), [
    ("One. Two! Three? Four… Five", ["One.", "Two!", "Three?", "Four…", "Five"]),
    ("It is 3.5 metres tall. Yes.", ["It is 3.5 metres tall.", "Yes."]),
    ("- first item\n- second item\n\n* third", ["first item", "second item", "third"]),
    ("a) alpha b) beta", ["alpha b) beta"]),  # markers only at the start of a line
    ("巴黎是法国的首都。它很美。", ["巴黎是法国的首都。", "它很美。"]),
    ("e.g. this splits", ["e.g.", "this splits"]),  # documented limitation
    ("", []),
])
def test_sentence_rule(text, sentences):
    assert split_sentences(text) == sentences


def test_content_tokens():
    assert content_tokens("It is THE Tower, the tower of Paris") == ["tower", "paris"]


def test_sentences_without_content_are_not_counted():
    r = ev("Paris. It is what it is.", [CONTEXT])
    assert r.score == 1.0 and r.details["sentences_counted"] == 1


def test_no_contexts_scores_zero():
    r = ev("The tower is in Paris.", [])
    assert r.score == 0.0 and "no contexts retrieved" in r.reason


@pytest.mark.parametrize(("answer", "contexts", "reason"), [
    (None, [CONTEXT], "no answer"),
    ("", [CONTEXT], "no content word"),
    ("It is what it is.", [CONTEXT], "no content word"),
    ("Paris.", [{"id": "d1"}, {"id": "d2"}], "no text"),
])
def test_undefined(answer, contexts, reason):
    r = ev(answer, contexts)
    assert r.score is None and r.status == "undefined" and reason in r.reason


@pytest.mark.parametrize("name", ["lexical_faithfulness(threshold=0)", "lexical_faithfulness(threshold=1.5)",
                                  "lexical_faithfulness(threshold=-1)", "lexical_faithfulness(threshold=high)"])
def test_bad_threshold(name):
    with pytest.raises(InvalidParameterError, match="threshold"):
        get_evaluator(name)


def test_default_name_drops_default_threshold():
    assert get_evaluator("lexical_faithfulness(threshold=0.5)").name == "lexical_faithfulness"
