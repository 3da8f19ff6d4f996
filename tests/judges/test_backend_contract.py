"""The contract every judge backend passes: a ChatRequest in, a Completion (text + usage) out, one
try, failures as JudgeError subclasses; the Judge around it parses, caches and counts the same way."""

from __future__ import annotations

import asyncio
import json
import socket
import sys
import threading
import time
import types
from collections.abc import Callable, Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest
from pydantic import BaseModel

from ragmeter.errors import (
    JudgeBadRequest,
    JudgeConnectionError,
    JudgeContextOverflow,
    JudgeError,
    JudgeRateLimited,
    JudgeServerError,
    JudgeTimeout,
)
from ragmeter.judges import (
    ChatRequest,
    Completion,
    FunctionBackend,
    Judge,
    JudgeBackend,
    JudgeConfig,
    Message,
    Usage,
    from_spec,
)
from ragmeter.judges.base import TokenLogprob

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


#: ``rule(body) -> (status, headers, reply, delay)``: the native server's answer to a request body
NativeRule = Callable[[dict[str, Any]], tuple[int, dict[str, str], Any, float]]


def native_ok(body: dict[str, Any]) -> tuple[int, dict[str, str], Any, float]:
    """An ``/api/chat`` answer whose content is ``{"score": 3}``."""
    return 200, {}, {"model": body.get("model"), "message": {"role": "assistant", "content": '{"score": 3}'},
                     "done": True, "done_reason": "stop", "prompt_eval_count": 7, "eval_count": 2}, 0.0


class NativeServer:
    """Ollama's native ``POST /api/chat`` on loopback (http.server in a thread), answering by ``rule``
    and keeping every request body in ``log``."""

    def __init__(self) -> None:
        self.rule: NativeRule = native_ok
        self.log: list[dict[str, Any]] = []
        server = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                body = json.loads(self.rfile.read(int(self.headers.get("Content-Length") or 0)))
                server.log.append({"path": self.path, "body": body, "headers": dict(self.headers)})
                status, headers, reply, delay = server.rule(body) if self.path == "/api/chat" else (
                    404, {}, "404 page not found", 0.0)
                time.sleep(delay)
                data = reply if isinstance(reply, bytes) else (
                    reply.encode() if isinstance(reply, str) else json.dumps(reply).encode())
                try:
                    self.send_response(status)
                    for k, v in {"Content-Type": "application/json", **headers}.items():
                        self.send_header(k, v)
                    self.send_header("Content-Length", str(len(data)))
                    self.end_headers()
                    self.wfile.write(data)
                except OSError:  # the client gave up (timeout test)
                    pass

            def log_message(self, *args: Any) -> None:
                pass

        self._httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._httpd.daemon_threads = True
        self.url = f"http://127.0.0.1:{self._httpd.server_address[1]}"
        self._thread = threading.Thread(target=self._httpd.serve_forever, args=(0.05,), daemon=True)
        self._thread.start()

    def stop(self) -> None:
        self._httpd.shutdown()
        self._httpd.server_close()


@pytest.fixture(scope="module")
def _native_session() -> Iterator[NativeServer]:
    server = NativeServer()
    yield server
    server.stop()


@pytest.fixture
def native(_native_session: NativeServer) -> Iterator[NativeServer]:
    """The native ``/api/chat`` server with a clean log and the ``{"score": 3}`` rule."""
    _native_session.rule, _native_session.log = native_ok, []
    yield _native_session
    _native_session.rule = native_ok


def make_backend(kind: str, fail: bool, fake_llm, monkeypatch, tmp_path, native: NativeServer) -> JudgeBackend:
    if kind == "openai":
        fake_llm.rule = (lambda call: Reply.server_error(503)) if fail else (lambda call: {"score": 3})
        return from_spec(f"openai:m@{fake_llm.url}", cache=False).backend
    if kind in ("ollama", "ollama-native"):
        if fail:
            native.rule = lambda body: (503, {}, {"error": "server busy"}, 0.0)
        return from_spec(f"{kind}:m@{native.url}", cache=False).backend
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


BACKENDS = ["openai", "ollama", "ollama-native", "litellm", "llamacpp", "function"]


@pytest.mark.parametrize("kind", BACKENDS)
def test_backend_answers_a_request(kind, fake_llm, monkeypatch, tmp_path, native):
    backend = make_backend(kind, False, fake_llm, monkeypatch, tmp_path, native)
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
def test_backend_failures_are_judge_errors(kind, fake_llm, monkeypatch, tmp_path, native):
    backend = make_backend(kind, True, fake_llm, monkeypatch, tmp_path, native)

    async def go():
        try:
            return await backend.complete(REQUEST)
        finally:
            await backend.aclose()

    with pytest.raises(JudgeError):
        asyncio.run(go())
    if kind == "openai":
        assert len(fake_llm.log) == 1  # one try: retries belong to the Judge
    if kind in ("ollama", "ollama-native"):
        assert len(native.log) == 1


@pytest.mark.parametrize("kind", BACKENDS)
def test_judge_wraps_every_backend_the_same_way(kind, fake_llm, monkeypatch, tmp_path, native):
    judge = Judge(make_backend(kind, False, fake_llm, monkeypatch, tmp_path, native), cache=tmp_path / "c")

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


def _native_call(backend: JudgeBackend, request: ChatRequest = REQUEST) -> Completion:
    async def go() -> Completion:
        try:
            return await backend.complete(request)
        finally:
            await backend.aclose()

    return asyncio.run(go())


def test_ollama_native_sends_the_native_request_and_maps_the_reply(native):
    def rule(body: dict[str, Any]) -> tuple[int, dict[str, str], Any, float]:
        return 200, {}, {
            "message": {"role": "assistant", "content": '{"score": 3}'}, "done": True, "done_reason": "length",
            "prompt_eval_count": 11, "eval_count": 2,
            "logprobs": [{"token": "{", "logprob": -0.5, "bytes": [123],
                          "top_logprobs": [{"token": "{", "logprob": -0.5}, {"token": " ", "logprob": -1.25}]},
                         {"token": "3", "logprob": -0.1, "top_logprobs": []}],
        }, 0.0

    native.rule = rule
    backend = JudgeConfig("ollama-native:qwen2.5:1.5b@" + native.url,
                          backend={"extra_body": {"keep_alive": "5m", "num_ctx": 8192,
                                                  "options": {"repeat_penalty": 1.0}}}).build().backend
    request = ChatRequest(REQUEST.messages, temperature=0.2, max_tokens=50, json_schema=REQUEST.json_schema,
                          seed=7, top_logprobs=2)
    out = _native_call(backend, request)
    assert out == Completion('{"score": 3}', Usage(11, 2), "length",
                             (TokenLogprob("{", -0.5, (("{", -0.5), (" ", -1.25))), TokenLogprob("3", -0.1)))
    (call,) = native.log
    assert call["path"] == "/api/chat" and "Authorization" not in call["headers"]
    assert call["body"] == {
        "model": "qwen2.5:1.5b", "messages": [m.to_dict() for m in REQUEST.messages], "stream": False,
        "truncate": False, "format": REQUEST.json_schema, "logprobs": True, "top_logprobs": 2, "keep_alive": "5m",
        "options": {"temperature": 0.2, "num_predict": 50, "seed": 7, "num_ctx": 8192, "repeat_penalty": 1.0},
    }
    assert backend.free and backend.base_url == native.url


def test_ollama_native_without_schema_or_logprobs_sends_neither(native):
    backend = from_spec(f"ollama-native:m@{native.url}", cache=False).backend
    out = _native_call(backend, ChatRequest((Message("user", "hi"),)))
    body = native.log[0]["body"]
    assert not {"format", "logprobs", "top_logprobs"} & body.keys() and "seed" not in body["options"]
    assert out.logprobs is None and out.finish_reason == "stop"
    # a prompt past num_ctx is rejected, not cut to fit (Ollama's default); the user may ask for the cut
    assert body["truncate"] is False
    cut = from_spec(f"ollama-native:m@{native.url}", cache=False, extra_body={"truncate": True}).backend
    _native_call(cut, ChatRequest((Message("user", "hi"),)))
    assert native.log[1]["body"]["truncate"] is True and "truncate" not in native.log[1]["body"]["options"]


@pytest.mark.parametrize(("status", "headers", "reply", "error", "words"), [
    (404, {}, {"error": 'model "m" not found, try pulling it first'}, JudgeBadRequest, "ollama pull m"),
    (429, {"Retry-After": "7"}, {"error": "too many requests"}, JudgeRateLimited, "HTTP 429"),
    (500, {}, {"error": "llama runner process has terminated"}, JudgeServerError, "llama runner"),
    (400, {}, {"error": "invalid format"}, JudgeBadRequest, "invalid format"),
    # llama.cpp's rejection of a prompt past the window, as Ollama relays it with truncate: false
    (400, {}, {"error": '{"error":{"code":400,"message":"request (5000 tokens) exceeds the available context size '
                        '(4096 tokens), try increasing it","type":"exceed_context_size_error",'
                        '"n_prompt_tokens":5000,"n_ctx":4096}}'}, JudgeContextOverflow, "larger one"),
    (200, {}, b"not json", JudgeServerError, "not an /api/chat answer"),
    (200, {}, {"error": "model failed to load"}, JudgeServerError, "model failed to load"),
])
def test_ollama_native_maps_http_answers(native, status, headers, reply, error, words):
    native.rule = lambda body: (status, headers, reply, 0.0)
    with pytest.raises(error, match=words) as got:
        _native_call(from_spec(f"ollama-native:m@{native.url}", cache=False).backend)
    if status == 429:
        assert got.value.retry_after == 7 and got.value.retryable
    if error is JudgeContextOverflow:
        assert (got.value.n_ctx, got.value.prompt_tokens) == (4096, 5000)


def test_ollama_native_names_a_base_url_that_is_not_ollamas_root(native):
    with pytest.raises(JudgeBadRequest, match="root") as got:
        _native_call(from_spec(f"ollama-native:m@{native.url}/v1", cache=False).backend)
    assert got.value.status_code == 404 and native.log[0]["path"] == "/v1/api/chat"


def test_ollama_native_refused_connection():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    with pytest.raises(JudgeConnectionError, match="connection refused"):
        _native_call(from_spec(f"ollama-native:m@http://127.0.0.1:{port}", cache=False).backend)


def test_ollama_native_timeout(native):
    native.rule = lambda body: (*native_ok(body)[:3], 0.5)
    request = ChatRequest(REQUEST.messages, timeout=0.1)
    with pytest.raises(JudgeTimeout, match=r"0\.1 s"):
        _native_call(from_spec(f"ollama-native:m@{native.url}", cache=False).backend, request)


def test_ollama_speaks_the_native_api_at_the_servers_root_or_its_v1(native, monkeypatch):
    # ollama: went through Ollama's OpenAI-compatible /v1, which has no truncate field and ignores
    # num_ctx: a prompt past the window was cut to fit and answered 200, with nothing to say so
    for url in (native.url, native.url + "/v1", native.url + "/v1/"):
        backend = from_spec(f"ollama:m@{url}", cache=False).backend
        _native_call(backend)
        assert (backend.name, backend.base_url, backend.free) == ("ollama", native.url, True)
    assert [c["path"] for c in native.log] == ["/api/chat"] * 3
    assert [c["body"]["truncate"] for c in native.log] == [False] * 3
    monkeypatch.setenv("OLLAMA_HOST", "10.0.0.5:11434")
    assert from_spec("ollama:qwen2.5:1.5b", cache=False).backend.base_url == "http://10.0.0.5:11434"
    monkeypatch.delenv("OLLAMA_HOST")
    assert from_spec("ollama:llama3.1", cache=False).backend.base_url == "http://127.0.0.1:11434"


def test_ollama_native_url_and_key(native, monkeypatch):
    monkeypatch.setenv("OLLAMA_HOST", "10.0.0.5:11434")
    assert from_spec("ollama-native:qwen2.5:1.5b", cache=False).backend.base_url == "http://10.0.0.5:11434"
    monkeypatch.delenv("OLLAMA_HOST")
    assert from_spec("ollama-native:m", cache=False).backend.base_url == "http://127.0.0.1:11434"
    monkeypatch.setenv("PROXY_KEY", "sk-proxy-secret-123")
    _native_call(from_spec(f"ollama-native:m@{native.url}", cache=False, api_key_env="PROXY_KEY").backend)
    assert native.log[0]["headers"]["Authorization"] == "Bearer sk-proxy-secret-123"
