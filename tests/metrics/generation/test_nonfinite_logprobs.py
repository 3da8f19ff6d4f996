"""A log-probability that is not a finite number (``Infinity``, ``NaN``, ``-Infinity`` as a lenient
server writes them) is unusable: the value falls back to the judge's hard word or rating, the
details say why, and nothing is computed from it.

The replies come through the loopback OpenAI-compatible server, whose JSON encoder writes
``Infinity`` / ``NaN`` literally, so the real backend reads them as a client of such a server would.
"""

from __future__ import annotations

import json
import math
from typing import Any

import pytest

from ragmeter import Sample, evaluate
from tests.judges.fake_server import Reply

from .rules import answering, judge_rule

INF, NAN = float("inf"), float("nan")


def _strict(obj: Any) -> Any:
    """``obj`` through a JSON encoder and parser that refuse NaN and infinities."""
    def refuse(c: str) -> Any:
        raise ValueError(f"not strict JSON: {c}")

    return json.loads(json.dumps(obj, allow_nan=False), parse_constant=refuse)


def _word(word: str, alts: dict[str, float]) -> Reply:
    """A one-token reply ``word`` whose alternatives carry the given raw log-probabilities."""
    return Reply(content=word, logprobs=[{"token": word, "logprob": alts.get(word, math.log(0.5)),
                                          "top_logprobs": [{"token": a, "logprob": lp} for a, lp in alts.items()]}])


SAMPLE = Sample.model_validate({"id": "a", "query": "What is the capital of France?", "answer": "Paris.",
                                "reference": "Paris", "contexts": ["Paris is the capital of France."]})

#: (log P("yes"), log P("no")) a server sent, the judge's word being "yes"
BAD = [(INF, math.log(0.3)), (NAN, math.log(0.3)), (math.log(0.7), INF), (-INF, INF), (math.log(0.7), NAN)]


@pytest.mark.parametrize(("lp_yes", "lp_no"), BAD)
@pytest.mark.parametrize("metric", ["answer_relevancy", "correctness", "context_relevancy"])
def test_a_non_finite_log_probability_falls_back_to_the_hard_word(fake_llm, make_judge, metric, lp_yes, lp_no):
    fake_llm.rule = lambda call: _word("yes", {"yes": lp_yes, "no": lp_no})
    run = evaluate([SAMPLE], [metric], judge=make_judge())
    r = run.records[0]["metrics"][metric]
    assert r["error"] is None and r["score"] == 1.0  # the word "yes", not arithmetic on the numbers
    assert any("non-finite log-probability" in n for n in r["details"]["notes"])
    assert _strict(run.records) and _strict(run.summary_dict())
    assert run.summary()[metric]["mean"] == 1.0


def test_a_non_finite_digit_log_probability_falls_back_to_the_hard_rating(fake_llm, make_judge):
    head = '{"reason": "same capital", "rating": '
    logprobs = [{"token": head, "logprob": 0.0, "top_logprobs": []},
                {"token": "8", "logprob": math.log(0.5),
                 "top_logprobs": [{"token": "8", "logprob": math.log(0.5)}, {"token": "9", "logprob": NAN},
                                  {"token": "7", "logprob": math.log(0.1)}]},
                {"token": "}", "logprob": 0.0, "top_logprobs": []}]
    fake_llm.rule = answering("Graded", Reply(content=head + "8}", logprobs=logprobs), judge_rule)
    run = evaluate([SAMPLE], ["correctness(scale=graded)"], judge=make_judge())
    r = run.records[0]["metrics"]["correctness(scale=graded)"]
    assert r["error"] is None and r["score"] == pytest.approx(0.8)  # the hard rating 8 of 10
    assert r["details"]["scoring"] == "hard" and r["details"]["weighted_rating"] is None
    assert any("non-finite log-probability" in n for n in r["details"]["notes"])
    assert _strict(run.records)
