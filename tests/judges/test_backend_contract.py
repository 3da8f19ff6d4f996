"""The contract every judge backend passes: a ChatRequest in, a Completion (text + usage) out, one
try, failures as JudgeError subclasses; the Judge around it parses, caches and counts the same way."""

from __future__ import annotations

import asyncio
import sys
import types

import pytest
from pydantic import BaseModel

from ragmeter.errors import JudgeError, JudgeServerError
from ragmeter.judges import ChatRequest, Completion, FunctionBackend, Judge, JudgeBackend, Message, from_spec

from .fake_server import ChatCall, Reply


class Verdict(BaseModel):
    score: int


REQUEST = ChatRequest((Message("system", "Grade."), Message("user", "answer: 42")),
                      json_schema=Verdict.model_json_schema(), schema_name="Verdict", max_tokens=50)


def _stub_litellm(monkeypatch, fail: bool) -> None:
    import openai

    async def acompletion(**kw):
        if fail:
            import httpx2

            req = httpx2.Request("POST", "http://x")
            raise openai.InternalServerError("down", response=httpx2.Response(500, request=req), body=None)
        msg = types.SimpleNamespace(content='{"score": 3}')
        return types.SimpleNamespace(choices=[types.SimpleNamespace(message=msg, finish_reason="stop")],
                                     usage=types.SimpleNamespace(prompt_tokens=7, completion_tokens=2))

    fake = types.ModuleType("litellm")
    fake.validate_environment = lambda model: {"keys_in_environment": True, "missing_keys": []}
    fake.supports_response_schema = lambda model: True
    fake.acompletion = acompletion
    monkeypatch.setitem(sys.modules, "litellm", fake)


def _stub_llamacpp(monkeypatch, tmp_path, fail: bool) -> str:
    class Llama:
        def __init__(self, **kw):
            pass

        def create_chat_completion(self, **kw):
            if fail:
                raise RuntimeError("llama.cpp failed")
            return {"choices": [{"message": {"content": '{"score": 3}'}, "finish_reason": "stop"}],
                    "usage": {"prompt_tokens": 7, "completion_tokens": 2}}

    monkeypatch.setitem(sys.modules, "llama_cpp", types.SimpleNamespace(Llama=Llama))
    path = tmp_path / "m.gguf"
    path.write_bytes(b"GGUF")
    return str(path)


def make_backend(kind: str, fail: bool, fake_llm, monkeypatch, tmp_path) -> JudgeBackend:
    if kind in ("openai", "ollama"):
        fake_llm.rule = (lambda call: Reply.server_error(503)) if fail else (lambda call: {"score": 3})
        return from_spec(f"{kind}:m@{fake_llm.url}", cache=False).backend
    if kind == "litellm":
        _stub_litellm(monkeypatch, fail)
        return from_spec("litellm:anthropic/claude-3-5-haiku", cache=False).backend
    if kind == "llamacpp":
        return from_spec(f"llamacpp:{_stub_llamacpp(monkeypatch, tmp_path, fail)}", cache=False).backend

    async def handler(request: ChatRequest) -> Completion | str:
        if fail:
            raise JudgeServerError("down")
        return '{"score": 3}'

    return FunctionBackend(handler)


BACKENDS = ["openai", "ollama", "litellm", "llamacpp", "function"]


@pytest.mark.parametrize("kind", BACKENDS)
def test_backend_answers_a_request(kind, fake_llm, monkeypatch, tmp_path):
    backend = make_backend(kind, False, fake_llm, monkeypatch, tmp_path)
    assert isinstance(backend, JudgeBackend)
    assert isinstance(backend.name, str) and backend.model and isinstance(backend.free, bool)

    async def go():
        try:
            return await backend.complete(REQUEST)
        finally:
            await backend.aclose()

    out = asyncio.run(go())
    assert isinstance(out, Completion) and Verdict.model_validate_json(out.text).score == 3
    assert out.usage.prompt_tokens >= 0 and out.usage.completion_tokens >= 0


@pytest.mark.parametrize("kind", BACKENDS)
def test_backend_failures_are_judge_errors(kind, fake_llm, monkeypatch, tmp_path):
    backend = make_backend(kind, True, fake_llm, monkeypatch, tmp_path)

    async def go():
        try:
            return await backend.complete(REQUEST)
        finally:
            await backend.aclose()

    with pytest.raises(JudgeError):
        asyncio.run(go())
    if kind in ("openai", "ollama"):
        assert len(fake_llm.log) == 1  # one try: retries belong to the Judge


@pytest.mark.parametrize("kind", BACKENDS)
def test_judge_wraps_every_backend_the_same_way(kind, fake_llm, monkeypatch, tmp_path):
    judge = Judge(make_backend(kind, False, fake_llm, monkeypatch, tmp_path), cache=tmp_path / "c")

    async def go():
        first = await judge.judge("q", Verdict, tag="t")
        second = await judge.judge("q", Verdict, tag="t")
        await judge.aclose()
        return first, second

    first, second = asyncio.run(go())
    assert first.value.score == second.value.score == 3 and second.cached and not first.cached
    s = judge.stats()
    assert (s["calls"], s["cache_hits"], s["requests"]) == (2, 1, 1)
    judge.close()


def test_fake_server_call_helpers():
    call = ChatCall(0, {"model": "m", "messages": [{"role": "user", "content": "hi"},
                                                   {"role": "assistant", "content": "x"}],
                        "response_format": {"type": "json_object"}}, {})
    assert call.user_text == "hi" and call.is_repair and call.response_format == "json_object"
