"""Greedy decoding on local servers: every request to a local or private URL carries
``repeat_penalty: 1.0`` (llama-cpp-python's server and Ollama default to 1.1, which bends a list
of verdicts away from repeating one); public URLs get nothing extra; a server that refuses the
default field gets the request again without it; a field the user set is never dropped; the
field is part of the cache key."""

from __future__ import annotations

import asyncio

import pytest
from pydantic import BaseModel

from ragmeter.judges import from_spec
from ragmeter.judges.backends.openai_compat import LOCAL_EXTRA_BODY, OpenAIBackend
from ragmeter.judges.judge import judge_cache_key

from .fake_server import Reply

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


def test_local_urls_get_no_repeat_penalty_and_public_ones_nothing_extra():
    assert LOCAL_EXTRA_BODY == {"repeat_penalty": 1.0}
    for url in ("http://127.0.0.1:8080/v1", "http://localhost:11434/v1", "http://10.1.2.3:8000/v1",
                "http://192.168.0.7/v1"):
        assert OpenAIBackend("m", base_url=url).extra_body == {"repeat_penalty": 1.0}, url
    for url in ("https://api.openai.com/v1", "https://openrouter.ai/api/v1"):
        assert OpenAIBackend("m", base_url=url, api_key="k").extra_body == {}, url
    # the user's choice wins either way
    assert OpenAIBackend("m", base_url="http://127.0.0.1:8080/v1", extra_body={}).extra_body == {}
    assert OpenAIBackend("m", base_url="https://api.openai.com/v1", api_key="k",
                         extra_body={"top_k": 1}).extra_body == {"top_k": 1}


def test_every_request_to_the_loopback_server_carries_it(fake_llm, make_judge):
    seen: list = []
    fake_llm.rule = lambda call: (seen.append(call.body), Reply.json({"score": 1, "reason": "x"}))[1]
    judge = make_judge()
    ask(judge, "a", "b")
    assert [b.get("repeat_penalty") for b in seen] == [1.0, 1.0]
    assert judge.stats()["extra_body"] == {"repeat_penalty": 1.0} and judge.stats()["extra_body_dropped"] == []


def test_a_server_that_refuses_the_default_field_gets_the_request_again_without_it(fake_llm, make_judge):
    seen: list = []

    def rule(call):
        seen.append(call.body)
        if "repeat_penalty" in call.body:
            return Reply.server_error(400, UNKNOWN)
        return Reply.json({"score": 2, "reason": "x"})

    fake_llm.rule = rule
    judge = make_judge()
    got = ask(judge, "a", "b")
    assert [g.value.score for g in got] == [2, 2]
    # one refused request, then every request without the field (not one refusal per call)
    assert ["repeat_penalty" in b for b in seen] == [True, False, False]
    s = judge.stats()
    assert s["extra_body"] == {} and s["extra_body_dropped"] == ["repeat_penalty"]
    assert s["errors"] == {} and s["retries"] == 0


def test_a_field_the_user_set_is_never_dropped(fake_llm, make_judge):
    fake_llm.rule = lambda call: Reply.server_error(400, UNKNOWN)
    judge = make_judge(extra_body={"repeat_penalty": 1.0}, max_retries=0)
    with pytest.raises(Exception) as info:
        ask(judge, "a")
    assert type(info.value).__name__ == "JudgeBadRequest" and "repeat_penalty" in str(info.value)
    assert len(fake_llm.log) == 1 and judge.stats()["extra_body_dropped"] == []


def test_it_is_part_of_the_cache_key(fake_llm, tmp_path):
    fields = dict(backend="openai", model="m", base_url="http://127.0.0.1:1/v1", messages=[{"role": "user",
                  "content": "x"}], temperature=0.0, max_tokens=10, schema=None, seed=None, template_version="t@1")
    assert judge_cache_key(**fields) == judge_cache_key(**fields, extra_body={})  # keys without it unchanged
    assert judge_cache_key(**fields) != judge_cache_key(**fields, extra_body={"repeat_penalty": 1.0})
    # end to end: a reply cached with the penalty off is not served to a judge that sends none
    fake_llm.rule = lambda call: Reply.json({"score": 3 if "repeat_penalty" in call.body else 4, "reason": "x"})
    cache = tmp_path / "c.sqlite3"
    first = from_spec(f"openai:fake-model@{fake_llm.url}", cache=cache, timeout=5.0)
    assert ask(first, "a")[0].value.score == 3
    first.close()
    other = from_spec(f"openai:fake-model@{fake_llm.url}", cache=cache, timeout=5.0, extra_body={})
    again = from_spec(f"openai:fake-model@{fake_llm.url}", cache=cache, timeout=5.0)
    assert ask(other, "a")[0].value.score == 4 and ask(again, "a")[0].value.score == 3
    assert len(fake_llm.log) == 2  # the third came from the cache
    other.close()
    again.close()


def test_a_judge_check_on_record_is_per_sampling_setting(make_judge):
    from ragmeter.judges.record import record_path

    default, explicit, penalised = make_judge(), make_judge(extra_body={"repeat_penalty": 1.0}), make_judge(
        extra_body={})
    assert record_path(default) == record_path(explicit)  # the same requests, the same record
    assert record_path(penalised) != record_path(default)  # a check under the server's penalty does not vouch


def test_a_runs_judge_stats_show_the_setting_not_a_difference(fake_llm, make_judge):
    # evaluate() reports this run's counts (now - before); extra_body is a setting, shown as sent
    from ragmeter import Sample, evaluate

    judge = make_judge()
    s = Sample(id="a", query="q", answer="Paris.", contexts=["Paris is the capital of France."])
    first = evaluate([s], ["faithfulness(mode=direct)"], judge=judge).run["judge"]
    again = evaluate([s], ["faithfulness(mode=direct)"], judge=judge).run["judge"]
    assert first["extra_body"] == again["extra_body"] == {"repeat_penalty": 1.0}
