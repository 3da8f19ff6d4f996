"""faithfulness / hallucination_rate with ``mode=inline``: one call lists the answer's claims, each
with its evidence and verdict. Expected scores are computed by hand from the token
probabilities written out here, with P(yes) / (P(yes) + P(no)) per claim."""

from __future__ import annotations

import json
import math

import pytest

from ragmeter import Sample, evaluate
from ragmeter.judges import Completion, FunctionBackend, Judge
from ragmeter.judges.base import TokenLogprob

ANSWER = "It was completed in 1889 and designed by Gustave Eiffel."
QUERY = "When was the Eiffel Tower completed?"


def sample(answer: str = ANSWER, contexts: list[str] | None = None) -> Sample:
    return Sample.model_validate({"id": "a", "query": QUERY, "answer": answer,
                                  "contexts": contexts or ["The Eiffel Tower was completed in March 1889 in Paris."]})


def inline_reply(items: list[tuple[str, TokenLogprob]], no_facts: str = "no") -> Completion:
    """The reply of check_answer_claims spelled token by token, each verdict token at its value."""
    toks = [TokenLogprob('{"claims": [', -0.01)]
    for i, (claim, verdict) in enumerate(items):
        sep = ", " if i else ""
        toks += [TokenLogprob(f'{sep}{{"claim": {json.dumps(claim)}, "evidence": "none", "supported": "', -0.01),
                 verdict, TokenLogprob('"}', -0.01)]
    toks.append(TokenLogprob(f'], "no_facts": "{no_facts}"}}', -0.01))
    return Completion("".join(t.token for t in toks), logprobs=tuple(toks))


def judge_of(reply):
    seen: list = []

    async def h(request):
        seen.append(request)
        return reply(request) if callable(reply) else reply

    return Judge(FunctionBackend(h), cache=False), seen


YES = TokenLogprob("yes", math.log(0.6), (("yes", math.log(0.6)), ("no", math.log(0.2)), ("Yes", math.log(0.1))))
NO = TokenLogprob("no", math.log(0.5), (("no", math.log(0.5)), ("yes", math.log(0.3))))


def test_inline_is_the_mean_p_yes_from_one_call_shared_by_both_metrics():
    claims = ["The Eiffel Tower was completed in 1889.", "The Eiffel Tower was designed by Gustave Eiffel."]
    judge, seen = judge_of(inline_reply([(claims[0], YES), (claims[1], NO)]))
    names = ["faithfulness(mode=inline)", "hallucination_rate(mode=inline)"]
    m = evaluate([sample()], names, judge=judge).records[0]["metrics"]
    s1, s2 = 0.7 / 0.9, 0.3 / 0.8  # (0.6 + 0.1) / (0.6 + 0.1 + 0.2); 0.3 / (0.3 + 0.5)
    f = m[names[0]]
    assert f["score"] == pytest.approx((s1 + s2) / 2)
    assert m[names[1]]["score"] == pytest.approx(1 - (s1 + s2) / 2)
    assert [c["claim"] for c in f["details"]["claims"]] == claims
    assert [c["supported"] for c in f["details"]["claims"]] == [True, False]
    assert [c["p_yes"] for c in f["details"]["claims"]] == pytest.approx([s1, s2])
    assert f["details"]["scoring"] == "probability"
    assert len(seen) == 1 and seen[0].schema_name == "InlineClaims"
    prompt = seen[0].messages[-1].content
    assert "completed in March 1889" in prompt and ANSWER in prompt and QUERY in prompt


def test_inline_without_logprobs_is_the_share_of_supported_claims():
    reply = json.dumps({"claims": [
        {"claim": "The Eiffel Tower was completed in 1889.", "evidence": "completed in March 1889", "supported": "yes"},
        {"claim": "The Eiffel Tower was designed by Gustave Eiffel.", "evidence": "none", "supported": "no"},
        {"claim": "The Eiffel Tower was completed in Paris.", "evidence": "none", "supported": "no"}],
        "no_facts": "no"})
    judge, _ = judge_of(reply)
    f = evaluate([sample(ANSWER + " It is in Paris.")], ["faithfulness(mode=inline)"],
                 judge=judge).records[0]["metrics"]["faithfulness(mode=inline)"]
    assert f["score"] == pytest.approx(1 / 3) and f["details"]["scoring"] == "hard"
    assert f["details"]["claims"][0]["quote"] == "completed in March 1889"
    assert f["details"]["claims"][1]["quote"] == ""  # "none" is no evidence
    assert f["reason"].startswith("1 of 3 claims supported")


def test_inline_drops_a_claim_the_answer_never_made_with_its_verdict():
    invented = "The Eiffel Tower is 330 metres tall."
    judge, _ = judge_of(inline_reply([("The Eiffel Tower was completed in 1889.", YES), (invented, NO)]))
    f = evaluate([sample("It was completed in 1889.")], ["faithfulness(mode=inline)"],
                 judge=judge).records[0]["metrics"]["faithfulness(mode=inline)"]
    assert f["score"] == pytest.approx(0.7 / 0.9)  # the invented claim's "no" does not count
    assert f["details"]["ungrounded_claims"] == [{"claim": invented, "grounding": 0.0}]


def test_inline_edge_cases_no_facts_no_claim_all_ungrounded_and_no_call_cases():
    # answers the offline rules must check (a greeting would score 1.0 with no call)
    judge, seen = judge_of(inline_reply([], no_facts="yes"))
    f = evaluate([sample("It depends on the situation.")], ["faithfulness(mode=inline)"],
                 judge=judge).records[0]["metrics"]["faithfulness(mode=inline)"]
    assert f["score"] == 1.0 and "no factual claim" in f["reason"]
    judge, _ = judge_of(inline_reply([], no_facts="no"))
    f = evaluate([sample("It depends.")], ["faithfulness(mode=inline)"], judge=judge).records[0]["metrics"][
        "faithfulness(mode=inline)"]
    assert f["score"] is None and f["error"] is None and "no_facts" in f["reason"]
    judge, _ = judge_of(inline_reply([("Paris has ten million cats.", YES)]))
    f = evaluate([sample()], ["faithfulness(mode=inline)"], judge=judge).records[0]["metrics"][
        "faithfulness(mode=inline)"]
    assert f["score"] is None and "absent from the answer" in f["reason"]
    judge, seen = judge_of(inline_reply([]))
    run = evaluate([sample(""), sample(contexts=[" "])], ["faithfulness(mode=inline)"], judge=judge)
    assert [r["metrics"]["faithfulness(mode=inline)"]["score"] for r in run.records] == [1.0, 0.0]
    assert seen == []


def test_inline_unreadable_reply_is_an_error_not_a_score():
    judge, seen = judge_of('{"claims": [{"claim": "x"}], "no_facts": "no"}')  # no evidence, no verdict
    f = evaluate([sample()], ["faithfulness(mode=inline)"], judge=judge).records[0]["metrics"][
        "faithfulness(mode=inline)"]
    assert f["score"] is None and f["error"] is not None and f["error"]["type"] == "JudgeParseError"
    assert len(seen) == 2  # the reply and one repair


def test_inline_scoring_hard_asks_no_logprobs():
    judge, seen = judge_of(inline_reply([("The Eiffel Tower was completed in 1889.", NO)]))
    f = evaluate([sample("It was completed in 1889.")], ["faithfulness(mode=inline,scoring=hard)"],
                 judge=judge).records[0]["metrics"]["faithfulness(mode=inline,scoring=hard)"]
    assert f["score"] == 0.0 and seen[0].top_logprobs is None
