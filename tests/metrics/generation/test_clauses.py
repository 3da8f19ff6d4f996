"""``faithfulness(split=clauses)``: the answer's check-worthy sentences cut offline at clause joints
(:mod:`ragmeter.metrics.generation._clauses`), on hand-cut sentences, and the metric's one call."""

from __future__ import annotations

import json
import re

import pytest

from ragmeter import Sample, evaluate
from ragmeter.errors import InvalidParameterError
from ragmeter.judges import Completion, FunctionBackend, Judge
from ragmeter.metrics.generation._clauses import answer_clauses, clauses

#: sentences and the parts a reader cuts them into by the module's rules, worked by hand
CUT_BY_HAND = [
    # rule 3: a bare "and" before a verb, three words or more each side
    ("It opened on 14 May 2019 and is 142 metres long.", ["It opened on 14 May 2019", "is 142 metres long."]),
    # rule 2: comma + "and", four words or more each side
    ("The Dunmore Museum is open Tuesday to Sunday, 10:00 to 17:00 (closed on Mondays), and adult admission "
     "is £12.", ["The Dunmore Museum is open Tuesday to Sunday, 10:00 to 17:00 (closed on Mondays)",
                 "adult admission is £12."]),
    # rule 1: a semicolon; a relative pronoun stays with its part
    ("Trim the stems; it keeps for about a week.", ["Trim the stems", "it keeps for about a week."]),
    ("The Night Watch hangs in the Rijksmuseum in Amsterdam, which reopened in 2013 after a renovation.",
     ["The Night Watch hangs in the Rijksmuseum in Amsterdam", "which reopened in 2013 after a renovation."]),
    # not cut: a list of noun phrases, two names, a range before a number, too few words, brackets
    ("The kit includes a tent, a stove, and a water filter.", None),
    ("It was opened by Queen Elizabeth II and François Mitterrand in 1994.", None),
    ("Cyclists must dismount between 7 am and 7 pm.", None),
    ("Salt and pepper, and oil.", None),
    ("The fee (waived for members, and for children) is £5.", None),
    # a bare "and" before a word that is not a listed opener is not a joint (no parser)
    ("Liquid nitrogen is pale blue and boils at -196 °C.", None),
]


@pytest.mark.parametrize(("sentence", "parts"), CUT_BY_HAND)
def test_sentences_are_cut_where_a_reader_cuts_them(sentence, parts):
    got = clauses(sentence)
    assert [t for t, _a, _b in got] == (parts or [sentence])
    assert all(sentence[a:b] == t for t, a, b in got)  # offsets into the sentence


def test_the_answers_claims_leave_out_what_is_not_a_claim():
    claims, not_claims = answer_clauses(
        "Hi Sam! Cars aren't allowed on the island, and a bike is the perfect way to explore. "
        "Do you have one?")
    assert claims == ["Cars aren't allowed on the island"]
    assert not_claims == [{"text": "Hi Sam!", "kind": "greeting"},
                          {"text": "a bike is the perfect way to explore.", "kind": "opinion"},
                          {"text": "Do you have one?", "kind": "question"}]


def test_a_sentence_none_of_whose_parts_is_a_claim_is_kept_whole():
    # whole, the sentence is a claim (a comma after an abstention makes it one); cut, each part is an
    # abstention, so the sentence stays one claim
    sentence = "The passages don't say when it opens, and the documents don't mention the price."
    assert [t for t, _a, _b in clauses(sentence)] == ["The passages don't say when it opens",
                                                       "the documents don't mention the price."]
    assert answer_clauses(sentence) == ([sentence], [])


CTX = "The Orbis Tower in Lanmouth opened in June 2011. It is 214 metres tall and has 52 floors."
QUESTION = "When did the Orbis Tower open and how tall is it?"


def _judge(seen: list[str]) -> Judge:
    async def h(request):
        text = request.messages[-1].content
        seen.append(text)
        if "For each numbered statement" not in text:
            raise AssertionError("split=clauses makes no claim call")
        statements = re.findall(r"^(\d+)\. (.+)$", text, flags=re.MULTILINE)
        # yes to a statement every number of which the context holds
        verdicts = [{"statement": int(i), "evidence": "none",
                     "supported": "yes" if all(n in CTX for n in re.findall(r"\d+", s)) else "no"}
                    for i, s in statements]
        return Completion(json.dumps({"verdicts": verdicts}))

    return Judge(FunctionBackend(h), cache=False)


def test_split_clauses_sends_one_verdict_list_of_the_parts():
    seen: list[str] = []
    row = Sample.model_validate({"id": "t", "query": QUESTION, "contexts": [CTX],
                                 "answer": "It opened in June 2011 and is 240 metres tall."})
    rec = evaluate([row], ["faithfulness(checks=none,split=clauses,veto=none)"], judge=_judge(seen),
                   embedder=None).records[0]["metrics"]["faithfulness(checks=none,split=clauses,veto=none)"]
    assert len(seen) == 1
    assert "1. It opened in June 2011" in seen[0] and "2. is 240 metres tall." in seen[0]
    assert [c["claim"] for c in rec["details"]["claims"]] == ["It opened in June 2011", "is 240 metres tall."]
    assert rec["score"] == pytest.approx(0.5)  # 1 of 2 parts supported (hard verdicts)


def test_split_clauses_leaves_contexts_past_1500_characters_to_the_claim_call():
    from ragmeter.registry import get_evaluator

    long_ctx = CTX + " " + "The lobby has a mural of the harbour painted by local artists. " * 30
    ev = get_evaluator("faithfulness(split=clauses)", judge=_judge([]))
    row = Sample.model_validate({"id": "t", "query": QUESTION, "contexts": [long_ctx],
                                 "answer": "It opened in June 2011 and is 240 metres tall."})
    short = Sample.model_validate({"id": "t", "query": QUESTION, "contexts": [CTX],
                                   "answer": "It opened in June 2011 and is 240 metres tall."})
    assert [(s.key[0], s.calls, s.exact) for s in ev.planned_calls(short)] == [("verify_clauses", 1, True)]
    # past 1,500 characters: the claim call, then one word per claim
    assert [s.key[0] for s in ev.planned_calls(row)] == ["decompose_answer", "claim_words"]


def test_split_clauses_is_refused_outside_mode_claims():
    with pytest.raises(InvalidParameterError, match="split=clauses"):
        evaluate([Sample.model_validate({"id": "t", "query": QUESTION, "contexts": [CTX], "answer": "x"})],
                 ["faithfulness(split=clauses,mode=sentences)"], judge=_judge([]), embedder=None)
