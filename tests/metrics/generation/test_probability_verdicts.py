"""Probability-weighted verdicts (direct faithfulness, claim verification), their hard fallback,
the cache key of the scoring mode, and claim grounding.

Log-probabilities come from replies recorded from the real llama-cpp-python server
(tests/judges/recorded/) or are written out token by token here; every expected score is
computed by hand from those numbers with P(yes) / (P(yes) + P(no)).
"""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest

from ragmeter import Sample, evaluate, get_evaluator
from ragmeter.errors import InvalidParameterError
from ragmeter.judges import Completion, FunctionBackend, Judge
from ragmeter.judges.backends.openai_compat import _completion_from
from ragmeter.judges.base import TokenLogprob
from ragmeter.judges.judge import judge_cache_key
from ragmeter.metrics.generation._claim_steps import expand_quote, given_quote
from ragmeter.metrics.generation._evidence import context_sentences
from ragmeter.metrics.generation._grounding import (
    GROUNDING_THRESHOLD,
    grounding,
    split_grounded,
    uncovered_sentences,
)
from ragmeter.metrics.generation._verdict import field_yes_shares, yes_share

RECORDED = Path(__file__).resolve().parents[2] / "judges" / "recorded"


def recorded(name: str) -> Completion:
    return _completion_from(json.loads((RECORDED / name).read_text())["reply"], "openai")


def sample(answer: str = "It was completed in 1889.") -> Sample:
    return Sample.model_validate({"id": "a", "query": "When was the Eiffel Tower completed?", "answer": answer,
                                  "contexts": ["The Eiffel Tower was completed in March 1889 in Paris."]})


def judge_of(handler, **kw) -> tuple[Judge, list]:
    seen: list = []

    async def h(request):
        seen.append(request)
        return await handler(request)

    kw.setdefault("cache", False)
    return Judge(FunctionBackend(h), **kw), seen


# ---- yes_share / field_yes_shares ------------------------------------------------------------------

def test_yes_share_sums_the_spellings_of_each_word():
    tok = TokenLogprob("yes", math.log(0.5), (("yes", math.log(0.5)), ("Yes", math.log(0.2)), (" no", math.log(0.1)),
                                              ("No.", math.log(0.05)), ("maybe", math.log(0.15))))
    assert yes_share(tok) == pytest.approx(0.7 / 0.85)


def test_yes_share_none_without_either_word():
    assert yes_share(TokenLogprob("{", -0.1, (("{", -0.1), ("[", -2.0)))) is None


def test_yes_share_of_the_recorded_server_verdict():
    tok = recorded("yesno_top_logprobs.json").logprobs[0]
    # recorded alternatives: no -0.9459, yes -1.3246, No -1.5308, Yes -2.0801, " yes" -7.0899
    p_yes = math.exp(-1.3246210813522339) + math.exp(-2.080106735229492) + math.exp(-7.089912414550781)
    p_no = math.exp(-0.945876955986023) + math.exp(-1.530776858329773)
    assert yes_share(tok) == pytest.approx(p_yes / (p_yes + p_no))
    assert yes_share(tok) < 0.5  # the argmax "no" agrees


def test_field_yes_shares_finds_the_boolean_value_token_in_the_recorded_json_reply():
    c = recorded("json_object_schema_logprobs.json")
    # the value token " true" (-1.067) with alternatives ' "' (-1.144) and " false" (-1.267)
    want = math.exp(-1.0670148134231567) / (math.exp(-1.0670148134231567) + math.exp(-1.267))
    got = field_yes_shares(c.logprobs, c.text, "supported")
    assert got is not None and len(got) == 1 and got[0] == pytest.approx(want, abs=1e-3)


def test_field_yes_shares_refuses_tokens_that_do_not_spell_the_text():
    toks = (TokenLogprob('{"supported": "', 0.0), TokenLogprob("yes", -0.1, (("no", -2.0),)))
    assert field_yes_shares(toks, '{"supported": "no"}', "supported") is None
    assert field_yes_shares(None, '{"supported": "no"}', "supported") is None


# ---- faithfulness(mode=direct) ---------------------------------------------------------------------

def test_direct_mode_scores_p_yes_and_hallucination_rate_shares_the_call():
    async def h(request):
        assert request.max_tokens == 1 and request.top_logprobs == 10
        return recorded("yesno_top_logprobs.json")

    judge, seen = judge_of(h)
    run = evaluate([sample()], ["faithfulness(mode=direct)", "hallucination_rate(mode=direct)"], judge=judge)
    m = run.records[0]["metrics"]
    p_yes = math.exp(-1.3246210813522339) + math.exp(-2.080106735229492) + math.exp(-7.089912414550781)
    p_no = math.exp(-0.945876955986023) + math.exp(-1.530776858329773)
    f = m["faithfulness(mode=direct)"]
    assert f["score"] == pytest.approx(p_yes / (p_yes + p_no))
    assert f["details"]["verdict"] == "no" and f["details"]["scoring"] == "probability"
    assert m["hallucination_rate(mode=direct)"]["score"] == pytest.approx(p_no / (p_yes + p_no))
    assert len(seen) == 1


@pytest.mark.parametrize(("reply", "score"), [("Yes", 1.0), ("no", 0.0), (" No.", 0.0)])
def test_direct_mode_falls_back_to_the_hard_verdict_without_logprobs(reply, score):
    async def h(request):
        return reply

    judge, _ = judge_of(h)
    r = evaluate([sample()], ["faithfulness(mode=direct)"], judge=judge).records[0]["metrics"][
        "faithfulness(mode=direct)"]
    assert r["score"] == score and r["details"]["scoring"] == "hard" and r["details"]["p_yes"] is None


def test_direct_mode_hard_scoring_asks_for_no_logprobs():
    async def h(request):
        assert request.top_logprobs is None
        return recorded("yesno_top_logprobs.json")  # logprobs present but not asked: ignored

    judge, seen = judge_of(h)
    r = evaluate([sample()], ["faithfulness(mode=direct,scoring=hard)"], judge=judge).records[0]["metrics"]
    r = next(iter(r.values()))
    assert r["score"] == 0.0 and r["details"]["scoring"] == "hard" and len(seen) == 1


def test_direct_mode_unreadable_one_word_reply_is_an_error_not_a_score():
    async def h(request):
        return "Maybe"

    judge, _ = judge_of(h)
    r = evaluate([sample()], ["faithfulness(mode=direct)"], judge=judge).records[0]["metrics"][
        "faithfulness(mode=direct)"]
    assert r["score"] is None and r["error"] is not None and "JudgeParseError" in json.dumps(r["error"])


# ---- answer_relevancy(decision=direct) -------------------------------------------------------------

def test_answer_relevancy_direct_decision_is_one_word_scored_by_p_yes():
    async def h(request):
        assert request.max_tokens == 1 and request.top_logprobs == 10 and request.json_schema is None
        text = request.messages[-1].content
        assert "When was the Eiffel Tower completed?" in text and "Reply with one word: yes or no." in text
        return recorded("yesno_top_logprobs.json")

    judge, seen = judge_of(h)
    r = evaluate([sample()], ["answer_relevancy"], judge=judge).records[0]["metrics"][
        "answer_relevancy"]
    p_yes = math.exp(-1.3246210813522339) + math.exp(-2.080106735229492) + math.exp(-7.089912414550781)
    p_no = math.exp(-0.945876955986023) + math.exp(-1.530776858329773)
    assert r["score"] == pytest.approx(p_yes / (p_yes + p_no))
    assert r["details"]["responds"] is False and r["details"]["scoring"] == "probability"
    assert r["details"]["p_yes"] == pytest.approx(p_yes / (p_yes + p_no)) and len(seen) == 1


@pytest.mark.parametrize(("reply", "score"), [("Yes", 1.0), (" no.", 0.0)])
def test_answer_relevancy_direct_decision_hard_without_logprobs(reply, score):
    async def h(request):
        return reply

    judge, _ = judge_of(h)
    r = evaluate([sample()], ["answer_relevancy"], judge=judge).records[0]["metrics"][
        "answer_relevancy"]
    assert r["score"] == score and r["details"]["scoring"] == "hard" and r["details"]["p_yes"] is None


def test_answer_relevancy_direct_decision_unreadable_word_is_an_error():
    async def h(request):
        return "Partially"

    judge, _ = judge_of(h)
    r = evaluate([sample()], ["answer_relevancy"], judge=judge).records[0]["metrics"][
        "answer_relevancy"]
    assert r["score"] is None and "JudgeParseError" in json.dumps(r["error"])


@pytest.mark.parametrize("name", ["answer_relevancy(decision=reasoned,scale=graded)",
                                  "answer_relevancy(decision=reasoned,method=questions)"])
def test_answer_relevancy_reasoned_decision_only_with_the_binary_judge_decision(name):
    from ragmeter.errors import InvalidParameterError
    from ragmeter.registry import get_evaluator

    async def h(request):
        return "yes"

    judge, _ = judge_of(h)
    with pytest.raises(InvalidParameterError, match="decision=reasoned"):
        get_evaluator(name, judge=judge, embedder=object())


# ---- chunk metrics (scale=binary, decision=direct) -----------------------------------------------

def _word(p_yes: float) -> Completion:
    """A one-token reply whose alternatives are yes (p_yes) and no (1 - p_yes)."""
    word = "yes" if p_yes >= 0.5 else "no"
    alts = (("yes", math.log(p_yes)), ("no", math.log(1 - p_yes)))
    return Completion(word, logprobs=(TokenLogprob(word, dict(alts)[word], alts),))


def test_direct_chunk_decisions_are_one_call_per_chunk_shared_by_both_chunk_metrics():
    # each chunk alone in its own one-word request; P(yes) by passage text, written out here
    p_of = {"Paris is the capital of France.": 0.9, "Cheese is made from milk.": 0.2, "France is in Europe.": 0.6}

    async def h(request):
        assert request.max_tokens == 1 and request.top_logprobs == 10 and request.json_schema is None
        text = request.messages[-1].content
        [passage] = [p for p in p_of if p in text]  # one passage per request
        return _word(p_of[passage])

    judge, seen = judge_of(h)
    smp = Sample.model_validate({"id": "c", "query": "What is the capital of France?", "contexts": list(p_of)})
    names = ["context_relevancy(scale=binary,decision=direct,scoring=auto)",
             "context_precision_llm(scale=binary,decision=direct,scoring=auto)"]
    m = evaluate([smp], names, judge=judge).records[0]["metrics"]
    cr = next(v for k, v in m.items() if k.startswith("context_relevancy"))
    cp = next(v for k, v in m.items() if k.startswith("context_precision_llm"))
    assert len(seen) == 3  # K calls, shared by the two metrics
    assert cr["score"] == pytest.approx((0.9 + 0.2 + 0.6) / 3)
    assert [c["relevant"] for c in cr["details"]["chunks"]] == [True, False, True]
    assert [c["rating"] for c in cr["details"]["chunks"]] == pytest.approx([9.0, 2.0, 6.0])
    # ratings 9, 2, 6 against the threshold 5: relevant at ranks 1 and 3 -> (1/1 + 2/3) / 2
    assert cp["score"] == pytest.approx((1 + 2 / 3) / 2) and cp["details"]["relevant_ranks"] == [1, 3]


def test_direct_chunk_decisions_with_scoring_hard_ask_no_logprobs_and_use_the_words():
    async def h(request):
        assert request.top_logprobs is None  # scoring=hard: no logprobs asked
        return "Yes" if "Paris" in request.messages[-1].content else "no"

    judge, seen = judge_of(h)
    smp = Sample.model_validate({"id": "c", "query": "Capital of France?",
                                 "contexts": ["Paris is the capital.", "Cheese.", "Paris has cats."]})
    r = evaluate([smp], ["context_relevancy(scoring=hard)"], judge=judge).records[0]["metrics"]
    assert next(iter(r.values()))["score"] == pytest.approx(2 / 3) and len(seen) == 3


def test_reasoned_chunk_decision_needs_the_binary_scale():
    from ragmeter.errors import InvalidParameterError
    from ragmeter.registry import get_evaluator

    judge, _ = judge_of(lambda request: None)
    for name in ("context_relevancy(scale=graded,decision=reasoned)",
                 "context_precision_llm(scale=graded,decision=reasoned)"):
        with pytest.raises(InvalidParameterError, match="decision=reasoned is a form of the yes/no decision"):
            get_evaluator(name, judge=judge)


# ---- correctness(scale=binary, decision=direct) -------------------------------------------------

def test_direct_correctness_is_p_yes_of_one_word():
    async def h(request):
        assert request.max_tokens == 1 and request.json_schema is None
        text = request.messages[-1].content
        assert "<reference>\nParis\n</reference>" in text and "Reply with one word: yes or no." in text
        return _word(0.7 if "Paris" in text.split("<answer>")[1] else 0.1)

    judge, seen = judge_of(h)
    rows = [Sample.model_validate({"id": str(i), "query": "Capital of France?", "reference": "Paris", "answer": a})
            for i, a in enumerate(["It is Paris.", "It is Lyon."])]
    name = "correctness(scale=binary,decision=direct)"
    recs = [next(iter(r["metrics"].values())) for r in evaluate(rows, [name], judge=judge).records]
    assert [r["score"] for r in recs] == pytest.approx([0.7, 0.1])
    assert [r["details"]["same_answer"] for r in recs] == [True, False] and len(seen) == 2


def test_reasoned_correctness_needs_the_binary_scale():
    from ragmeter.errors import InvalidParameterError
    from ragmeter.registry import get_evaluator

    judge, _ = judge_of(lambda request: None)
    with pytest.raises(InvalidParameterError, match="decision=reasoned is a form of the yes/no"):
        get_evaluator("correctness(scale=graded,decision=reasoned)", judge=judge)


def test_scoring_mode_is_in_the_cache_key_and_logprobs_come_back_from_the_cache(tmp_path):
    base = dict(backend="b", model="m", base_url=None, messages=[{"role": "user", "content": "x"}], temperature=0.0,
                max_tokens=1, schema=None, seed=None, template_version="t@1")
    assert judge_cache_key(**base) == judge_cache_key(**base, top_logprobs=None)  # old keys unchanged
    assert judge_cache_key(**base) != judge_cache_key(**base, top_logprobs=10)
    assert judge_cache_key(**base) != judge_cache_key(**{**base, "max_tokens": 2})

    async def h(request):
        c = recorded("yesno_top_logprobs.json")
        return c if request.top_logprobs is not None else Completion(c.text)

    names = ["faithfulness(mode=direct)", "faithfulness(mode=direct,scoring=hard)"]
    judge, seen = judge_of(h, cache=tmp_path / "c.sqlite3")
    first = evaluate([sample()], names, judge=judge).records[0]["metrics"]
    assert len(seen) == 2  # one request per scoring mode
    judge.close()
    again, seen2 = judge_of(h, cache=tmp_path / "c.sqlite3")
    second = evaluate([sample()], names, judge=again).records[0]["metrics"]
    assert seen2 == []  # both from the cache
    for n in names:
        assert second[n]["score"] == pytest.approx(first[n]["score"])
        assert second[n]["details"]["scoring"] == first[n]["details"]["scoring"]
    assert second[names[0]]["details"]["scoring"] == "probability"
    again.close()


# ---- claims: probability-weighted verification and grounding ---------------------------------------

ANSWER = "It was completed in 1889 and designed by Gustave Eiffel."


def claim_reply(schema: str, claims: list[str]) -> str:
    """The reply of faithfulness's claim call (``Claims``) or of the shared analysis (``AnswerAnalysis``)."""
    extra = {"questions": ["When?"], "evasive": "no"} if schema == "AnswerAnalysis" else {}
    return json.dumps({"claims": claims, "no_facts": "no", **extra})


def claims_handler(claims: list[str], verdict_tokens: list[TokenLogprob]):
    """The claim call (faithfulness's own, or the shared analysis) returns ``claims``; verify_claims
    returns one verdict per statement asked, spelled token by token with ``verdict_tokens`` at the
    value positions."""

    async def h(request):
        if request.schema_name in ("Claims", "AnswerAnalysis"):
            return claim_reply(request.schema_name, claims)
        n = int(request.schema_name.removeprefix("Verdicts"))  # sized(Verdicts, n): one verdict per claim
        toks: list[TokenLogprob] = [TokenLogprob('{"verdicts": [', -0.01)]
        for i in range(n):
            sep = ", " if i else ""
            toks.append(TokenLogprob(f'{sep}{{"statement": {i + 1}, "evidence": "none", "supported":', -0.01))
            toks.append(TokenLogprob(' "', -0.01))
            toks.append(verdict_tokens[i])
            toks.append(TokenLogprob('"}', -0.01))
        toks.append(TokenLogprob("]}", -0.01))
        return Completion("".join(t.token for t in toks), logprobs=tuple(toks))

    return h


def spelled_handler(claims: list[str], schema: str, tokens: list[TokenLogprob]):
    """The claim call returns ``claims``; the one other call, which must ask for ``schema``, gets
    the reply spelled by ``tokens`` (with their log-probabilities)."""

    async def h(request):
        if request.schema_name == "Claims":
            return claim_reply("Claims", claims)
        assert request.schema_name == schema
        return Completion("".join(t.token for t in tokens), logprobs=tuple(tokens))

    return h


def test_claims_mode_is_the_mean_p_yes_and_keeps_hard_verdicts():
    t1 = TokenLogprob("yes", math.log(0.6), (("yes", math.log(0.6)), ("no", math.log(0.2)), ("Yes", math.log(0.1))))
    t2 = TokenLogprob("no", math.log(0.5), (("no", math.log(0.5)), ("yes", math.log(0.3))))
    claims = ["The Eiffel Tower was completed in 1889.", "The Eiffel Tower was designed by Gustave Eiffel."]
    judge, seen = judge_of(claims_handler(claims, [t1, t2]))
    m = evaluate([sample(ANSWER)], ["faithfulness", "hallucination_rate"], judge=judge).records[0]["metrics"]
    s1, s2 = 0.7 / 0.9, 0.3 / 0.8
    # times the answer checks (checks=numbers_names, the default): 1889 is in the context, the name
    # run "Gustave Eiffel" is not (no "Gustave"): 1 of 2
    assert m["faithfulness"]["score"] == pytest.approx((s1 + s2) / 2 / 2)
    assert m["hallucination_rate"]["score"] == pytest.approx(1 - (s1 + s2) / 2 / 2)
    d = m["faithfulness"]["details"]
    assert [c["supported"] for c in d["claims"]] == [True, False]
    assert [c["p_yes"] for c in d["claims"]] == pytest.approx([s1, s2])
    assert d["scoring"] == "probability" and d["ungrounded_claims"] == []
    assert len(seen) == 2  # the claim call + verify, shared by both metrics


def test_after_quotes_asks_the_quotes_then_the_verdicts_in_one_conversation():
    # call 2: the quotes, no log-probabilities; call 3: the first call's messages, its reply as the
    # judge's turn, then the verdict question, with log-probabilities at each "supported" value
    t1 = TokenLogprob("yes", math.log(0.6), (("yes", math.log(0.6)), ("no", math.log(0.2))))
    t2 = TokenLogprob("no", math.log(0.5), (("no", math.log(0.5)), ("yes", math.log(0.3))))
    claims = ["The Eiffel Tower was completed in 1889.", "The Eiffel Tower was designed by Gustave Eiffel."]
    quotes = json.dumps({"quotes": [{"statement": 1, "evidence": "The Eiffel Tower was completed in March 1889."},
                                    {"statement": 2, "evidence": "none"}]})

    async def h(request):
        if request.schema_name == "Claims":
            return claim_reply("Claims", claims)
        if request.schema_name == "Quotes2":
            return quotes
        assert request.schema_name == "BareVerdicts2"
        toks = [TokenLogprob('{"verdicts": [{"statement": 1, "supported": "', -0.01), t1,
                TokenLogprob('"}, {"statement": 2, "supported": "', -0.01), t2, TokenLogprob('"}]}', -0.01)]
        return Completion("".join(t.token for t in toks), logprobs=tuple(toks))

    judge, seen = judge_of(h)
    name = "faithfulness(verdicts=after_quotes)"
    f = evaluate([sample(ANSWER)], [name], judge=judge).records[0]["metrics"][name]
    assert f["error"] is None, f
    s1, s2 = 0.6 / 0.8, 0.3 / 0.8
    assert f["score"] == pytest.approx((s1 + s2) / 2 / 2)  # the answer checks: 1 of 2 (as above)
    assert [c["quote"] for c in f["details"]["claims"]] == ["The Eiffel Tower was completed in March 1889.", ""]
    assert [r.schema_name for r in seen] == ["Claims", "Quotes2", "BareVerdicts2"]
    ask_quotes, ask_verdicts = seen[1], seen[2]
    assert ask_quotes.top_logprobs is None and ask_verdicts.top_logprobs == 10
    assert ask_verdicts.messages[:2] == ask_quotes.messages
    assert ask_verdicts.messages[2].role == "assistant" and ask_verdicts.messages[2].content == quotes
    assert ask_verdicts.messages[3].role == "user" and ask_verdicts.messages[3].content.startswith("Now decide")
    assert len(ask_verdicts.messages) == 4
    # its quotes are the judge's, so the quote veto can read them (refused with verdicts=bare)
    get_evaluator("faithfulness(verdicts=after_quotes,veto=quote)", judge=judge)


TOWER = ["The Eiffel Tower was completed in March 1889 in Paris. It is 330 metres tall.",
         "Gustave Eiffel's company built the tower for the World's Fair."]


def test_given_quote_is_the_sentence_of_most_rare_words_in_common():
    spans = context_sentences(TOWER)
    # "completed in 1889": the first sentence holds eiffel, tower, completed and 1889, the third
    # only eiffel and tower, so the first wins whatever the weights
    assert given_quote("The Eiffel Tower was completed in 1889.", spans) == (
        "The Eiffel Tower was completed in March 1889 in Paris.")
    # three sentences, so a word in one weighs log(1 + 3/1) = 1.386 and "tower" (in two) log(1 + 3/2)
    # = 0.916: "330", "metres" and "tall" (4.16) beat "tower" (0.916)
    assert given_quote("The tower is 330 metres tall.", spans) == "It is 330 metres tall."
    assert given_quote("Tickets are sold online.", spans) == ""  # no content word in common
    assert given_quote("The tower is tall.", []) == ""


def test_given_quotes_writes_the_quotes_offline_and_asks_the_verdicts_in_one_call():
    # one verdict call: quote_claims's messages, the offline quotes as the judge's turn, then the
    # verdict question; the judge writes only the yes/no list, P(yes) read at each value
    answer = "The Eiffel Tower was completed in 1889. The tower is 330 metres tall. Tickets are sold online."
    claims = ["The Eiffel Tower was completed in 1889.", "The tower is 330 metres tall.", "Tickets are sold online."]
    toks = [TokenLogprob('{"verdicts": [{"statement": 1, "supported": "', -0.01),
            TokenLogprob("yes", math.log(0.6), (("yes", math.log(0.6)), ("no", math.log(0.2)))),
            TokenLogprob('"}, {"statement": 2, "supported": "', -0.01),
            TokenLogprob("yes", math.log(0.9), (("yes", math.log(0.9)), ("no", math.log(0.1)))),
            TokenLogprob('"}, {"statement": 3, "supported": "', -0.01),
            TokenLogprob("no", math.log(0.7), (("no", math.log(0.7)), ("yes", math.log(0.1)))),
            TokenLogprob('"}]}', -0.01)]

    judge, seen = judge_of(spelled_handler(claims, "BareVerdicts3", toks))
    name = "faithfulness(verdicts=given_quotes)"
    smp = Sample.model_validate({"id": "t", "query": "Tell me about the Eiffel Tower.", "answer": answer,
                                 "contexts": TOWER})
    f = evaluate([smp], [name], judge=judge).records[0]["metrics"][name]
    assert f["error"] is None, f
    quotes = ["The Eiffel Tower was completed in March 1889 in Paris.", "It is 330 metres tall.", ""]
    assert [c["quote"] for c in f["details"]["claims"]] == quotes
    assert [c["p_yes"] for c in f["details"]["claims"]] == pytest.approx([0.6 / 0.8, 0.9 / 1.0, 0.1 / 0.8])
    # the answer checks: 1889, 330 metres and the name run "Eiffel Tower" are all in the contexts
    assert f["score"] == pytest.approx((0.6 / 0.8 + 0.9 + 0.1 / 0.8) / 3)
    assert [r.schema_name for r in seen] == ["Claims", "BareVerdicts3"]
    ask = seen[1]
    assert ask.top_logprobs == 10 and len(ask.messages) == 4
    assert ask.messages[1].role == "user" and "copy the sentence of the context" in ask.messages[1].content
    assert ask.messages[2].role == "assistant"
    assert json.loads(ask.messages[2].content) == {"quotes": [
        {"statement": 1, "evidence": quotes[0]}, {"statement": 2, "evidence": quotes[1]},
        {"statement": 3, "evidence": "none"}]}
    assert ask.messages[3].role == "user" and ask.messages[3].content.startswith("Now decide")
    # the quotes are not the judge's, so the quote veto cannot read them
    with pytest.raises(InvalidParameterError):
        get_evaluator("faithfulness(verdicts=given_quotes,veto=quote)", judge=judge)


def test_expand_quote_gives_back_the_sentence_that_opens_with_the_words():
    spans = context_sentences(TOWER)
    assert expand_quote("The Eiffel Tower was completed", spans) == (
        "The Eiffel Tower was completed in March 1889 in Paris.")
    # case and punctuation aside: "gustave eiffel s company built" opens the third sentence
    assert expand_quote("gustave eiffel's company built", spans) == (
        "Gustave Eiffel's company built the tower for the World's Fair.")
    # the words must open the sentence, and end on a word boundary
    assert expand_quote("completed in March 1889 in", spans) == "completed in March 1889 in"
    assert expand_quote("It is 33", spans) == "It is 33"
    assert expand_quote("The tower is", spans) == "The tower is"  # the claim's words, as written
    assert expand_quote("...", spans) == "..."


def test_short_quotes_asks_the_first_words_of_each_sentence_and_reads_the_sentence_whole():
    answer = "The Eiffel Tower was completed in 1889. The tower is 330 metres tall."
    claims = ["The Eiffel Tower was completed in 1889.", "The tower is 330 metres tall."]
    toks = [TokenLogprob('{"verdicts": [{"statement": 1, "evidence": "The Eiffel Tower was completed", '
                         '"supported": "', -0.01),
            TokenLogprob("yes", math.log(0.6), (("yes", math.log(0.6)), ("no", math.log(0.2)))),
            TokenLogprob('"}, {"statement": 2, "evidence": "The tower is 330", "supported": "', -0.01),
            TokenLogprob("no", math.log(0.5), (("no", math.log(0.5)), ("yes", math.log(0.3)))),
            TokenLogprob('"}]}', -0.01)]

    judge, seen = judge_of(spelled_handler(claims, "Verdicts2", toks))
    name = "faithfulness(verdicts=short_quotes)"
    smp = Sample.model_validate({"id": "t", "query": "Tell me about the Eiffel Tower.", "answer": answer,
                                 "contexts": TOWER})
    f = evaluate([smp], [name], judge=judge).records[0]["metrics"][name]
    assert f["error"] is None, f
    # the first quote opens a context sentence and is given back whole; the second opens none
    assert [c["quote"] for c in f["details"]["claims"]] == [
        "The Eiffel Tower was completed in March 1889 in Paris.", "The tower is 330"]
    assert [c["p_yes"] for c in f["details"]["claims"]] == pytest.approx([0.6 / 0.8, 0.3 / 0.8])
    assert [r.schema_name for r in seen] == ["Claims", "Verdicts2"]
    ask = seen[1].messages[-1].content
    assert "copy the first five words of the sentence of the context" in ask
    assert '"evidence": "<first five words of that sentence, or none>"' in ask
    # the quotes are cut short, so the quote veto cannot read them
    with pytest.raises(InvalidParameterError):
        get_evaluator("faithfulness(verdicts=short_quotes,veto=quote)", judge=judge)


def test_capped_quotes_caps_each_quote_in_the_schema_sent_and_reads_a_longer_one_as_written():
    claims = ["The Eiffel Tower was completed in 1889."]
    long_quote = "The Eiffel Tower was completed in March 1889 in Paris."  # 54 characters
    toks = [TokenLogprob('{"verdicts": [{"statement": 1, "evidence": "' + long_quote + '", "supported": "', -0.01),
            TokenLogprob("yes", math.log(0.8), (("yes", math.log(0.8)), ("no", math.log(0.2)))),
            TokenLogprob('"}]}', -0.01)]

    judge, seen = judge_of(spelled_handler(claims, "CappedVerdicts1", toks))
    name = "faithfulness(verdicts=capped_quotes)"
    smp = Sample.model_validate({"id": "t", "query": "When was the Eiffel Tower completed?",
                                 "answer": "The Eiffel Tower was completed in 1889.", "contexts": TOWER})
    f = evaluate([smp], [name], judge=judge).records[0]["metrics"][name]
    assert f["error"] is None, f
    # the schema caps the quote; a server that did not enforce it wrote it whole, read as written
    item = seen[1].json_schema["$defs"]["CappedVerdict"]["properties"]["evidence"]
    assert item == {"maxLength": 40, "title": "Evidence", "type": "string"}
    assert f["details"]["claims"][0]["quote"] == long_quote
    assert f["details"]["claims"][0]["p_yes"] == pytest.approx(0.8)
    assert "copy the first five words of the sentence of the context" in seen[1].messages[-1].content


def test_short_and_capped_quotes_in_one_run_each_send_their_own_verdict_list():
    # the same prompt, another reply schema: one run of both must not read one's verdicts as the other's
    claims = ["The Eiffel Tower was completed in 1889."]

    async def h(request):
        if request.schema_name == "Claims":
            return claim_reply("Claims", claims)
        return json.dumps({"verdicts": [{"statement": 1, "evidence": "The Eiffel Tower was completed",
                                         "supported": "yes"}]})

    judge, seen = judge_of(h)
    smp = Sample.model_validate({"id": "t", "query": "When was the Eiffel Tower completed?",
                                 "answer": "The Eiffel Tower was completed in 1889.", "contexts": TOWER})
    evaluate([smp], ["faithfulness(verdicts=short_quotes)", "faithfulness(verdicts=capped_quotes)"], judge=judge)
    assert sorted(r.schema_name for r in seen) == ["CappedVerdicts1", "Claims", "Verdicts1"]


def test_claims_mode_without_logprobs_is_the_share_of_supported_claims():
    claims = ["The Eiffel Tower was completed in 1889.", "The Eiffel Tower was designed by Gustave Eiffel."]

    async def h(request):
        if request.schema_name in ("Claims", "AnswerAnalysis"):
            return claim_reply(request.schema_name, claims)
        return json.dumps({"verdicts": [{"statement": 1, "evidence": "none", "supported": "yes"},
                                        {"statement": 2, "evidence": "none", "supported": "no"}]})

    judge, _ = judge_of(h)
    f = evaluate([sample(ANSWER)], ["faithfulness"], judge=judge).records[0]["metrics"]["faithfulness"]
    # 1 of 2 claims, times the answer checks' 1 of 2 ("Gustave Eiffel" is not in the context)
    assert f["score"] == 0.25 and f["details"]["scoring"] == "hard"
    assert f["details"]["answer_checks"] == [{"kind": "number", "text": "1889", "passed": True},
                                             {"kind": "name", "text": "Gustave Eiffel", "passed": False}]


def test_a_claim_the_answer_never_made_is_dropped_before_verification():
    invented = "The Eiffel Tower is 330 metres tall."
    claims = ["The Eiffel Tower was completed in 1889.", invented]
    yes = TokenLogprob("yes", math.log(0.9), (("yes", math.log(0.9)), ("no", math.log(0.1))))
    judge, seen = judge_of(claims_handler(claims, [yes, yes]))
    f = evaluate([sample()], ["faithfulness"], judge=judge).records[0]["metrics"]["faithfulness"]
    assert [c["claim"] for c in f["details"]["claims"]] == [claims[0]]
    assert f["details"]["ungrounded_claims"] == [{"claim": invented, "grounding": 0.0}]
    assert f["score"] == pytest.approx(0.9)
    verify_prompt = seen[1].messages[-1].content
    assert "330" not in verify_prompt and "completed in 1889" in verify_prompt


def test_the_sentences_no_claim_covers_are_split_into_claims_in_a_call_of_their_own():
    # the first claim call leaves out the sentence with the year; by hand: that sentence's content
    # words beyond the question's are {completed, 1889, paris} minus the question's {completed}:
    # {1889, paris}, of which the claims hold none (coverage 0 < 0.5), so it goes to a second claim
    # call as the answer, whose claim joins the verdict list
    answer = "It is made of wrought iron. It was completed in 1889 in Paris."
    first, second = ["The Eiffel Tower is made of wrought iron."], ["The Eiffel Tower was completed in 1889."]
    yes = TokenLogprob("yes", math.log(0.9), (("yes", math.log(0.9)), ("no", math.log(0.1))))
    no = TokenLogprob("no", math.log(0.8), (("no", math.log(0.8)), ("yes", math.log(0.2))))
    verdicts = claims_handler([], [yes, no])

    async def h(request):
        if request.schema_name == "Claims":
            text = request.messages[-1].content
            return claim_reply("Claims", second if "wrought" not in text else first)
        return await verdicts(request)

    judge, seen = judge_of(h)
    f = evaluate([sample(answer)], ["faithfulness"], judge=judge).records[0]["metrics"]["faithfulness"]
    assert [r.schema_name for r in seen] == ["Claims", "Claims", "Verdicts2"]
    asked = seen[1].messages[-1].content
    assert "It was completed in 1889 in Paris." in asked and "wrought" not in asked
    assert [c["claim"] for c in f["details"]["claims"]] == first + second
    assert f["score"] == pytest.approx((0.9 + 0.2) / 2)


def test_uncovered_clauses_cuts_the_left_out_sentence_offline_instead_of_a_second_claim_call():
    # the same answer and first claims as above: the sentence with the year is left out; with
    # uncovered=clauses it is cut at clause joints offline (it has none, so it stays whole) and
    # joins the verdict list: one claim call, one verdict list, and the verdicts score the two
    answer = "It is made of wrought iron. It was completed in 1889 in Paris."
    first = ["The Eiffel Tower is made of wrought iron."]
    yes = TokenLogprob("yes", math.log(0.9), (("yes", math.log(0.9)), ("no", math.log(0.1))))
    no = TokenLogprob("no", math.log(0.8), (("no", math.log(0.8)), ("yes", math.log(0.2))))
    verdicts = claims_handler([], [yes, no])

    async def h(request):
        if request.schema_name == "Claims":
            return claim_reply("Claims", first)
        return await verdicts(request)

    judge, seen = judge_of(h)
    name = "faithfulness(uncovered=clauses)"
    f = evaluate([sample(answer)], [name], judge=judge).records[0]["metrics"][name]
    assert [r.schema_name for r in seen] == ["Claims", "Verdicts2"]
    assert "It was completed in 1889 in Paris." in seen[1].messages[-1].content
    assert [c["claim"] for c in f["details"]["claims"]] == [*first, "It was completed in 1889 in Paris."]
    assert f["score"] == pytest.approx((0.9 + 0.2) / 2)


@pytest.mark.parametrize("name", ["faithfulness(mode=sentences,uncovered=clauses)",
                                  "hallucination_rate(mode=direct,uncovered=clauses)",
                                  "faithfulness(split=clauses,uncovered=clauses)"])
def test_uncovered_clauses_without_the_claim_call_is_refused_not_ignored(name):
    from ragmeter.errors import InvalidParameterError
    with pytest.raises(InvalidParameterError, match="uncovered=clauses completes the claim call"):
        get_evaluator(name, judge=Judge(FunctionBackend(lambda r: Completion("")), cache=False))


def test_uncovered_clauses_plans_no_second_claim_call_and_keeps_it_past_the_list_limit():
    from ragmeter.metrics.generation.faithfulness import uncovered_offline
    two = "It is made of wrought iron. It was completed in 1889 in Paris."
    judge = Judge(FunctionBackend(lambda r: Completion("")), cache=False)
    default, offline = get_evaluator("faithfulness", judge=judge), get_evaluator("faithfulness(uncovered=clauses)",
                                                                                  judge=judge)
    # two check-worthy sentences: the default plans half a call for the second claim call, clauses none
    assert sum(s.calls for s in default.planned_calls(sample(two))) == 2.5
    assert sum(s.calls for s in offline.planned_calls(sample(two))) == 2
    # joined contexts past 1,500 characters: each claim is judged alone, so the claim call stays
    long = Sample.model_validate({"id": "b", "query": "When was the Eiffel Tower completed?", "answer": two,
                                  "contexts": ["The Eiffel Tower was completed in March 1889. " * 40]})
    assert uncovered_offline(offline, sample(two)) and not uncovered_offline(offline, long)
    assert not uncovered_offline(default, sample(two))


def test_a_claim_both_claim_lists_invent_is_listed_once_among_the_dropped():
    answer = "It is made of wrought iron. It was completed in 1889 in Paris."
    cats = "Paris has ten million cats."
    first = ["The Eiffel Tower is made of wrought iron.", cats]
    second = [cats, "The Eiffel Tower was completed in 1889."]
    yes = TokenLogprob("yes", math.log(0.9), (("yes", math.log(0.9)), ("no", math.log(0.1))))
    verdicts = claims_handler([], [yes, yes])

    async def h(request):
        if request.schema_name == "Claims":
            return claim_reply("Claims", second if "wrought" not in request.messages[-1].content else first)
        return await verdicts(request)

    judge, seen = judge_of(h)
    f = evaluate([sample(answer)], ["faithfulness"], judge=judge).records[0]["metrics"]["faithfulness"]
    assert [r.schema_name for r in seen] == ["Claims", "Claims", "Verdicts2"]
    # by hand: its words beyond the question's {paris, ten, million, cats}, of which the answer holds paris
    assert f["details"]["ungrounded_claims"] == [{"claim": cats, "grounding": 0.25}]


def test_uncovered_sentences_by_hand():
    q = "How long is the Corran Ridge walk?"
    answer = ("Oh, you'll love it! The loop is 14 km long. It starts at the Glenmore visitor centre. "
              "Most of the climbing comes early. Bring a map.")
    # "The loop is 14 km long.": new words {loop, 14, km, long}, all in the claim -> covered;
    # "It starts at the Glenmore visitor centre.": {start, glenmore, visitor, centre}, none held -> returned;
    # "Most of the climbing comes early.": no number or name -> never returned; the greeting is no claim
    assert uncovered_sentences(["The walk is a 14 km loop and long."], answer, q) == [
        "It starts at the Glenmore visitor centre."]
    # half of its new words held (glenmore, visitor of four) is covered: 2/4 is not below 0.5
    assert uncovered_sentences(["The walk is a 14 km loop and long.", "Glenmore has a visitor car park."],
                               answer, q) == []
    assert uncovered_sentences([], "Corran Ridge.", "Where is Corran Ridge?") == []


def test_a_sentence_whose_number_or_name_no_claim_holds_is_uncovered():
    q = "What did Marie Curie win in 1911?"
    answer = "She won the Nobel Prize in Chemistry in 1911. She shared it with nobody."
    # by hand: the first sentence's new words beyond the question's {marie, curie, win, 1911} are
    # {won, nobel, prize, chemistry}: the claim holds won, nobel and prize (3/4 >= 0.5, covered by
    # words), but the name run "Chemistry" has the content word chemistry that no claim holds ->
    # uncovered; the second states no number or name
    claim = "Marie Curie won the Nobel Prize in 1911."
    assert uncovered_sentences([claim], answer, q) == ["She won the Nobel Prize in Chemistry in 1911."]
    assert uncovered_sentences(["Marie Curie won the Nobel Prize in Chemistry in 1911."], answer, q) == []
    # a number no claim holds: 14 km is held, 3 hours is not (the question holds no number)
    walk = "The loop is 14 km long and takes 3 hours."
    assert uncovered_sentences(["The walk is a 14 km long loop that takes hours."], walk, "How long is it?") == [walk]
    # a number no claim holds but the question does is not asked for again (new words {long}: held)
    assert uncovered_sentences(["The loop is long."], "The loop is 14 km long.", "Is the loop 14 km?") == []
    assert uncovered_sentences(["The loop is long."], "The loop is 14 km long.", "Is the loop long?") == [
        "The loop is 14 km long."]


def test_every_claim_ungrounded_is_undefined_with_the_reason():
    judge, seen = judge_of(claims_handler(["Paris has ten million cats."], []))
    f = evaluate([sample()], ["faithfulness"], judge=judge).records[0]["metrics"]["faithfulness"]
    assert f["score"] is None and "absent from the answer" in f["reason"] and len(seen) == 1
    # the answer's one sentence is uncovered, but asking for its claims again would be the same call
    assert f["details"]["ungrounded_claims"] == [{"claim": "Paris has ten million cats.", "grounding": 0.0}]


def test_an_uncovered_sentence_that_is_the_whole_answer_is_not_asked_again_without_the_cache():
    judge, seen = judge_of(claims_handler(["Paris has ten million cats."], []))
    two = "It was completed in 1889.  It is in Paris."  # two spaces: the joined sentences differ in text only
    evaluate([sample(two)], ["faithfulness"], judge=judge)
    assert [r.schema_name for r in seen] == ["Claims"]


def test_grounding_by_hand():
    q = "When was the Eiffel Tower completed?"
    # new words beyond the question: {1889} -> in the answer -> 1/1
    assert grounding("The Eiffel Tower was completed in 1889.", "It was completed in 1889.", q) == 1.0
    # new words: {330, metres, tall} -> none in the answer
    assert grounding("The Eiffel Tower is 330 metres tall.", "It was completed in 1889.", q) == 0.0
    # new words: {designed, gustave, eiffel?} eiffel is in the question -> {designed, gustave}; answer has
    # "design" (stem of "designed") but not gustave -> 1/2 = the threshold -> kept
    g = grounding("The tower was designed by Gustave.", "Eiffel's firm did the design.", q)
    assert g == pytest.approx(0.5) and g >= GROUNDING_THRESHOLD
    # nothing beyond the question -> 1.0
    assert grounding("The Eiffel Tower was completed.", "Yes.", q) == 1.0
    kept, dropped = split_grounded(["Completed in 1889.", "It is red."], "Completed in 1889.", q)
    assert kept == ["Completed in 1889."] and dropped == [{"claim": "It is red.", "grounding": 0.0}]


def test_binary_chunk_relevance_rates_10_p_yes_and_keeps_the_hard_decision():
    t1 = TokenLogprob("yes", math.log(0.8), (("yes", math.log(0.8)), ("no", math.log(0.2))))
    t2 = TokenLogprob("no", math.log(0.6), (("no", math.log(0.6)), ("Yes", math.log(0.2)), ("yes", math.log(0.1))))

    async def h(request):
        toks = [TokenLogprob('{"passages": [', -0.01)]
        for i, t in enumerate([t1, t2]):
            toks += [TokenLogprob(f'{", " if i else ""}{{"passage": {i + 1}, "reason": "r", "relevant": "', -0.01),
                     t, TokenLogprob('"}', -0.01)]
        toks.append(TokenLogprob("]}", -0.01))
        return Completion("".join(t.token for t in toks), logprobs=tuple(toks))

    judge, _ = judge_of(h)
    smp = Sample.model_validate({"id": "c", "query": "q?", "contexts": ["a", "b"]})
    both = evaluate([smp], ["context_relevancy(decision=reasoned)",
                            "context_precision_llm(decision=reasoned)"],
                    judge=judge).records[0]["metrics"]
    r, cp = both.values()
    assert [c["rating"] for c in r["details"]["chunks"]] == pytest.approx([8.0, 10 * 0.3 / 0.9])
    assert [c["relevant"] for c in r["details"]["chunks"]] == [True, False]
    assert cp["details"]["hard_ratings"] == [10.0, 0.0]  # the hard decisions, as judge-check's [hard] row reads
    assert r["score"] == pytest.approx((0.8 + 0.3 / 0.9) / 2)


# ---- passage_recall(scale=binary): one one-word call per section ------------------------------------------

def test_direct_passage_recall_is_one_word_per_section_on_the_section_scales():
    # P(yes) by section text, written out here; the question and returned passage come before the section
    p_of = {"Paris is the capital.": 0.9, "It is on the Seine.": 0.25, "It has 2M people.": 0.6}
    answer = "Paris is the capital of France."

    async def h(request):
        assert request.max_tokens == 1 and request.top_logprobs == 10 and request.json_schema is None
        text = request.messages[-1].content
        [section] = [s for s in p_of if f"<section>\n{s}\n</section>" in text]  # one section per request
        assert text.index("<question>") < text.index("<returned>") < text.index("<section>")
        return _word(p_of[section])

    judge, seen = judge_of(h)
    ref = ("[ESSENTIAL PASSAGE] Paris is the capital. [ESSENTIAL PASSAGE] It is on the Seine. "
           "[BONUS PASSAGE] It has 2M people.")
    smp = Sample.model_validate({"id": "p", "query": "Tell me about Paris.", "answer": answer, "reference": ref})
    r = evaluate([smp], ["passage_recall(scale=binary)"], judge=judge).records[0]["metrics"]
    r = next(iter(r.values()))
    # E1 = 1 + 4 * 0.9 = 4.6, E2 = 1 + 4 * 0.25 = 2.0, B1 = 5 * 0.6 = 3.0
    # final = min(5, (4.6 + 2.0) / 2 + 3.0 / (2 * 2 * 1)) = 3.3 + 0.75 = 4.05
    assert len(seen) == 3
    assert r["details"]["final"] == pytest.approx(4.05) and r["score"] == pytest.approx(0.81)
    # hard words: yes, no, yes -> E 5, 1; B 5 -> (5 + 1) / 2 + 5 / 4 = 4.25
    assert r["details"]["hard_final"] == pytest.approx(4.25)
    assert [s["p_yes"] for s in r["details"]["sections"]] == pytest.approx([0.9, 0.25, 0.6])
    assert r["details"]["decision"] == "direct" and "E2" in r["reason"]


def test_direct_passage_recall_plans_one_call_per_section():
    from ragmeter.registry import get_evaluator

    judge, _ = judge_of(lambda request: None)
    ev = get_evaluator("passage_recall(scale=binary)", judge=judge)
    ref = "[ESSENTIAL PASSAGE] A. [ESSENTIAL PASSAGE] B. [BONUS PASSAGE] C. [BONUS PASSAGE] D."
    smp = Sample.model_validate({"id": "p", "query": "q", "answer": "A and B.", "reference": ref})
    assert [s.calls for s in ev.planned_calls(smp)] == [4]
    assert [s.calls for s in get_evaluator("passage_recall(scale=graded)", judge=judge).planned_calls(smp)] == [1]
    empty = Sample.model_validate({"id": "e", "query": "q", "answer": " ", "reference": ref})
    assert ev.planned_calls(empty) == []  # an empty answer is scored without a call
