"""A pinned structured-output mode is part of the cache key: a ``json_object`` request carries the
schema as a system message and a ``json_schema`` one does not, so a reply cached for one is never
served for the other; keys of judges that leave the mode to the server are unchanged."""

from __future__ import annotations

import asyncio

from pydantic import BaseModel

from ragmeter.judges import from_spec
from ragmeter.judges.judge import judge_cache_key

from .fake_server import Reply


class Verdict(BaseModel):
    score: int
    reason: str


def ask(judge, prompt: str) -> Verdict:
    async def go():
        try:
            return (await judge.judge(prompt, Verdict)).value
        finally:
            await judge.aclose()

    try:
        return asyncio.run(go())
    finally:
        judge.close()  # the cache's connection


def format_of(call) -> str:
    return (call.body.get("response_format") or {}).get("type", "none")


def test_a_reply_cached_under_one_pinned_mode_is_not_served_under_another(fake_llm, tmp_path):
    # the server answers 3 to a json_object request (schema message) and 4 to a json_schema one
    fake_llm.rule = lambda call: Reply.json({"score": 3 if format_of(call) == "json_object" else 4, "reason": "x"})
    cache = tmp_path / "c.sqlite3"
    url = f"openai:fake-model@{fake_llm.url}"

    def judge(**kw):
        return from_spec(url, cache=cache, timeout=5.0, **kw)

    assert ask(judge(), "a").score == 4  # auto: json_schema, which this server takes
    assert ask(judge(structured_output="json_object"), "a").score == 3  # sent, not the auto reply
    assert ask(judge(structured_output="json_schema"), "a").score == 4  # sent too: pinned is its own key
    assert [e.response_format for e in fake_llm.log] == ["json_schema", "json_object", "json_schema"]
    # each setting again: every reply from the cache, nothing more sent
    assert [ask(judge(structured_output=m), "a").score for m in ("auto", "json_object", "json_schema")] == [4, 3, 4]
    assert len(fake_llm.log) == 3


def test_keys_without_a_pinned_mode_are_unchanged():
    fields = dict(backend="openai", model="m", base_url="http://127.0.0.1:1/v1", messages=[{"role": "user",
                  "content": "x"}], temperature=0.0, max_tokens=10, schema=None, seed=None, template_version="t@1")
    assert judge_cache_key(**fields) == judge_cache_key(**fields, structured_output=None)
    assert judge_cache_key(**fields) != judge_cache_key(**fields, structured_output="json_object")


def test_a_judge_check_on_record_is_per_pinned_mode(make_judge):
    # a check of a judge pinned to json_object (the schema in a system message) does not vouch for the
    # same model asked with json_schema, nor the other way; a judge that leaves the mode to the server
    # keeps its record
    from ragmeter.judges.record import record_path

    auto, obj, schema = make_judge(), make_judge(structured_output="json_object"), make_judge(
        structured_output="json_schema")
    paths = {record_path(auto), record_path(obj), record_path(schema)}
    assert len(paths) == 3
    assert record_path(make_judge(structured_output="auto")) == record_path(auto)
