"""A server's token counts are evidence of cost only when they are counts: a negative one is
refused (an error on the call, never a negative cost)."""

from __future__ import annotations

import pytest

from ragmeter import Sample, evaluate
from ragmeter.judges.base import Usage

from .fake_server import Reply


@pytest.mark.parametrize("usage", [(-48_000_000, 5), (10, -3)])
def test_negative_token_usage_is_an_error_on_the_sample_never_a_negative_cost(fake_llm, make_judge, usage):
    fake_llm.rule = lambda call: Reply(content="yes", usage=usage)
    judge = make_judge(prices={"fake-model": (1.0, 1.0)}, max_retries=0)
    run = evaluate([Sample(id="a", query="q?", answer="a.")], ["answer_relevancy"], judge=judge)
    r = run.records[0]["metrics"]["answer_relevancy"]
    assert r["score"] is None and "expected token counts >= 0" in r["error"]["message"]
    assert judge.stats()["cost"] == 0.0


def test_usage_refuses_negative_counts():
    with pytest.raises(ValueError, match="expected token counts >= 0, got -1 prompt tokens"):
        Usage(-1, 2)
    assert Usage(3, 4).total_tokens == 7
