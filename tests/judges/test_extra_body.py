"""``extra_body``: server-specific sampling fields sent with every request (e.g.
``{"repeat_penalty": 1.0}`` for llama-cpp-python, whose server applies 1.1 by default). None by
default, local or public URL (measured: greedy decoding did not help and made a small judge loop,
docs/judges.md); what is set is sent, never dropped, part of the cache key, the judge-check record
id and the run's judge stats."""

from __future__ import annotations

import asyncio

import pytest
from pydantic import BaseModel

from ragmeter.judges import from_spec
from ragmeter.judges.backends.openai_compat import OpenAIBackend
from ragmeter.judges.judge import judge_cache_key

from .fake_server import Reply

GREEDY = {"repeat_penalty": 1.0}
# OpenAI's answer to an unknown field, as its API words it
UNKNOWN = "Unrecognized request argument supplied: repeat_penalty"


class Verdict(BaseModel):
    score: int
    reason: str


def ask(judge, *prompts: str) -> list:
    async def go():
        try:
            return [await judge.judge(p, Verdict) for p in prompts]
        finally:
            await judge.aclose()

    return asyncio.run(go())


def test_nothing_extra_by_default_and_what_is_set_is_kept():
    for url in ("http://127.0.0.1:8080/v1", "http://10.1.2.3:8000/v1", "https://api.openai.com/v1"):
        assert OpenAIBackend("m", base_url=url, api_key="k").extra_body == {}, url
        assert OpenAIBackend("m", base_url=url, api_key="k", extra_body=GREEDY).extra_body == GREEDY, url


def test_every_request_carries_what_is_set_and_none_without(fake_llm, make_judge):
    seen: list = []
    fake_llm.rule = lambda call: (seen.append(call.body), Reply.json({"score": 1, "reason": "x"}))[1]
    judge = make_judge(extra_body=GREEDY)
    ask(judge, "a", "b")
    ask(make_judge(), "c")
    assert [b.get("repeat_penalty") for b in seen] == [1.0, 1.0, None]
    assert judge.stats()["extra_body"] == GREEDY


def test_a_refused_field_is_a_bad_request_not_retried_and_never_dropped(fake_llm, make_judge):
    fake_llm.rule = lambda call: Reply.server_error(400, UNKNOWN)
    judge = make_judge(extra_body=GREEDY)
    with pytest.raises(Exception) as info:
        ask(judge, "a")
    assert type(info.value).__name__ == "JudgeBadRequest" and "repeat_penalty" in str(info.value)
    assert len(fake_llm.log) == 1 and judge.backend.extra_body == GREEDY


def test_it_is_part_of_the_cache_key(fake_llm, tmp_path):
    fields = dict(backend="openai", model="m", base_url="http://127.0.0.1:1/v1", messages=[{"role": "user",
                  "content": "x"}], temperature=0.0, max_tokens=10, schema=None, seed=None, template_version="t@1")
    assert judge_cache_key(**fields) == judge_cache_key(**fields, extra_body={})  # keys without it unchanged
    assert judge_cache_key(**fields) != judge_cache_key(**fields, extra_body=GREEDY)
    # end to end: a reply cached under one setting is not served to a judge with another
    fake_llm.rule = lambda call: Reply.json({"score": 3 if "repeat_penalty" in call.body else 4, "reason": "x"})
    cache = tmp_path / "c.sqlite3"
    first = from_spec(f"openai:fake-model@{fake_llm.url}", cache=cache, timeout=5.0, extra_body=GREEDY)
    assert ask(first, "a")[0].value.score == 3
    first.close()
    other = from_spec(f"openai:fake-model@{fake_llm.url}", cache=cache, timeout=5.0)
    again = from_spec(f"openai:fake-model@{fake_llm.url}", cache=cache, timeout=5.0, extra_body=GREEDY)
    assert ask(other, "a")[0].value.score == 4 and ask(again, "a")[0].value.score == 3
    assert len(fake_llm.log) == 2  # the third came from the cache
    other.close()
    again.close()


def test_a_judge_check_on_record_is_per_sampling_setting(make_judge):
    from ragmeter.judges.record import record_path

    default, empty, greedy = make_judge(), make_judge(extra_body={}), make_judge(extra_body=GREEDY)
    assert record_path(default) == record_path(empty)  # the same requests, the same record
    assert record_path(greedy) != record_path(default)  # a check under other sampling does not vouch


def test_a_runs_judge_stats_show_the_setting_not_a_difference(fake_llm, make_judge):
    # evaluate() reports this run's counts (now - before); extra_body is a setting, shown as sent
    from ragmeter import Sample, evaluate

    judge = make_judge(extra_body=GREEDY)
    s = Sample(id="a", query="q", answer="Paris.", contexts=["Paris is the capital of France."])
    first = evaluate([s], ["faithfulness(mode=direct)"], judge=judge).run["judge"]
    again = evaluate([s], ["faithfulness(mode=direct)"], judge=judge).run["judge"]
    assert first["extra_body"] == again["extra_body"] == GREEDY
