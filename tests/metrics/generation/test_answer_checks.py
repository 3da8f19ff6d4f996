"""faithfulness's answer checks (``checks=numbers_names``, the default with ``mode=claims``): the
claims' support times the share of the numbers and name runs of the answer's check-worthy
sentences that the contexts or the question hold; by hand on three rows."""

from __future__ import annotations

import json
import math

import pytest

from ragmeter import Sample, evaluate
from ragmeter.errors import InvalidParameterError
from ragmeter.judges import Completion, FunctionBackend, Judge
from ragmeter.judges.base import TokenLogprob
from ragmeter.registry import get_evaluator

CTX = "The Harrowgate footbridge opened on 14 May 2019. Its steel span is 142 metres long."
QUESTION = "When did the Harrowgate footbridge open?"

#: per answer: the claims the judge lists and its hard verdicts (no log-probabilities: support 1/0)
REPLIES = {
    "It opened in May 2019.": (["The footbridge opened in May 2019."], ["yes"]),
    "It opened in May 2019, designed by Otto Brandt of Leeds.":
        (["The footbridge opened in May 2019.", "The footbridge was designed by Otto Brandt of Leeds."],
         ["yes", "yes"]),
    "Thanks for asking, Anna! It opened in 2019 and cost 4 million pounds.":
        (["The footbridge opened in 2019.", "The footbridge cost 4 million pounds."], ["yes", "no"]),
}


def judge() -> Judge:
    async def h(request):
        text = request.messages[-1].content
        if "For each numbered statement" in text:  # the verdict list: the row whose every claim it lists
            claims, verdicts = max((r for r in REPLIES.values() if all(c in text for c in r[0])),
                                   key=lambda r: len(r[0]))
            return Completion(json.dumps({"verdicts": [{"statement": i, "evidence": "none", "supported": v}
                                                       for i, v in enumerate(verdicts, 1)]}))
        claims, _ = next(r for a, r in REPLIES.items() if a in text)
        return Completion(json.dumps({"claims": claims, "no_facts": "no"}))

    return Judge(FunctionBackend(h), cache=False)


def rows() -> list[Sample]:
    return [Sample.model_validate({"id": f"r{i}", "query": QUESTION, "contexts": [CTX], "answer": a})
            for i, a in enumerate(REPLIES, 1)]


def test_the_answer_checks_multiply_the_claims_support_by_hand():
    names = ["faithfulness", "hallucination_rate", "faithfulness(checks=none)"]
    recs = [r["metrics"] for r in evaluate(rows(), names, judge=judge(), embedder=None).records]
    # r1: 1 of 1 claims; 2019 and the month "May" (next to a number) are in the context: share 1 -> 1.0
    # r2: 2 of 2 claims (the judge is wrong on the second); 2019 and May pass, the name runs "Otto
    #     Brandt" and "Leeds" are in neither the context nor the question: 2 of 4 -> 0.5
    # r3: 1 of 2 claims; the greeting's "Anna" is not checked (not a check-worthy sentence); 2019
    #     passes, 4 (million pounds) fails: 1 of 2 -> 0.25
    assert [m["faithfulness"]["score"] for m in recs] == pytest.approx([1.0, 0.5, 0.25])
    assert [m["hallucination_rate"]["score"] for m in recs] == pytest.approx([0.0, 0.5, 0.75])
    assert [m["faithfulness(checks=none)"]["score"] for m in recs] == [1.0, 1.0, 0.5]
    d = recs[1]["faithfulness"]["details"]
    assert d["answer_checks"] == [{"kind": "number", "text": "2019", "passed": True},
                                  {"kind": "name", "text": "Otto Brandt", "passed": False},
                                  {"kind": "name", "text": "Leeds", "passed": False},
                                  {"kind": "name", "text": "May", "passed": True}]
    assert d["answer_checks_share"] == pytest.approx(0.5)
    assert recs[1]["faithfulness"]["reason"] == (
        "2 of 2 claims supported by the context; times 2 of 4 numbers and names found in the context or the "
        "question (0.500; not found: 'Otto Brandt', 'Leeds')")
    assert recs[0]["faithfulness"]["reason"] == "1 of 1 claims supported by the context"
    assert "answer_checks" not in recs[1]["faithfulness(checks=none)"]["details"]


def test_a_name_the_question_holds_passes():
    # the answer's name run "Harrowgate" is in the question, not in the context: it passes, as 2019 does
    answer = "The Harrowgate bridge opened in 2019."

    async def h(request):
        if "For each numbered statement" in request.messages[-1].content:
            return Completion(json.dumps({"verdicts": [{"statement": 1, "evidence": "none", "supported": "yes"}]}))
        return Completion(json.dumps({"claims": [answer], "no_facts": "no"}))

    row = Sample.model_validate({"id": "q", "query": QUESTION, "contexts": ["It opened on 14 May 2019."],
                                 "answer": answer})
    j = Judge(FunctionBackend(h), cache=False)
    f = evaluate([row], ["faithfulness"], judge=j, embedder=None).records[0]["metrics"]["faithfulness"]
    assert f["details"]["answer_checks"] == [{"kind": "number", "text": "2019", "passed": True},
                                             {"kind": "name", "text": "Harrowgate", "passed": True}]
    assert f["score"] == 1.0


@pytest.mark.parametrize("mode", ["direct", "inline"])
def test_the_answer_checks_apply_to_mode_claims_and_sentences_only(mode):
    j = judge()
    assert get_evaluator(f"faithfulness(mode={mode})", judge=j).params["checks"] == "none"
    with pytest.raises(InvalidParameterError, match="checks=numbers_names applies to mode=claims and mode=sentences"):
        get_evaluator(f"faithfulness(mode={mode},checks=numbers_names)", judge=j)
    assert get_evaluator("faithfulness", judge=j).params["checks"] == "numbers_names"
    assert get_evaluator("faithfulness(mode=sentences)", judge=j).params["checks"] == "none"


def test_the_answer_checks_multiply_one_word_per_sentence_by_hand():
    # one yes/no word per check-worthy sentence, P(yes) from the token probabilities
    p_yes = {"It opened in May 2019.": (0.6, 0.2),                          # 0.6 / 0.8 = 0.75
             "It was designed by Otto Brandt of Leeds.": (0.9, 0.1)}        # 0.9
    seen: list[str] = []

    async def h(request):
        claim = request.messages[-1].content.split("<statement>\n", 1)[1].split("\n</statement>", 1)[0]
        seen.append(claim)
        yes, no = p_yes[claim]
        tok = TokenLogprob("yes" if yes >= no else "no", math.log(max(yes, no)),
                           (("yes", math.log(yes)), ("no", math.log(no))))
        return Completion(tok.token, logprobs=(tok,))

    answer = "Thanks, Anna! It opened in May 2019. It was designed by Otto Brandt of Leeds."
    row = Sample.model_validate({"id": "s", "query": QUESTION, "contexts": [CTX], "answer": answer})
    names = ["faithfulness(checks=numbers_names,mode=sentences)", "faithfulness(mode=sentences)"]
    m = evaluate([row], names, judge=Judge(FunctionBackend(h), cache=False), embedder=None).records[0]["metrics"]
    # mean support (0.75 + 0.9) / 2 = 0.825; the checks of the two check-worthy sentences (the greeting's
    # "Anna" is not one): 2019 and May found, "Otto Brandt" and "Leeds" in neither the context nor the
    # question: 2 of 4 -> 0.825 * 0.5 = 0.4125
    assert m[names[1]]["score"] == pytest.approx(0.825)
    assert m[names[0]]["score"] == pytest.approx(0.4125)
    assert m[names[0]]["details"]["answer_checks_share"] == pytest.approx(0.5)
    assert sorted(seen) == sorted(p_yes)  # two calls, shared by both metrics


def test_a_numbered_list_is_not_checked_for_its_markers():
    from ragmeter.metrics.generation._checkworthy import split_claims
    from ragmeter.metrics.generation.faithfulness import answer_checks

    answer = "Capitals:\n1. Paris is the capital of France.\n2) Rome is the capital of Italy."
    row = Sample.model_validate({"id": "l", "query": "Name two capitals.", "answer": answer,
                                 "contexts": ["Paris is the capital of France. Rome is the capital of Italy."]})
    # the markers are no sentences of their own and no numbers: the checks are the two names, both found
    assert [s.text for s in split_claims(answer)] == [
        "Capitals:", "Paris is the capital of France.", "2) Rome is the capital of Italy."]
    assert answer_checks(row) == (1.0, [{"kind": "name", "text": "France", "passed": True},
                                        {"kind": "name", "text": "Italy", "passed": True}])
