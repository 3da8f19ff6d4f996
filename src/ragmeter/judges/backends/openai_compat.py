"""The ``openai`` backend: any OpenAI-compatible chat completions server.

Works with OpenAI, vLLM, Ollama's ``/v1`` (``ollama:`` speaks Ollama's native API instead:
:mod:`.ollama_native`), llama.cpp's server, llama-cpp-python, LM Studio and
other servers that speak the same API, through the official ``openai`` SDK (``AsyncOpenAI``,
with the SDK's own retries turned off: the :class:`~ragmeter.judges.Judge` retries). The SDK comes
with the ``judges`` extra (``pip install 'ragmeter[judges]'``); without it building the backend
raises :class:`~ragmeter.errors.MissingBackendError` saying so, before any call.

Structured output is negotiated per backend instance (``structured_output="auto"``), and a
fallback is decided **per request**: a request starts with the richest mode in use
(``response_format={"type": "json_schema", ...}``, then ``{"type": "json_object", "schema":
...}``, then JSON asked for in the prompt only). When the server rejects that mode before it
ever worked, this request is sent again in the next mode:

- an HTTP 400/422/500 whose message names the response format (``json_schema``,
  ``response_format``... as llama-cpp-python answers) is a definite "not supported": the mode is
  dropped for every later request;
- a bare HTTP 500 may be a transient failure: only this request falls back. After
  :data:`STRIKES` consecutive bare 500s in a mode (with no success in it) new requests start one
  mode lower, and the richer mode is tried again after :data:`REPROBE_AFTER` requests (then
  twice as many after each failed retry).

Once a mode has worked, an error in it is a server error (retried by the judge), not a format
rejection. Every fallback is counted (``format_fallbacks`` and ``format_fallback_paths`` in
``judge.stats()``, shown on the judge line). The reply is always validated whatever the mode.

**Sampling extras** (``extra_body``): fields added to every request body, for server-specific
sampling options; none by default. llama-cpp-python's server applies a *repeat penalty* of 1.1
over the last 64 tokens unless told otherwise, which at temperature 0 sometimes writes the
verdict the model found less likely (a list of "yes" verdicts pushed to "no": 19 of 177
faithfulness verdict tokens of a 1.5B judge); ``extra_body={"repeat_penalty": 1.0}`` turns it
off for every request. It is not the backend's default because on every request it was measured
not to help and to hurt (docs/judges.md): per-chunk AUROC 0.760 vs 0.788 with the penalty (p
0.47), and 4 of 24 passage-recall replies looped on one sentence to the token limit
(JudgeParseError, 0 with the penalty). ``extra_body``
is part of the cache key and of ``judge.stats()``; a server that refuses a field answers with
an HTTP 400 (a :class:`~ragmeter.errors.JudgeBadRequest`, not retried).

A request's own ``repeat_penalty`` (:attr:`~ragmeter.judges.base.ChatRequest.repeat_penalty`:
faithfulness's claim list and verdict list ask for none, the repair of a reply cut at the token
limit for 1.1) is sent when the judge passes it on, which it does only when the server was probed
to be llama-cpp-python's or llama.cpp's own (:attr:`OpenAIBackend.repeat_penalty_field`);
``extra_body`` wins over it.
"""

from __future__ import annotations

import asyncio
import base64
import json
import os
from typing import Any
from urllib.parse import unquote, urlsplit, urlunsplit

from ..._optional import require
from ..._plugins import BASE_URL_ENV, OPENAI_URL, api_key_for, is_local_url, key_belongs  # shared with the embedders
from ...errors import JudgeAuthError, JudgeBadRequest, JudgeError, JudgeServerError
from ...masking import mask_url, url_secrets
from ..base import ChatRequest, Completion, Message, TokenLogprob, Usage
from ..registry import BackendInfo, register_backend
from ._errors import map_openai_error

MODES = ("json_schema", "json_object", "prompt")
#: Consecutive bare HTTP 500s in a not-yet-working mode before new requests start one mode lower.
STRIKES = 3
#: Requests before a skipped richer mode is tried again (doubled after each failed retry).
REPROBE_AFTER = 20


def _split_userinfo(url: str) -> tuple[str, str | None]:
    """``(url without user info, "Basic ..." header value or None)``."""
    parts = urlsplit(url)
    if "@" not in parts.netloc:
        return url, None
    userinfo, _, hostport = parts.netloc.rpartition("@")
    user, _, pw = userinfo.partition(":")
    token = base64.b64encode(f"{unquote(user)}:{unquote(pw)}".encode()).decode()
    return urlunsplit((parts.scheme, hostport, parts.path, parts.query, parts.fragment)), f"Basic {token}"


def schema_instruction(schema: dict[str, Any]) -> str:
    """The system message that asks for JSON when the server cannot enforce a schema."""
    return (
        "Reply with only one JSON object, no prose and no code fence, that follows this JSON schema:\n"
        + json.dumps(schema, ensure_ascii=False)
    )


class OpenAIBackend:
    """A chat-completions backend over the ``openai`` SDK.

    Parameters
    ----------
    model:
        The model name the server knows (``gpt-4o-mini``, ``qwen2.5:7b``...).
    base_url:
        The server's ``/v1`` URL; default ``$OPENAI_BASE_URL``, else OpenAI's.
    api_key, api_key_env:
        The key, or the environment variable to read it from (``api_key_env="GROQ_API_KEY"``):
        a key named so is sent to ``base_url`` whatever it is. Neither given: ``$OPENAI_API_KEY``,
        sent only to its own origin, ``https://api.openai.com`` or that of ``$OPENAI_BASE_URL``
        (:func:`ragmeter._plugins.api_key_for`). Any other server gets no key: a local or
        private-network one needs none, a public one raises
        :class:`~ragmeter.errors.JudgeAuthError` here, before any run, asking to name its key.
    structured_output:
        ``"auto"`` (negotiate, see module docs), or pin one of ``"json_schema"``,
        ``"json_object"``, ``"prompt"``.
    organization, project, default_headers:
        Passed to ``AsyncOpenAI``.
    free:
        Calls cost nothing (local models): cost is 0 instead of looked up.
    name:
        The backend name recorded in stats and cache keys.
    key_env_var:
        The environment variable a key is looked up in when none is named (None: never).
    needs_key:
        False: a server that takes any key (Ollama): no key is looked up nor asked for.
    extra_body:
        Extra fields of every request body (server-specific sampling options, e.g.
        ``{"repeat_penalty": 1.0}`` for llama-cpp-python; see the module docs). Default: none.
    """

    #: a request's ``repeat_penalty`` is passed on only to a server probed to take it (llama-cpp-python's)
    repeat_penalty_field = "probe"

    def __init__(
        self,
        model: str,
        *,
        base_url: str | None = None,
        api_key: str | None = None,
        api_key_env: str | None = None,
        structured_output: str = "auto",
        organization: str | None = None,
        project: str | None = None,
        default_headers: dict[str, str] | None = None,
        free: bool = False,
        name: str = "openai",
        key_env_var: str | None = "OPENAI_API_KEY",
        needs_key: bool = True,
        extra_body: dict[str, Any] | None = None,
    ) -> None:
        # imported here, not in the first (timed) call: the import takes ~0.5 s
        self._openai = require("openai", f"the {name} judge")
        if not model:
            raise JudgeBadRequest(f"the {name} judge needs a model, e.g. '{name}:gpt-4o-mini'")
        if structured_output not in ("auto", *MODES):
            raise JudgeBadRequest(
                f"structured_output: expected auto, {', '.join(MODES)}; got {structured_output!r}"
            )
        self.name = name
        self.model = model
        url = (base_url or os.environ.get(BASE_URL_ENV) or OPENAI_URL).rstrip("/")
        #: the URL as shown and stored (stats, summary.json, cache key): credentials masked
        self.base_url: str | None = mask_url(url)
        self._secrets = url_secrets(url)
        # user:pw in the URL is HTTP basic auth (as curl and httpx read it): the client gets the URL
        # without them and an Authorization header instead of the API key's bearer token
        self._url, basic = _split_userinfo(url)
        if basic is not None:
            default_headers = {**(default_headers or {}), "Authorization": basic}
            self._secrets.append(basic.partition(" ")[2])
        key = api_key_for(url, api_key=api_key, api_key_env=api_key_env,
                          env_var=key_env_var if needs_key else None)
        if key is not None:
            self._secrets.append(key)
        elif api_key_env:
            raise JudgeAuthError(f"api_key_env: the environment variable {api_key_env} is not set "
                                 f"(export {api_key_env}=...)")
        elif basic is None and needs_key and not is_local_url(url):
            raise JudgeAuthError(_no_key_message(name, model, self.base_url, key_env_var))
        # the SDK sends some key: a placeholder, never a secret, where none belongs to the server
        self._api_key = key or ("url-credentials" if basic is not None else "no-key-needed")
        #: fields added to every request body (module docs)
        self.extra_body: dict[str, Any] = dict(extra_body or {})
        self.free = free
        self.fixed_mode = structured_output != "auto"
        self.mode = MODES[0] if structured_output == "auto" else structured_output
        self.format_fallbacks = 0
        #: ``{"json_schema->json_object": n}``: how often a request fell back, and from what to what
        self.format_fallback_paths: dict[str, int] = {}
        self._worked: set[str] = {self.mode} if self.fixed_mode else set()
        self._dropped: set[str] = set()
        self._strikes: dict[str, int] = {}
        self._requests = 0
        self._reprobe_at = 0
        self._reprobe_gap = REPROBE_AFTER
        self._client_kwargs: dict[str, Any] = dict(
            organization=organization, project=project, default_headers=default_headers
        )
        self._clients: dict[int, tuple[asyncio.AbstractEventLoop, Any]] = {}
        # building an AsyncOpenAI takes ~0.15 s of CPU: build the first one now, not inside the
        # first (timed) call; it binds to the first event loop that uses it
        self._spare: Any = self._new_client()

    def _new_client(self) -> Any:
        http_client = None
        try:  # the SDK's aiohttp transport is several times lighter than httpx2 at high concurrency
            import aiohttp  # noqa: F401

            http_client = self._openai.DefaultAioHttpClient()
        except (ImportError, RuntimeError):
            pass
        return self._openai.AsyncOpenAI(
            api_key=self._api_key, base_url=self._url, max_retries=0, http_client=http_client,
            **self._client_kwargs,
        )

    def _client(self) -> Any:
        """The ``AsyncOpenAI`` client of the running event loop (one per loop: connections are loop-bound)."""
        loop = asyncio.get_running_loop()
        got = self._clients.get(id(loop))
        if got is not None and got[0] is loop:
            return got[1]
        for k in [k for k, (lp, _) in self._clients.items() if lp.is_closed()]:
            del self._clients[k]
        client, self._spare = (self._spare, None) if self._spare is not None else (self._new_client(), None)
        self._clients[id(loop)] = (loop, client)
        return client

    def _response_format(self, request: ChatRequest, mode: str) -> tuple[list[dict[str, str]], dict[str, Any]]:
        messages = request.message_dicts()
        extra: dict[str, Any] = {}
        if request.json_schema is None:
            return messages, extra
        if mode == "json_schema":
            extra["response_format"] = {
                "type": "json_schema",
                "json_schema": {"name": request.schema_name, "schema": request.json_schema, "strict": False},
            }
            return messages, extra
        instruction = Message("system", schema_instruction(request.json_schema)).to_dict()
        messages = [instruction, *messages]
        if mode == "json_object":
            extra["response_format"] = {"type": "json_object", "schema": request.json_schema}
        return messages, extra

    @property
    def mode_confirmed(self) -> bool:
        """True once a request in the current starting mode succeeded."""
        return self.mode in self._worked

    async def complete(self, request: ChatRequest) -> Completion:
        """Send one chat completion request (with per-request structured-output fallback, see module docs)."""
        if request.json_schema is None:
            return await self._send(request, self.mode)
        self._requests += 1
        mode = self._start_mode()
        while True:
            try:
                completion = await self._send(request, mode)
            except (JudgeBadRequest, JudgeServerError) as exc:
                verdict = _format_rejected(exc)
                if self.fixed_mode or mode in self._worked or mode == MODES[-1] or verdict is None:
                    raise
                lower = self._reject(mode, definite=verdict == "definite")
                path = f"{mode}->{lower}"
                self.format_fallbacks += 1
                self.format_fallback_paths[path] = self.format_fallback_paths.get(path, 0) + 1
                mode = lower
                continue
            self._worked.add(mode)
            self._strikes[mode] = 0
            if MODES.index(mode) < MODES.index(self.mode):  # a retried richer mode works again
                self.mode = mode
            return completion

    def _lower(self, mode: str) -> str:
        """The next mode below ``mode`` that was not dropped."""
        rest = [m for m in MODES[MODES.index(mode) + 1:] if m not in self._dropped]
        return rest[0] if rest else MODES[-1]

    def _start_mode(self) -> str:
        """The mode a new request starts with: the current one, or, when it is time to retry, the
        richest mode that was skipped after transient failures (never a dropped one); a pinned mode
        always."""
        if self.fixed_mode:
            return self.mode
        richest = next(m for m in MODES if m not in self._dropped)
        if richest != self.mode and self._requests >= self._reprobe_at:
            return richest
        return self.mode

    def _reject(self, mode: str, *, definite: bool) -> str:
        """Count a format rejection of ``mode``; returns the mode this request tries next."""
        lower = self._lower(mode)
        if definite:
            self._dropped.add(mode)
        else:
            self._strikes[mode] = self._strikes.get(mode, 0) + 1
            if mode != self.mode:  # a retry of a skipped richer mode failed: wait longer next time
                self._reprobe_at = self._requests + self._reprobe_gap
                self._reprobe_gap *= 2
                return lower
            if self._strikes[mode] < STRIKES:
                return lower
            self._reprobe_at = self._requests + self._reprobe_gap
        if self.mode == mode:
            self.mode = lower
        return lower

    async def _send(self, request: ChatRequest, mode: str) -> Completion:
        messages, extra = self._response_format(request, mode)
        if request.seed is not None:
            extra["seed"] = request.seed
        if request.top_logprobs is not None:
            extra["logprobs"] = True
            extra["top_logprobs"] = request.top_logprobs
        body = {
            "model": self.model,
            "messages": messages,
            "temperature": request.temperature,
            "max_tokens": request.max_tokens,
            **({} if request.repeat_penalty is None else {"repeat_penalty": request.repeat_penalty}),
            **self.extra_body,
            **extra,
        }
        try:
            # The SDK's documented raw-request path: same auth, errors and transport as
            # chat.completions.create, without its per-call typed transform of the body (which
            # costs several ms of CPU a call and caps throughput at high concurrency).
            resp = await self._client().post(
                "/chat/completions", body=body, cast_to=object, options={"timeout": request.timeout}
            )
        except self._openai.OpenAIError as exc:
            raise map_openai_error(exc, backend=self.name, secrets=self._secrets) from exc
        except ValueError as exc:  # a 200 whose body is not JSON
            raise JudgeServerError(f"{self.name} judge: the server's reply is not JSON: {exc}") from exc
        return _completion_from(resp, self.name)

    async def aclose(self) -> None:
        """Close the HTTP client of the running loop."""
        loop = asyncio.get_running_loop()
        got = self._clients.pop(id(loop), None)
        if got is not None:
            await got[1].close()

    def __repr__(self) -> str:
        return f"OpenAIBackend(name={self.name!r}, model={self.model!r}, base_url={self.base_url!r})"


_FORMAT_WORDS = ("response_format", "json_schema", "json_object", "schema", "json")


def _format_rejected(exc: JudgeError) -> str | None:
    """Whether an error on a not-yet-working structured-output mode means "mode not supported":
    ``"definite"`` for HTTP 400/422/500 whose message names the response format (llama-cpp-python
    answers an unknown ``response_format`` type with a 500 saying so), ``"maybe"`` for a bare
    HTTP 500 (possibly transient: only that request falls back), None otherwise."""
    text = str(exc).lower()
    if exc.status_code in (400, 422) and any(word in text for word in _FORMAT_WORDS):
        return "definite"
    if exc.status_code == 500 and any(word in text for word in _FORMAT_WORDS[:3]):
        return "definite"
    if exc.status_code == 500:
        return "maybe"
    return None


def usage_of(usage: Any) -> Usage:
    """:class:`Usage` of a reply's ``usage`` (a dict, or an object with the same attributes as
    litellm returns); the cached part from ``prompt_tokens_details.cached_tokens``, capped at the
    prompt tokens (a server that says more reused than it was sent is not believed past that)."""
    def get(obj: Any, name: str) -> Any:
        return obj.get(name) if isinstance(obj, dict) else getattr(obj, name, None)

    prompt = int(get(usage, "prompt_tokens") or 0)
    details = get(usage, "prompt_tokens_details")
    cached = int(get(details, "cached_tokens") or 0) if details is not None else 0
    return Usage(prompt, int(get(usage, "completion_tokens") or 0), min(max(cached, 0), max(prompt, 0)))


def _completion_from(resp: Any, backend: str) -> Completion:
    """A :class:`Completion` from a chat completion body (a dict)."""
    try:
        choice = resp["choices"][0]
        text = (choice.get("message") or {}).get("content") or ""
        usage = resp.get("usage") or {}
        u = usage_of(usage)
        if not isinstance(text, str):
            raise TypeError("content is not text")
    except (KeyError, IndexError, TypeError, AttributeError, ValueError) as exc:
        raise JudgeServerError(
            f"{backend} judge: the server's reply is not a chat completion ({type(exc).__name__}: {exc})"
        ) from None
    return Completion(text, u, choice.get("finish_reason"), parse_logprobs(choice.get("logprobs")))


def parse_logprobs(block: Any) -> tuple[TokenLogprob, ...] | None:
    """A choice's ``logprobs`` object (``{"content": [{"token", "logprob", "top_logprobs": [...]}]}``,
    as OpenAI, vLLM and llama-cpp-python send it) as :class:`TokenLogprob` s; None when absent or
    not in that shape (logprobs are an optional extra: a malformed block never fails the reply)."""
    if not isinstance(block, dict) or not isinstance(block.get("content"), list):
        return None
    out = []
    try:
        for item in block["content"]:
            top = tuple((str(t["token"]), float(t["logprob"])) for t in item.get("top_logprobs") or ())
            out.append(TokenLogprob(str(item["token"]), float(item["logprob"]), top))
    except (KeyError, TypeError, ValueError, AttributeError):
        return None
    return tuple(out)


def _no_key_message(name: str, model: str, url: str | None, env_var: str | None) -> str:
    """Why a public server gets no key (none set, or the one set belongs elsewhere), and what to do."""
    if env_var and key_belongs(url or "") and not os.environ.get(env_var):
        found = f"set {env_var} (export {env_var}=...) or name another variable"
    else:
        found = (f"{env_var} is sent only to {OPENAI_URL.removesuffix('/v1')} and to the origin of "
                 f"${BASE_URL_ENV}; name this server's key" if env_var else "name its key")
    return (f"the {name} judge needs an API key for {url}: {found} with api_key_env=NAME "
            "(ragmeter.yaml `api_key_env: NAME`, or --judge-key-env NAME) or pass api_key=...; "
            f"a local server such as '{name}:{model}@http://127.0.0.1:8080/v1' needs none")


def _openai(model: str, **options: Any) -> OpenAIBackend:
    return OpenAIBackend(model, **options)


register_backend(
    BackendInfo(
        name="openai",
        factory=_openai,
        summary="any OpenAI-compatible server (OpenAI, vLLM, llama.cpp, LM Studio, Ollama /v1)",
        key_env_var="OPENAI_API_KEY",
        extra="judges",
        example="openai:gpt-4o-mini or openai:qwen2.5@http://127.0.0.1:8080/v1",
    )
)

__all__ = ["JudgeError", "OpenAIBackend", "is_local_url"]
