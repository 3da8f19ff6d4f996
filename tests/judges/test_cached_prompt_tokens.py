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


def test_cost_charges_cached_prompt_tokens_at_the_cached_price(fake_llm, make_judge):
    replies = iter([(1000, 100, 600), (500, 50, None)])

    def rule(call):
        prompt, completion, cached = next(replies)
        return Reply(content="yes", usage=(prompt, completion), cached_tokens=cached)

    fake_llm.rule = rule
    judge = make_judge(max_retries=0, prices={"fake-model": (2.0, 10.0, 0.5)})
    samples = [Sample(id=str(i), query=f"q{i}?", answer=f"a{i}.") for i in range(2)]
    run = evaluate(samples, ["answer_relevancy"], judge=judge)
    assert all(r["metrics"]["answer_relevancy"]["error"] is None for r in run.records)
    # by hand, USD per 1M tokens: (1500 - 600) x 2.0 + 600 x 0.5 + 150 x 10.0 = 1800 + 300 + 1500 = 3600
    assert judge.stats()["cost"] == pytest.approx(3600 / 1e6)


def test_a_two_number_price_charges_cached_tokens_the_input_price():
    from ragmeter.judges.pricing import PRICES, check_prices, cost_of

    usage = Usage(1000, 100, 600)
    assert cost_of(usage, (2.0, 10.0)) == pytest.approx((1000 * 2.0 + 100 * 10.0) / 1e6)
    # gpt-4o-mini: 0.15 in, 0.60 out, 0.075 cached -> 400 x 0.15 + 600 x 0.075 + 100 x 0.60 = 165 per 1M
    assert cost_of(usage, PRICES["gpt-4o-mini"]) == pytest.approx(165 / 1e6)
    assert check_prices({"m": [1, 2, 0.5]}) == {"m": (1.0, 2.0, 0.5)}
    for bad in ((1.0,), (1.0, 2.0, 3.0, 4.0), (1.0, -2.0), "cheap"):
        with pytest.raises(ValueError, match="price of 'm'"):
            check_prices({"m": bad})  # type: ignore[dict-item]


def test_judge_price_flag_and_config_take_a_cached_price():
    from ragmeter.cli._backends import parse_prices
    from ragmeter.config import Price

    assert parse_prices(("m=1,2", "n=1,2,0.25")) == {"m": (1.0, 2.0), "n": (1.0, 2.0, 0.25)}
    with pytest.raises(ValueError, match=r"MODEL=INPUT,OUTPUT\[,CACHED_INPUT\]"):
        parse_prices(("m=1,2,3,4",))
    assert Price(input=1, output=2).as_tuple() == (1.0, 2.0)
    assert Price(input=1, output=2, cached_input=0.25).as_tuple() == (1.0, 2.0, 0.25)
    assert Price.from_tuple((1.0, 2.0, 0.25)) == Price(input=1, output=2, cached_input=0.25)
    assert Price.from_tuple((1.0, 2.0)).cached_input is None
