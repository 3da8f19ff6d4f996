"""Prompt tokens the server took from its own prompt cache: read from the reply's
``usage.prompt_tokens_details.cached_tokens`` (OpenAI, llama.cpp's server, vLLM), counted per judge
and per metric, and shown in the judge's status line."""

from __future__ import annotations

from types import SimpleNamespace

import pytest

from ragmeter import Sample, evaluate
from ragmeter.cli.eval_cmd import judge_status
from ragmeter.judges.backends.openai_compat import usage_of
from ragmeter.judges.base import Usage

from .fake_server import Reply


def test_cached_tokens_from_a_real_server_are_counted_per_judge_and_metric(fake_llm, make_judge):
    replies = iter([(100, 2, 60), (80, 2, None), (50, 2, 70)])  # the third claims more than was sent

    def rule(call):
        prompt, completion, cached = next(replies)
        return Reply(content="yes", usage=(prompt, completion), cached_tokens=cached)

    fake_llm.rule = rule
    judge = make_judge(max_retries=0)
    samples = [Sample(id=str(i), query=f"q{i}?", answer=f"a{i}.") for i in range(3)]
    run = evaluate(samples, ["answer_relevancy"], judge=judge)
    assert all(r["metrics"]["answer_relevancy"]["error"] is None for r in run.records)
    stats = judge.stats()
    # 60 + 0 (not reported) + 50 (70 capped at the 50 prompt tokens sent)
    assert (stats["prompt_tokens"], stats["cached_prompt_tokens"]) == (230, 110)
    assert stats["by_tag"]["answer_relevancy"]["cached_prompt_tokens"] == 110


def test_usage_of_reads_dicts_and_objects():
    assert usage_of({"prompt_tokens": 40, "completion_tokens": 3,
                     "prompt_tokens_details": {"cached_tokens": 32}}) == Usage(40, 3, 32)
    assert usage_of({"prompt_tokens": 40, "completion_tokens": 3}) == Usage(40, 3, 0)
    assert usage_of({"prompt_tokens": 40, "completion_tokens": 3, "prompt_tokens_details": None}) == Usage(40, 3)
    # litellm's reply objects carry the same names as attributes
    obj = SimpleNamespace(prompt_tokens=9, completion_tokens=1,
                          prompt_tokens_details=SimpleNamespace(cached_tokens=8))
    assert usage_of(obj) == Usage(9, 1, 8)


def test_usage_refuses_more_cached_than_sent_and_adds_the_cached_part():
    with pytest.raises(ValueError, match="cached prompt tokens <= prompt tokens, got 5 of 3"):
        Usage(3, 4, 5)
    with pytest.raises(ValueError, match="got -1 cached prompt tokens"):
        Usage(3, 4, -1)
    assert Usage(10, 1, 4) + Usage(20, 2, 6) == Usage(30, 3, 10)


def test_status_line_shows_the_share_of_prompt_reused_only_when_reported():
    base = {"calls": 2, "finished": 2, "cache_hits": 0, "errors": {}, "prompt_tokens": 800,
            "completion_tokens": 200, "cost": None}
    # 600 of 800 prompt tokens
    assert "1,000 tokens (75% prompt reuse), cost unknown" in judge_status({**base, "cached_prompt_tokens": 600})
    assert "1,000 tokens, cost unknown" in judge_status({**base, "cached_prompt_tokens": 0})
    assert "1,000 tokens, cost unknown" in judge_status(base)
