"""The ``openai`` backend over real HTTP against the loopback server, and the Judge around it."""

from __future__ import annotations

import asyncio
import json
import logging
import time

import pytest
from pydantic import BaseModel

from ragmeter.errors import (
    InvalidParameterError,
    JudgeAuthError,
    JudgeBadRequest,
    JudgeBudgetExceeded,
    JudgeConnectionError,
    JudgeDryRun,
    JudgeParseError,
    JudgeRateLimited,
    JudgeServerError,
    JudgeTimeout,
)
from ragmeter.judges import from_spec

from .fake_server import ChatCall, Reply


class Verdict(BaseModel):
    score: int
    reason: str


def run(coro):
    return asyncio.run(coro)


async def ask(judge, prompt="Is it good?", **kw):
    try:
        return await judge.judge(prompt, Verdict, **kw)
    finally:
        await judge.aclose()


def test_plain_judgement_uses_json_schema(fake_llm, make_judge):
    fake_llm.rule = lambda call: {"score": 4, "reason": "grounded"}
    judge = make_judge()
    r = run(ask(judge, tag="faithfulness"))
    assert r.value == Verdict(score=4, reason="grounded")
    assert r.raw == '{"score": 4, "reason": "grounded"}'
    assert r.usage.prompt_tokens > 0 and r.usage.completion_tokens > 0
    assert not r.cached and not r.repaired
    [entry] = fake_llm.log
    assert entry.response_format == "json_schema"
    s = judge.stats()
    assert s["calls"] == 1 and s["requests"] == 1 and s["by_tag"]["faithfulness"]["calls"] == 1
    assert s["prompt_tokens"] == r.usage.prompt_tokens
    assert s["cost"] is None  # "fake-model" has no known price: tokens only, never a made-up cost


def test_llama_cpp_python_style_500_on_json_schema_falls_back_to_json_object(fake_llm, make_judge):
    def rule(call: ChatCall) -> Reply:
        if call.response_format == "json_schema":
            return Reply.server_error(500, "Input should be 'text' or 'json_object'")
        # json_object requests carry the schema and ask for JSON in a system message
        # (OpenAI requires the word JSON in json_object mode)
        assert call.body["response_format"]["schema"]["title"] == "Verdict"
        assert "JSON schema" in call.messages[0]["content"]
        return Reply.json({"score": 2, "reason": "meh"})

    fake_llm.rule = rule
    judge = make_judge()
    assert run(ask(judge)).value.score == 2
    assert [e.response_format for e in fake_llm.log] == ["json_schema", "json_object"]
    # the mode is kept: the next call goes straight to json_object
    run(ask(judge, "again"))
    assert fake_llm.log[-1].response_format == "json_object"
    assert judge.stats()["format_fallbacks"] == 1


def test_a_pinned_mode_is_the_mode_of_every_request(fake_llm, make_judge):
    fake_llm.rule = lambda call: Reply.json({"score": 3, "reason": "ok"})
    judge = make_judge(structured_output="json_object")
    for prompt in ("one", "two", "three"):
        assert run(ask(judge, prompt)).value.score == 3
    # before: every request was sent as json_schema, the richer mode a fallback re-probes
    assert [e.response_format for e in fake_llm.log] == ["json_object"] * 3
    assert judge.stats()["format_fallbacks"] == 0


def test_falls_back_to_prompt_only_json(fake_llm, make_judge):
    def rule(call: ChatCall) -> Reply:
        if call.response_format is not None:
            return Reply(status=400, error="response_format is not supported")
        assert "JSON schema" in call.all_text
        return Reply(content='Here you go:\n```json\n{"score": 5, "reason": "ok",}\n```')

    fake_llm.rule = rule
    judge = make_judge()
    assert run(ask(judge)).value.score == 5
    assert [e.response_format for e in fake_llm.log] == ["json_schema", "json_object", None]


def test_confirmed_mode_treats_500_as_transient(fake_llm, make_judge):
    fake_llm.rule = lambda call: {"score": 1, "reason": "x"}
    judge = make_judge()
    run(ask(judge, "first"))
    replies = iter([Reply.server_error(500)])
    fake_llm.rule = lambda call: next(replies, Reply.json({"score": 3, "reason": "x"}))
    assert run(ask(judge, "second")).value.score == 3
    assert [e.response_format for e in fake_llm.log] == ["json_schema"] * 3
    s = judge.stats()
    assert s["retries"] == 1 and s["attempt_errors"] == {"JudgeServerError": 1}


def test_429_retry_after_is_honoured(fake_llm, make_judge):
    replies = iter([Reply.rate_limited(retry_after=0.4)])
    fake_llm.rule = lambda call: next(replies, Reply.json({"score": 1, "reason": "x"}))
    judge = make_judge(backoff=5.0)  # would wait up to 5 s if Retry-After were ignored
    t0 = time.perf_counter()
    assert run(ask(judge)).value.score == 1
    waited = fake_llm.log[1].time - fake_llm.log[0].time
    assert 0.35 <= waited < 3.0
    assert time.perf_counter() - t0 < 4.0
    assert judge.stats()["attempt_errors"] == {"JudgeRateLimited": 1}


def test_x_ratelimit_reset_header_is_honoured(fake_llm, make_judge):
    replies = iter([Reply(status=429, headers={"x-ratelimit-reset-requests": "300ms"}, kind="429")])
    fake_llm.rule = lambda call: next(replies, Reply.json({"score": 1, "reason": "x"}))
    judge = make_judge(backoff=5.0)
    run(ask(judge))
    assert 0.25 <= fake_llm.log[1].time - fake_llm.log[0].time < 3.0


@pytest.mark.parametrize(
    ("reply", "error", "kind"),
    [
        (Reply.rate_limited(0), JudgeRateLimited, "429"),
        (Reply.server_error(503), JudgeServerError, "503"),
        (Reply.hanging(5), JudgeTimeout, "hang"),
        (Reply.dropped(), JudgeConnectionError, "drop"),
        (Reply(raw_body=b'{"choices": [', kind="badbody"), JudgeServerError, "badbody"),
    ],
)
def test_transient_errors_are_retried_then_typed(fake_llm, make_judge, reply, error, kind):
    judge = make_judge(max_retries=2, timeout=0.8, backoff=0.01)
    fake_llm.rule = lambda call: {"score": 1, "reason": "x"}
    run(ask(judge, "reach the server once"))  # a judge that never worked stops early (test_unreachable.py)
    fake_llm.clear_log()
    fake_llm.rule = lambda call: reply
    with pytest.raises(error):
        run(ask(judge))
    assert [e.kind for e in fake_llm.log] == [kind] * 3
    s = judge.stats()
    assert s["retries"] == 2 and s["errors"] == {error.__name__: 1}
    assert s["attempt_errors"] == {error.__name__: 3}


@pytest.mark.parametrize(("status", "error"), [(400, JudgeBadRequest), (404, JudgeBadRequest),
                                               (401, JudgeAuthError), (403, JudgeAuthError)])
def test_client_errors_are_not_retried(fake_llm, make_judge, status, error):
    fake_llm.rule = lambda call: {"score": 1, "reason": "x"}
    judge = make_judge()
    run(ask(judge, "settle the mode"))
    fake_llm.rule = lambda call: Reply(status=status, error="nope")
    with pytest.raises(error) as info:
        run(ask(judge))
    assert info.value.status_code == status
    assert len(fake_llm.log) == 2


def test_unparseable_reply_is_repaired_once(fake_llm, make_judge):
    def rule(call: ChatCall) -> Reply:
        if call.is_repair:
            assert "could not be read" in call.messages[-1]["content"]
            return Reply.json({"score": 3, "reason": "fixed"})
        return Reply.malformed("Score: 3 (good)")

    fake_llm.rule = rule
    judge = make_judge()
    r = run(ask(judge))
    assert r.value.score == 3 and r.repaired
    assert judge.stats()["repairs"] == 1 and judge.stats()["requests"] == 2


def test_truncated_reply_is_repaired(fake_llm, make_judge):
    def rule(call: ChatCall) -> Reply:
        if call.is_repair:
            return Reply.json({"score": 2, "reason": "short"})
        return Reply.truncated({"score": 2, "reason": "a long explanation " * 5})

    fake_llm.rule = rule
    assert run(ask(make_judge())).value.score == 2


def test_a_reply_cut_at_the_token_limit_is_asked_again_without_the_cut_text(fake_llm, make_judge):
    # a small judge that looped on one sentence to the limit loops again when shown that loop: the
    # repair is the original request, the length note on its last user message, no assistant turn
    loop = "The passage does not mention it. " * 40
    bodies: list[list[dict]] = []

    def rule(call: ChatCall) -> Reply:
        bodies.append(call.messages)
        if call.is_repair:
            return Reply.json({"score": 1, "reason": "not mentioned"})
        return Reply(content='{"reason": "' + loop, finish_reason="length", kind="truncated")

    fake_llm.rule = rule
    judge = make_judge(cache=True)
    r = run(ask(judge, [{"role": "system", "content": "You grade."}, {"role": "user", "content": "Is it good?"}]))
    assert r.value.score == 1 and r.repaired
    first, fix = bodies
    assert [m["role"] for m in fix] == ["system", "user"]  # roles still alternate
    assert fix[0] == first[0]
    assert fix[1]["content"].startswith("Is it good?\n\nYour previous reply was cut at the ")
    assert "-token limit" in fix[1]["content"]
    assert "does not mention" not in json.dumps(fix)
    assert judge.stats()["repairs"] == 1
    # the repaired reply is stored under the original request's key: asking again sends nothing
    assert run(ask(judge, [{"role": "system", "content": "You grade."},
                           {"role": "user", "content": "Is it good?"}])).value.score == 1
    assert len(fake_llm.log) == 2


def test_an_unreadable_reply_that_was_not_cut_is_still_shown_back(fake_llm, make_judge):
    bodies: list[list[dict]] = []

    def rule(call: ChatCall) -> Reply:
        bodies.append(call.messages)
        return Reply.json({"score": 4, "reason": "ok"}) if call.is_repair else Reply.malformed("four")

    fake_llm.rule = rule
    assert run(ask(make_judge())).value.score == 4
    assert [m["role"] for m in bodies[1]][-2:] == ["assistant", "user"]
    assert bodies[1][-2]["content"] == "four"
    assert "could not be read" in bodies[1][-1]["content"]


def test_parse_error_after_repair_carries_the_raw_reply(fake_llm, make_judge):
    fake_llm.rule = lambda call: Reply(content='{"score": "high", "reason": "x"}')
    judge = make_judge(cache=True)
    with pytest.raises(JudgeParseError) as info:
        run(ask(judge))
    assert info.value.raw == '{"score": "high", "reason": "x"}'
    assert "score" in info.value.validation
    assert judge.stats()["errors"] == {"JudgeParseError": 1}
    # never cached: asking again sends again
    with pytest.raises(JudgeParseError):
        run(ask(judge))
    assert len(fake_llm.log) == 4
    assert len(judge.cache) == 0


def test_missing_key_fails_at_construction_naming_the_env_var():
    with pytest.raises(JudgeAuthError, match="OPENAI_API_KEY"):
        from_spec("openai:gpt-4o-mini", cache=False)
    with pytest.raises(JudgeAuthError, match="OPENAI_API_KEY"):
        from_spec("openai:gpt-4o-mini@https://api.example.com/v1", cache=False)
    # a local server needs none
    assert from_spec("openai:qwen2.5@http://127.0.0.1:8080/v1", cache=False).backend.model == "qwen2.5"


def test_env_base_url_and_key(monkeypatch):
    monkeypatch.setenv("OPENAI_BASE_URL", "https://proxy.example.com/v1")
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-abcdefghijklmnop")
    judge = from_spec("openai:gpt-4o-mini", cache=False)
    assert judge.backend.base_url == "https://proxy.example.com/v1"
    assert "sk-test" not in repr(judge) and "sk-test" not in repr(judge.backend)


def test_api_key_never_leaks(fake_llm, judge_cache_dir, caplog):
    secret = "sk-proj-SECRETSECRETSECRET1234"

    def rule(call: ChatCall) -> Reply:
        auth = call.headers.get("Authorization", "")
        if "again" in call.user_text:
            return Reply.json({"score": 1, "reason": "ok"})
        # the worst case: a server that echoes the credentials in its error message
        return Reply(status=401, error=f"Incorrect API key provided: {auth} ({secret})")

    fake_llm.rule = rule
    caplog.set_level(logging.DEBUG)
    judge = from_spec(f"openai:fake@{fake_llm.url}", api_key=secret, cache=True, timeout=5)
    with pytest.raises(JudgeAuthError) as info:
        run(ask(judge))
    run(ask(judge, "again"))
    assert fake_llm.log[0].authorization == f"Bearer {secret}"  # it was sent...
    texts = [str(info.value), repr(info.value), json.dumps(judge.stats()), repr(judge), caplog.text]
    for text in texts:  # ...and appears nowhere else
        assert secret not in text
        assert "SECRETSECRET" not in text
    db = judge.cache.path.read_bytes() + b"".join(
        p.read_bytes() for p in judge.cache.path.parent.glob("*") if p.is_file()
    )
    assert secret.encode() not in db
    judge.close()


def test_budget_stops_new_calls_but_lets_in_flight_ones_finish(fake_llm, make_judge):
    fake_llm.rule = lambda call: Reply(content='{"score": 1, "reason": "x"}', usage=(1000, 1000))
    fake_llm.latency = 0.2
    # 1000 + 1000 tokens at $1/$1 per 1M = $0.002 per call; budget $0.005
    judge = make_judge(prices={"fake-model": (1.0, 1.0)}, max_cost=0.005, concurrency=2)

    async def go():
        outs = []
        for batch in range(3):
            outs += await asyncio.gather(
                *(judge.judge(f"q{batch}-{i}", Verdict) for i in range(2)), return_exceptions=True
            )
        await judge.aclose()
        return outs

    outs = run(go())
    ok = [o for o in outs if not isinstance(o, BaseException)]
    over = [o for o in outs if isinstance(o, JudgeBudgetExceeded)]
    assert len(ok) == 4 and len(over) == 2  # $0.004 spent after two batches, $0.008 > budget after three
    s = judge.stats()
    assert s["cost"] == pytest.approx(0.008)
    assert s["errors"] == {"JudgeBudgetExceeded": 2}
    assert len(fake_llm.log) == 4


def test_max_cost_needs_a_known_price(fake_llm):
    with pytest.raises(InvalidParameterError, match="prices="):
        from_spec(f"openai:fake@{fake_llm.url}", max_cost=1.0, cache=False)


def test_known_model_cost(fake_llm):
    fake_llm.rule = lambda call: Reply(content='{"score": 1, "reason": "x"}', usage=(2_000_000, 1_000_000))
    judge = from_spec(f"openai:gpt-4o-mini@{fake_llm.url}", cache=False)
    run(ask(judge, tag="m1"))
    s = judge.stats()
    assert s["cost"] == pytest.approx(2 * 0.15 + 1 * 0.60)
    assert s["by_tag"]["m1"]["cost"] == pytest.approx(0.90)


def test_dry_run_counts_and_sends_nothing(fake_llm, make_judge):
    judge = make_judge(dry_run=True, prices={"fake-model": (1.0, 2.0)})
    with pytest.raises(JudgeDryRun):
        run(ask(judge, "x" * 400, tag="faith"))
    s = judge.stats()
    assert fake_llm.log == []
    assert s["dry_run_calls"] == 1 and s["estimated_prompt_tokens"] == 104
    assert s["estimated_prompt_cost"] == pytest.approx(104 / 1e6)
    assert s["errors"] == {"JudgeDryRun": 1}


def test_dry_run_serves_cache_hits(fake_llm, judge_cache_dir):
    fake_llm.rule = lambda call: {"score": 2, "reason": "x"}
    live = from_spec(f"openai:fake@{fake_llm.url}", cache=True)
    run(ask(live, "known"))
    dry = from_spec(f"openai:fake@{fake_llm.url}", cache=True, dry_run=True)
    assert run(ask(dry, "known")).cached
    with pytest.raises(JudgeDryRun):
        run(ask(dry, "unknown"))
    assert dry.stats()["dry_run_calls"] == 1 and len(fake_llm.log) == 1


def test_repeat_samples_are_cached_separately(fake_llm, judge_cache_dir):
    counter = iter(range(100))
    fake_llm.rule = lambda call: {"score": next(counter), "reason": "x"}
    judge = from_spec(f"openai:fake@{fake_llm.url}", cache=True, repeat=3, temperature=0.7)

    async def go():
        try:
            return await judge.judge_n("q", Verdict, tag="t")
        finally:
            await judge.aclose()

    first = run(go())
    assert sorted(r.value.score for r in first) == [0, 1, 2]
    assert [r.key.endswith(f"#{i}") for i, r in enumerate(first)] == [False, True, True]
    again = run(go())
    assert [r.value for r in again] == [r.value for r in first] and all(r.cached for r in again)
    assert len(fake_llm.log) == 3


def test_concurrency_is_bounded(fake_llm, make_judge):
    live = 0
    peak = 0

    async def rule(call: ChatCall) -> Reply:
        nonlocal live, peak
        live += 1
        peak = max(peak, live)
        await asyncio.sleep(0.05)
        live -= 1
        return Reply.json({"score": 1, "reason": "x"})

    fake_llm.rule = rule
    judge = make_judge(concurrency=4)

    async def go():
        await asyncio.gather(*(judge.judge(f"q{i}", Verdict) for i in range(20)))
        await judge.aclose()

    run(go())
    assert peak == 4


def test_rpm_limiter(fake_llm, make_judge):
    fake_llm.rule = lambda call: {"score": 1, "reason": "x"}
    judge = make_judge(rpm=60)  # a bucket of 10 requests per 10 s, refilled at 1 a second

    async def go():
        await asyncio.gather(*(judge.judge(f"q{i}", Verdict) for i in range(12)))
        await judge.aclose()

    run(go())
    times = sorted(e.time for e in fake_llm.log)
    assert len(times) == 12
    assert times[-1] - times[0] >= 1.5  # the 11th and 12th waited for the bucket to drain


def test_tpm_limiter(fake_llm, make_judge):
    fake_llm.rule = lambda call: {"score": 1, "reason": "x"}
    judge = make_judge(tpm=6000, max_tokens=500)  # 1,000 tokens per 10 s; each call needs > 500

    async def go():
        await asyncio.gather(*(judge.judge(f"q{i}", Verdict) for i in range(3)))
        await judge.aclose()

    run(go())
    times = sorted(e.time for e in fake_llm.log)
    assert times[-1] - times[0] >= 3.0


def test_free_text_complete(fake_llm, make_judge):
    fake_llm.rule = lambda call: Reply(content="just text")
    judge = make_judge()

    async def go():
        try:
            return await judge.complete("say something", tag="gen")
        finally:
            await judge.aclose()

    r = run(go())
    assert r.value == "just text" and fake_llm.log[0].response_format is None


def test_unrelated_400_does_not_downgrade_the_format(fake_llm, make_judge):
    fake_llm.rule = lambda call: Reply(status=400, error="This model's maximum context length is 8192 tokens")
    judge = make_judge()
    with pytest.raises(JudgeBadRequest, match="context length"):
        run(ask(judge))
    assert [e.response_format for e in fake_llm.log] == ["json_schema"]
    assert judge.stats()["format_fallbacks"] == 0 and judge.backend.mode == "json_schema"


def test_judge_is_reusable_across_event_loops(fake_llm, make_judge):
    fake_llm.rule = lambda call: {"score": 1, "reason": "x"}
    judge = make_judge()
    for i in range(3):  # evaluate() runs one asyncio.run per call; connections are per loop
        assert asyncio.run(judge.judge(f"q{i}", Verdict)).value.score == 1
    assert judge.stats()["requests"] == 3
