"""A scriptable OpenAI-compatible chat server on loopback, for tests and benchmarks.

Real HTTP (aiohttp) on ``127.0.0.1`` with a random port, in a background thread with its own
event loop, so the code under test talks to it exactly as to vLLM or OpenAI. Each test scripts
it with a *rule*: a function from the received :class:`ChatCall` to a :class:`Reply` (or to a
plain string = reply text, or a dict = reply JSON). Replies can be canned text, JSON, latency,
HTTP 429 with ``Retry-After``, 5xx, hangs (for timeouts), dropped connections, malformed or
truncated bodies. Every request is recorded in :attr:`FakeLLMServer.log` with what the server
returned, so tests can check the client's accounting against the server's own view.

Usage::

    with FakeLLMServer(lambda call: {"score": 1}) as server:
        judge = from_spec(f"openai:fake@{server.url}", cache=False)
        ...
        assert server.kinds()["ok"] == 1

A server with a fixed number of *slots* (``slots=1``: like llama-cpp-python's server) serves at
most that many requests at once, each for ``latency`` seconds; the others wait in its queue, and
a request whose client gave up keeps its slot until its service time is over, as a real server
computing an abandoned generation does (counted in :attr:`FakeLLMServer.abandoned`).
``props=True`` also answers llama.cpp's ``GET /props`` with ``total_slots``; ``vllm=True`` answers
``GET /metrics`` with vLLM's Prometheus series (a server that batches any number of requests);
``openapi_title="..."`` answers ``GET /openapi.json`` as a FastAPI server of that title does
(llama-cpp-python's server is one).

Run standalone (benchmarks, manual tests)::

    python tests/judges/fake_server.py --latency 0.2    # prints "READY <url>"
    python tests/judges/fake_server.py --latency 0.1 --slots 1
"""

from __future__ import annotations

import argparse
import asyncio
import inspect
import json
import threading
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from aiohttp import web


@dataclass
class ChatCall:
    """A request the server received."""

    index: int
    body: dict[str, Any]
    headers: dict[str, str]

    @property
    def messages(self) -> list[dict[str, Any]]:
        """The request's messages."""
        return list(self.body.get("messages") or [])

    @property
    def model(self) -> str:
        """The model asked for."""
        return str(self.body.get("model", ""))

    @property
    def response_format(self) -> str | None:
        """``json_schema``, ``json_object`` or None."""
        rf = self.body.get("response_format")
        return rf.get("type") if isinstance(rf, dict) else None

    @property
    def schema_name(self) -> str | None:
        """The name of the reply schema the client asked for, in any structured-output mode:
        ``response_format.json_schema.name`` (json_schema), the schema's ``title`` (json_object with
        a schema), or the ``title`` of the JSON schema written into the prompt (prompt mode, after
        "JSON schema:"). None for a free-text request. Test judges answer by it, so rewording a
        prompt's sentences never changes what they reply."""
        rf = self.body.get("response_format")
        if isinstance(rf, dict):
            if isinstance(rf.get("json_schema"), dict) and rf["json_schema"].get("name"):
                return str(rf["json_schema"]["name"])
            if isinstance(rf.get("schema"), dict) and rf["schema"].get("title"):
                return str(rf["schema"]["title"])
        for m in self.messages:
            text = str(m.get("content", ""))
            at = text.find("JSON schema:\n{")
            if m.get("role") == "system" and at >= 0:
                try:
                    schema = json.loads(text[at + len("JSON schema:\n"):])
                except ValueError:
                    continue
                if isinstance(schema, dict) and schema.get("title"):
                    return str(schema["title"])
        return None

    @property
    def user_text(self) -> str:
        """The content of the first user message (the judged prompt)."""
        for m in self.messages:
            if m.get("role") == "user":
                return str(m.get("content", ""))
        return ""

    @property
    def is_repair(self) -> bool:
        """True for a repair follow-up: the request carries an assistant turn (the unreadable reply
        shown back), or its last message carries the note of a repair after a reply cut at the
        token limit (asked again without the cut reply)."""
        return (any(m.get("role") == "assistant" for m in self.messages)
                or "Your previous reply was cut at" in str(self.messages[-1].get("content", "")))

    @property
    def all_text(self) -> str:
        """Every message's content, joined."""
        return "\n".join(str(m.get("content", "")) for m in self.messages)


@dataclass
class Reply:
    """What the server does with one request.

    ``content`` is the assistant text of a 200 reply. ``status`` != 200 sends an OpenAI-style
    error body with ``error`` as message. ``raw_body`` sends those bytes as is (malformed JSON).
    ``delay`` sleeps first; ``hang`` sleeps that long and then answers 504 (use a longer value
    than the client timeout); ``drop`` closes the connection without answering.
    """

    content: str | None = None
    status: int = 200
    headers: dict[str, str] = field(default_factory=dict)
    error: str = "error"
    raw_body: bytes | None = None
    delay: float = 0.0
    hang: float | None = None
    drop: bool = False
    finish_reason: str = "stop"
    usage: tuple[int, int] | None = None
    #: sent as ``usage.prompt_tokens_details.cached_tokens`` (as OpenAI, llama.cpp's server, vLLM do)
    cached_tokens: int | None = None
    kind: str = ""
    #: OpenAI's ``choices[0].logprobs.content`` list (``[{"token", "logprob", "top_logprobs": [...]}]``)
    logprobs: list[dict[str, Any]] | None = None
    #: sent as the reply's ``timings`` (llama.cpp's server: ``prompt_ms``, ``predicted_ms``, ...)
    timings: dict[str, float] | None = None

    @classmethod
    def json(cls, obj: Any, **kw: Any) -> Reply:
        """A 200 reply whose text is ``obj`` as JSON."""
        return cls(content=json.dumps(obj), **kw)

    @classmethod
    def rate_limited(cls, retry_after: float | None = 0, **kw: Any) -> Reply:
        """HTTP 429, with ``Retry-After`` when given."""
        headers = {} if retry_after is None else {"retry-after": str(retry_after)}
        return cls(status=429, headers=headers, error="Rate limit reached", kind="429", **kw)

    @classmethod
    def server_error(cls, status: int = 500, error: str = "internal error", **kw: Any) -> Reply:
        """HTTP 5xx."""
        return cls(status=status, error=error, kind=str(status), **kw)

    @classmethod
    def hanging(cls, seconds: float = 30.0) -> Reply:
        """No answer for ``seconds`` (a client timeout)."""
        return cls(hang=seconds, kind="hang")

    @classmethod
    def dropped(cls) -> Reply:
        """Close the connection without answering."""
        return cls(drop=True, kind="drop")

    @classmethod
    def malformed(cls, text: str = "I think it is good, score 4 of 5") -> Reply:
        """A 200 reply whose text is not the expected JSON."""
        return cls(content=text, kind="malformed")

    @classmethod
    def truncated(cls, obj: Any, keep: float = 0.5) -> Reply:
        """A 200 reply cut at the token limit (``finish_reason="length"``)."""
        text = json.dumps(obj)
        return cls(content=text[: max(1, int(len(text) * keep))], finish_reason="length", kind="truncated")


@dataclass
class LogEntry:
    """What the server returned for one request."""

    index: int
    kind: str
    status: int
    content: str | None
    response_format: str | None
    user_text: str
    is_repair: bool
    time: float
    authorization: str = ""
    schema: str | None = None


Rule = Callable[[ChatCall], Any]


def default_rule(call: ChatCall) -> Reply:
    """Replies ``{"score": 1, "reason": "ok"}``."""
    return Reply.json({"score": 1, "reason": "ok"})


def _estimate(text: str) -> int:
    return max(1, len(text) // 4)


class FakeLLMServer:
    """The server. ``rule`` and ``latency`` (seconds added to every reply) may be changed any time."""

    def __init__(self, rule: Rule | None = None, *, latency: float = 0.0, host: str = "127.0.0.1",
                 port: int = 0, slots: int | None = None, props: bool = False, vllm: bool = False,
                 openapi_title: str | None = None) -> None:
        self.rule: Rule = rule or default_rule
        self.latency = latency
        self.slots = slots
        self.props = props
        self.vllm = vllm
        self.openapi_title = openapi_title
        self.abandoned = 0
        self.busy = 0
        self.peak_busy = 0
        self._slot_gate: asyncio.Semaphore | None = None
        self._work: set[asyncio.Future[None]] = set()
        self.host, self.port = host, port
        self.log: list[LogEntry] = []
        self._count = 0
        self._lock = threading.Lock()
        self._thread: threading.Thread | None = None
        self._stop_lock = threading.Lock()
        self._loop: asyncio.AbstractEventLoop | None = None
        self._runner: web.AppRunner | None = None

    @property
    def url(self) -> str:
        """The ``/v1`` base URL."""
        return f"http://{self.host}:{self.port}/v1"

    def kinds(self) -> Counter[str]:
        """How many replies of each kind (``ok``, ``429``, ``500``, ``hang``, ``drop``, ``malformed``...)."""
        with self._lock:
            return Counter(e.kind for e in self.log)

    def clear_log(self) -> None:
        """Forget the log."""
        with self._lock:
            self.log.clear()

    async def _handle(self, request: web.Request) -> web.StreamResponse:
        body = await request.json()
        with self._lock:
            index = self._count
            self._count += 1
        call = ChatCall(index, body, dict(request.headers))
        out = self.rule(call)
        if inspect.isawaitable(out):
            out = await out
        reply = out if isinstance(out, Reply) else (Reply(content=out) if isinstance(out, str) else Reply.json(out))
        kind = reply.kind or ("ok" if reply.status == 200 else str(reply.status))
        entry = LogEntry(index, kind, reply.status, reply.content, call.response_format, call.user_text,
                         call.is_repair, time.time(), request.headers.get("Authorization", ""), call.schema_name)
        with self._lock:
            self.log.append(entry)
        if self.slots is not None:
            await self._serve_in_slot(self.latency + reply.delay)
        elif self.latency or reply.delay:
            with self._lock:  # requests being served at once (no slot limit: all of them)
                self.busy += 1
                self.peak_busy = max(self.peak_busy, self.busy)
            try:
                await asyncio.sleep(self.latency + reply.delay)
            finally:
                with self._lock:
                    self.busy -= 1
        if reply.drop:
            assert request.transport is not None
            request.transport.abort()
            return web.Response(status=499)  # never sent: the connection is gone
        if reply.hang is not None:
            await asyncio.sleep(reply.hang)
            return web.json_response({"error": {"message": "hung"}}, status=504)
        if reply.raw_body is not None:
            return web.Response(body=reply.raw_body, status=reply.status, headers=reply.headers,
                                content_type="application/json")
        if reply.status != 200:
            err = {"error": {"message": reply.error, "type": "fake_error", "code": reply.status}}
            return web.json_response(err, status=reply.status, headers=reply.headers)
        content = reply.content or ""
        prompt_tokens, completion_tokens = reply.usage or (_estimate(call.all_text), _estimate(content))
        payload = {
            "id": f"chatcmpl-{index}",
            "object": "chat.completion",
            "created": int(time.time()),
            "model": call.model,
            "choices": [{"index": 0, "message": {"role": "assistant", "content": content},
                         "finish_reason": reply.finish_reason,
                         **({"logprobs": {"content": reply.logprobs}} if reply.logprobs is not None else {})}],
            "usage": {"prompt_tokens": prompt_tokens, "completion_tokens": completion_tokens,
                      "total_tokens": prompt_tokens + completion_tokens,
                      **({"prompt_tokens_details": {"cached_tokens": reply.cached_tokens}}
                         if reply.cached_tokens is not None else {})},
            **({"timings": reply.timings} if reply.timings is not None else {}),
        }
        return web.json_response(payload, headers=reply.headers)

    async def _serve_in_slot(self, seconds: float) -> None:
        """Wait for a free slot, then hold it ``seconds``; a client that disconnects meanwhile
        does not free the slot early (the work goes on, as in a real one-slot server)."""
        if self._slot_gate is None:
            self._slot_gate = asyncio.Semaphore(self.slots or 1)
        gate = self._slot_gate

        async def work() -> None:
            async with gate:
                with self._lock:
                    self.busy += 1
                    self.peak_busy = max(self.peak_busy, self.busy)
                try:
                    await asyncio.sleep(seconds)
                finally:
                    with self._lock:
                        self.busy -= 1

        task = asyncio.ensure_future(work())
        self._work.add(task)
        task.add_done_callback(self._work.discard)
        try:
            await asyncio.shield(task)
        except asyncio.CancelledError:
            with self._lock:
                self.abandoned += 1
            raise

    async def _props(self, request: web.Request) -> web.Response:
        if not self.props:
            return web.json_response({"error": "not found"}, status=404)
        return web.json_response({"total_slots": self.slots or 1, "model_path": "fake"})

    async def _metrics(self, request: web.Request) -> web.Response:
        if not self.vllm:
            return web.Response(status=404, text="not found")
        text = f"# TYPE vllm:num_requests_running gauge\nvllm:num_requests_running {self.busy}\n"
        return web.Response(text=text, content_type="text/plain")

    async def _openapi(self, request: web.Request) -> web.Response:
        """A FastAPI server's schema (as llama-cpp-python's), titled ``openapi_title``; 404 without one."""
        if self.openapi_title is None:
            return web.json_response({"detail": "Not Found"}, status=404)
        return web.json_response({"openapi": "3.1.0", "info": {"title": self.openapi_title, "version": "0.1.0"},
                                  "paths": {"/v1/chat/completions": {}}})

    async def _models(self, request: web.Request) -> web.Response:
        return web.json_response({"object": "list", "data": [{"id": "fake", "object": "model"}]})

    def start(self) -> FakeLLMServer:
        """Start serving in a background thread; returns when the port is bound."""
        ready = threading.Event()
        failure: list[BaseException] = []

        def run() -> None:
            loop = asyncio.new_event_loop()
            self._loop = loop
            asyncio.set_event_loop(loop)
            try:
                loop.run_until_complete(self._start_site())
            except BaseException as exc:  # pragma: no cover - reported to start()
                failure.append(exc)
                ready.set()
                return
            ready.set()
            loop.run_forever()
            for task in list(self._work):  # abandoned work still "computing" at shutdown
                task.cancel()
            loop.run_until_complete(self._runner.cleanup() if self._runner else asyncio.sleep(0))
            loop.close()

        self._thread = threading.Thread(target=run, name="fake-llm-server", daemon=True)
        self._thread.start()
        ready.wait(10)
        if failure:
            raise failure[0]
        return self

    async def _start_site(self) -> None:
        app = web.Application(client_max_size=64 * 1024 * 1024)
        app.router.add_post("/v1/chat/completions", self._handle)
        app.router.add_get("/v1/models", self._models)
        app.router.add_get("/props", self._props)
        app.router.add_get("/metrics", self._metrics)
        app.router.add_get("/openapi.json", self._openapi)
        self._runner = web.AppRunner(app, handler_cancellation=True, access_log=None, shutdown_timeout=0.5)
        await self._runner.setup()
        site = web.TCPSite(self._runner, self.host, self.port, backlog=1024)
        await site.start()
        server = site._server
        assert server is not None
        self.port = server.sockets[0].getsockname()[1]  # type: ignore[union-attr]

    def stop(self) -> None:
        """Stop serving and join the thread (idempotent: a second call, from another thread too,
        waits for the first)."""
        with self._stop_lock:
            if self._loop is not None and self._thread is not None:
                if not self._loop.is_closed():
                    self._loop.call_soon_threadsafe(self._loop.stop)
                self._thread.join(10)
                self._thread = None

    def __enter__(self) -> FakeLLMServer:
        return self.start()

    def __exit__(self, *exc: Any) -> None:
        self.stop()


def main() -> None:
    """``python tests/judges/fake_server.py --latency 0.2``: serve until killed."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--latency", type=float, default=0.0, help="seconds added to every reply")
    parser.add_argument("--port", type=int, default=0)
    parser.add_argument("--slots", type=int, default=None, help="serve at most this many requests at once")
    parser.add_argument("--props", action="store_true", help="answer GET /props with total_slots")
    parser.add_argument("--vllm", action="store_true", help="answer GET /metrics like vLLM")
    args = parser.parse_args()
    server = FakeLLMServer(latency=args.latency, port=args.port, slots=args.slots, props=args.props,
                           vllm=args.vllm).start()
    print(f"READY {server.url}", flush=True)
    try:
        threading.Event().wait()
    except KeyboardInterrupt:
        server.stop()


if __name__ == "__main__":
    main()
