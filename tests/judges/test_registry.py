"""Backend registry, spec strings, optional backends."""

from __future__ import annotations

import asyncio
import sys
import types

import pytest
from pydantic import BaseModel

from ragmeter.errors import InvalidParameterError, JudgeAuthError, MissingBackendError
from ragmeter.judges import (
    JUDGE_OPTIONS,
    BackendInfo,
    FunctionBackend,
    from_spec,
    list_backends,
    parse_spec,
    register_backend,
)
from ragmeter.judges.pricing import lookup_price


@pytest.mark.parametrize(
    ("spec", "parsed"),
    [
        ("openai:gpt-4o-mini", ("openai", "gpt-4o-mini", None)),
        ("openai:qwen2.5@http://127.0.0.1:8080/v1", ("openai", "qwen2.5", "http://127.0.0.1:8080/v1")),
        ("ollama:qwen2.5:7b", ("ollama", "qwen2.5:7b", None)),
        ("litellm:anthropic/claude-3-5-haiku", ("litellm", "anthropic/claude-3-5-haiku", None)),
        ("llamacpp:/models/judge.gguf", ("llamacpp", "/models/judge.gguf", None)),
        ("OpenAI:m@odd@https://h/v1", ("openai", "m@odd", "https://h/v1")),
    ],
)
def test_parse_spec(spec, parsed):
    assert parse_spec(spec) == parsed


@pytest.mark.parametrize("spec", ["gpt-4o", "openai:", ":model", 3])
def test_bad_specs(spec):
    with pytest.raises(InvalidParameterError):
        parse_spec(spec)


def test_unknown_backend_lists_known_ones():
    with pytest.raises(InvalidParameterError, match="Did you mean: openai"):
        from_spec("opneai:gpt-4o")


def test_builtins_are_registered():
    assert {"openai", "ollama", "litellm", "llamacpp"} <= {b.name for b in list_backends()}


def test_third_party_backend_registers_the_same_way():
    class Verdict(BaseModel):
        score: int

    async def handler(request):
        return '{"score": 7}'

    register_backend(BackendInfo("echo-test", lambda model, **kw: FunctionBackend(handler, model=model, **kw),
                                 "test backend"))
    judge = from_spec("echo-test:anything", cache=False, concurrency=2)
    assert asyncio.run(judge.judge("q", Verdict)).value.score == 7
    assert judge.concurrency == 2 and "concurrency" in JUDGE_OPTIONS


def test_litellm_missing_says_which_extra(monkeypatch):
    monkeypatch.setitem(sys.modules, "litellm", None)
    with pytest.raises(MissingBackendError, match=r"pip install -e '\.\[litellm\]' in the ragmeter clone"):
        from_spec("litellm:anthropic/claude-3-5-haiku", cache=False)


def test_litellm_missing_key_is_reported_before_the_run(monkeypatch):
    fake = types.ModuleType("litellm")
    fake.validate_environment = lambda model: {"keys_in_environment": False, "missing_keys": ["ANTHROPIC_API_KEY"]}
    fake.supports_response_schema = lambda model: True
    monkeypatch.setitem(sys.modules, "litellm", fake)
    with pytest.raises(JudgeAuthError, match="ANTHROPIC_API_KEY"):
        from_spec("litellm:anthropic/claude-3-5-haiku", cache=False)


def _stub_litellm(monkeypatch, content: str, usage: tuple[int, int]) -> list[dict]:
    """Install a stub ``litellm`` module whose ``acompletion`` answers ``content``; returns the list
    its calls' keyword arguments are appended to."""
    calls: list[dict] = []

    async def acompletion(**kw):
        calls.append(kw)
        msg = types.SimpleNamespace(content=content)
        return types.SimpleNamespace(choices=[types.SimpleNamespace(message=msg, finish_reason="stop")],
                                     usage=types.SimpleNamespace(prompt_tokens=usage[0], completion_tokens=usage[1]))

    fake = types.ModuleType("litellm")
    fake.validate_environment = lambda model: {"keys_in_environment": True, "missing_keys": []}
    fake.supports_response_schema = lambda model: True
    fake.acompletion = acompletion
    monkeypatch.setitem(sys.modules, "litellm", fake)
    return calls


class _Score(BaseModel):
    score: int


def test_litellm_backend_with_a_stub_module(monkeypatch):
    calls = _stub_litellm(monkeypatch, '{"score": 2}', (10, 3))
    judge = from_spec("litellm:anthropic/claude-3-5-haiku", cache=False)
    r = asyncio.run(judge.judge("q", _Score))
    assert r.value.score == 2 and calls[-1]["num_retries"] == 0
    assert calls[-1]["response_format"]["type"] == "json_schema"
    assert judge.stats()["cost"] == pytest.approx((10 * 0.80 + 3 * 4.00) / 1e6)


def test_litellm_extra_body_is_sent_and_keyed_only_when_given(monkeypatch, tmp_path):
    calls = _stub_litellm(monkeypatch, '{"score": 3}', (4, 2))
    cache = tmp_path / "cache.sqlite3"
    spec = "litellm:openai/qwen@http://127.0.0.1:9/v1"
    plain = from_spec(spec, cache=cache)
    asyncio.run(plain.judge("q", _Score))
    assert "extra_body" not in calls[-1]  # no empty extra_body: some servers reject the field
    assert plain.stats()["extra_body"] == {}
    greedy = from_spec(spec, cache=cache, extra_body={"repeat_penalty": 1.0})
    r = asyncio.run(greedy.judge("q", _Score))
    # a different request: not served from the plain judge's cache entry
    assert not r.cached and len(calls) == 2
    assert calls[-1]["extra_body"] == {"repeat_penalty": 1.0}
    assert greedy.stats()["extra_body"] == {"repeat_penalty": 1.0}
    assert asyncio.run(from_spec(spec, cache=cache, extra_body={"repeat_penalty": 1.0}).judge("q", _Score)).cached


def test_llamacpp_missing_file_and_library(tmp_path, monkeypatch):
    with pytest.raises(InvalidParameterError, match="not found"):
        from_spec("llamacpp:/no/such/model.gguf", cache=False)
    gguf = tmp_path / "judge.gguf"
    gguf.write_bytes(b"GGUF")
    monkeypatch.setitem(sys.modules, "llama_cpp", None)
    with pytest.raises(MissingBackendError, match=r"pip install -e \"\.\[llamacpp\]\" in the ragmeter clone"):
        from_spec(f"llamacpp:{gguf}", cache=False)


def test_llamacpp_backend_with_a_stub_module(tmp_path, monkeypatch):
    class Verdict(BaseModel):
        score: int

    class Llama:
        def __init__(self, **kw):
            self.kw = kw

        def create_chat_completion(self, **kw):
            assert kw["response_format"]["type"] == "json_object" and "schema" in kw["response_format"]
            return {"choices": [{"message": {"content": '{"score": 4}'}, "finish_reason": "stop"}],
                    "usage": {"prompt_tokens": 5, "completion_tokens": 2}}

    gguf = tmp_path / "judge.gguf"
    gguf.write_bytes(b"GGUF")
    monkeypatch.setitem(sys.modules, "llama_cpp", types.SimpleNamespace(Llama=Llama))
    judge = from_spec(f"llamacpp:{gguf}", cache=False)
    assert asyncio.run(judge.judge("q", Verdict)).value.score == 4
    assert judge.stats()["cost"] == 0.0  # local


@pytest.mark.parametrize(
    ("model", "price"),
    [("gpt-4o-mini", (0.15, 0.60, 0.075)), ("gpt-4o-mini-2024-07-18", (0.15, 0.60, 0.075)),
     ("openai/gpt-4o", (2.50, 10.00, 1.25)), ("anthropic/claude-3-5-haiku-20241022", (0.80, 4.00, 0.08)),
     ("qwen2.5:7b", None), ("gpt-4o-mini-turbo", None)],
)
def test_price_lookup_never_guesses(model, price):
    assert lookup_price(model) == price


def test_price_override():
    assert lookup_price("mine", {"mine": (1.0, 2.0)}) == (1.0, 2.0)
    assert lookup_price("gpt-4o", {"gpt-4o": (0.0, 0.0)}) == (0.0, 0.0)
