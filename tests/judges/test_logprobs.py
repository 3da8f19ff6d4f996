"""Log-probabilities through the backend seam, from replies recorded from the real judge server.

The fixtures in ``tests/judges/recorded/`` are verbatim request/reply pairs of llama-cpp-python
0.3.36's server with Qwen2.5-Coder-1.5B-Instruct (Q4_K_M), recorded with ``curl`` (see each
file's ``note``). The expected values below are read from the JSON by hand-written paths, not by
the parser under test.
"""

from __future__ import annotations

import asyncio
import json
import math
from pathlib import Path

import pytest

from ragmeter.errors import JudgeServerError
from ragmeter.judges.backends.openai_compat import OpenAIBackend, _completion_from, parse_logprobs
from ragmeter.judges.base import ChatRequest, Message, TokenLogprob

from .fake_server import FakeLLMServer, Reply

RECORDED = Path(__file__).parent / "recorded"


def load(name: str) -> dict:
    return json.loads((RECORDED / name).read_text(encoding="utf-8"))


def test_yes_no_verdict_token_and_its_alternatives():
    rec = load("yesno_top_logprobs.json")
    assert rec["request"]["logprobs"] is True and rec["request"]["top_logprobs"] == 5
    completion = _completion_from(rec["reply"], "openai")
    assert completion.text == "no" and completion.finish_reason == "length"
    assert completion.logprobs is not None and len(completion.logprobs) == 1
    tok = completion.logprobs[0]
    assert tok.token == "no" and tok.logprob == pytest.approx(-0.945876955986023)
    assert [t for t, _ in tok.top] == ["no", "yes", "No", "Yes", " yes"]
    alts = tok.alternatives()
    assert alts["yes"] == pytest.approx(-1.3246210813522339)
    assert alts["Yes"] == pytest.approx(-2.080106735229492)
    # the five alternatives carry most of the mass: exp(-0.946) + exp(-1.325) + ... ~ 0.90
    mass = sum(math.exp(lp) for _, lp in tok.top)
    assert 0.85 < mass <= 1.0


def test_json_object_reply_keeps_one_logprob_per_token():
    rec = load("json_object_schema_logprobs.json")
    completion = _completion_from(rec["reply"], "openai")
    content = rec["reply"]["choices"][0]["logprobs"]["content"]
    assert completion.logprobs is not None and len(completion.logprobs) == len(content)
    assert "".join(t.token for t in completion.logprobs) == completion.text
    first = completion.logprobs[0]
    # the grammar forced "{" although the model's own favourites were prose tokens
    assert first.token == "{" and first.logprob == pytest.approx(content[0]["logprob"])
    assert first.logprob < first.top[0][1]
    # asked for 3 alternatives; llama-cpp-python appends the chosen token when it is not among them
    assert [t for t, _ in first.top] == ["The", "No", "Yes", "{"]
    assert json.loads(completion.text)["supported"] in (True, False)


def test_json_schema_rejection_is_a_server_error_status():
    rec = load("json_schema_rejected.json")
    assert rec["status"] == 500 and "json_schema" in rec["reply"]["error"]["message"]


def test_no_logprobs_block_gives_none():
    body = {"choices": [{"message": {"content": "x"}, "finish_reason": "stop"}], "usage": {}}
    assert _completion_from(body, "openai").logprobs is None
    assert parse_logprobs(None) is None
    assert parse_logprobs({"content": None}) is None
    assert parse_logprobs({"content": [{"token": "a"}]}) is None  # malformed: no logprob
    assert parse_logprobs({"content": []}) == ()
    with pytest.raises(JudgeServerError):
        _completion_from({"choices": []}, "openai")


def test_token_alternatives_keep_the_chosen_token():
    tok = TokenLogprob("maybe", -3.0, (("yes", -0.1), ("no", -2.5)))
    assert tok.alternatives() == {"yes": -0.1, "no": -2.5, "maybe": -3.0}


def test_backend_asks_for_logprobs_and_parses_the_recorded_reply():
    rec = load("yesno_top_logprobs.json")
    raw = json.dumps(rec["reply"]).encode()
    with FakeLLMServer(lambda call: Reply(raw_body=raw)) as server:
        backend = OpenAIBackend("qwen", base_url=server.url)
        request = ChatRequest(messages=(Message("user", "yes or no?"),), max_tokens=1, top_logprobs=5)
        plain = ChatRequest(messages=(Message("user", "yes or no?"),), max_tokens=1)

        async def go():
            got = await backend.complete(request)
            await backend.complete(plain)
            await backend.aclose()
            return got

        completion = asyncio.run(go())
        bodies = [e for e in server.log]
    assert completion.logprobs is not None and completion.logprobs[0].alternatives()["yes"] == pytest.approx(
        -1.3246210813522339)
    assert len(bodies) == 2


def test_request_body_carries_the_logprob_options():
    seen: list[dict] = []

    def rule(call):
        seen.append(call.body)
        return Reply.json({"ok": 1})

    with FakeLLMServer(rule) as server:
        backend = OpenAIBackend("qwen", base_url=server.url)

        async def go():
            await backend.complete(ChatRequest(messages=(Message("user", "q"),), top_logprobs=5))
            await backend.complete(ChatRequest(messages=(Message("user", "q"),), top_logprobs=0))
            await backend.complete(ChatRequest(messages=(Message("user", "q"),)))
            await backend.aclose()

        asyncio.run(go())
    assert (seen[0]["logprobs"], seen[0]["top_logprobs"]) == (True, 5)
    assert (seen[1]["logprobs"], seen[1]["top_logprobs"]) == (True, 0)
    assert "logprobs" not in seen[2] and "top_logprobs" not in seen[2]
