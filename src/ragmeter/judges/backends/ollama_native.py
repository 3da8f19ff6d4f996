"""The ``ollama`` backend: Ollama's own chat API, ``POST /api/chat``.

``ollama:qwen2.5:1.5b`` talks to ``http://127.0.0.1:11434`` (or ``$OLLAMA_HOST``);
``ollama:qwen2.5:1.5b@http://host:11434`` names the server by its root (a trailing ``/v1``, the
root of Ollama's OpenAI-compatible API, names the same server). ``ollama-native:`` is the same
backend under another name, and takes the root only. The request is Ollama's native one: the
sampling settings in ``options`` (``temperature``, ``num_predict`` for the token limit, ``seed``),
the JSON schema in ``format`` (Ollama constrains decoding to it), ``logprobs: true, top_logprobs:
n`` when the request asks for log-probabilities, and ``truncate: false``. Ollama otherwise cuts a
prompt longer than the model's ``num_ctx`` to fit and answers 200, so the judge would read part of
the contexts and no one would know; with it the server rejects the prompt, the rejection is a
:class:`~ragmeter.errors.JudgeContextOverflow`, and faithfulness judges the claims one by one
against their evidence windows (``extra_body`` ``{"truncate": true}`` restores Ollama's cut; a
server older than the field ignores it). Ollama's OpenAI-compatible ``/v1`` has no such field,
and ignores ``num_ctx`` too: that is why ``ollama:`` does not go through it (``openai:MODEL@
http://127.0.0.1:11434/v1`` still does, cut and all). The reply's ``message.content``,
``done_reason``, ``prompt_eval_count``/``eval_count`` and ``logprobs`` become the
:class:`~ragmeter.judges.Completion`.

**Extra fields** (``extra_body``): a top-level ``/api/chat`` field (``keep_alive``, ``think``...)
is added to the body as given; any other key is a model option and goes into ``options``
(``{"num_ctx": 8192, "repeat_penalty": 1.0}``), as does an ``options`` dict. They win over the
request's own values, and are part of the cache key and of ``judge.stats()``.

No key is needed; ``api_key``/``api_key_env`` send one as a bearer token (a server behind an
authenticating proxy), and ``user:password@`` in the URL is HTTP basic auth. Local: cost 0.
HTTP goes through aiohttp, one session per backend and event loop, closed by ``aclose()``.
"""

from __future__ import annotations

import asyncio
import json
import os
from typing import Any

from ..._plugins import api_key_for
from ...errors import JudgeAuthError, JudgeBadRequest, JudgeServerError
from ...masking import mask_url, url_secrets
from ..base import ChatRequest, Completion, Usage
from ..registry import BackendInfo, register_backend
from ._errors import map_ollama_status, map_transport_error
from .openai_compat import _split_userinfo, parse_logprobs

DEFAULT_URL = "http://127.0.0.1:11434"
#: Top-level fields of an ``/api/chat`` request; any other ``extra_body`` key is a model option.
BODY_FIELDS = frozenset({"model", "messages", "tools", "format", "options", "stream", "keep_alive", "think",
                         "logprobs", "top_logprobs", "truncate", "shift"})


def default_url() -> str:
    """``$OLLAMA_HOST`` as a URL (``http://`` added when it has no scheme), else :data:`DEFAULT_URL`."""
    host = os.environ.get("OLLAMA_HOST")
    if not host:
        return DEFAULT_URL
    return host if "://" in host else f"http://{host}"


class OllamaNativeBackend:
    """A backend over Ollama's ``POST /api/chat`` (``ollama:`` and ``ollama-native:``).

    Parameters
    ----------
    model:
        The model name Ollama knows (``qwen2.5:1.5b``, ``llama3.1``...).
    base_url:
        The server's root URL; default ``$OLLAMA_HOST``, else ``http://127.0.0.1:11434``.
    api_key, api_key_env:
        A key, or the environment variable holding one, sent as ``Authorization: Bearer``.
        Neither given: no key is sent (Ollama needs none).
    extra_body:
        Extra request fields and model options of every request (see the module docs).
    free:
        Calls cost nothing (default True: a local model).
    name:
        The backend name shown and stored (default ``ollama-native``; ``ollama:`` builds it as ``ollama``).
    """

    name = "ollama-native"
    #: a request's ``repeat_penalty`` is a model option here (Ollama's default: 1.1, as llama.cpp's sampler)
    repeat_penalty_field = "yes"

    def __init__(self, model: str, *, base_url: str | None = None, api_key: str | None = None,
                 api_key_env: str | None = None, extra_body: dict[str, Any] | None = None,
                 free: bool = True, name: str | None = None) -> None:
        if name:
            self.name = name
        if not model:
            raise JudgeBadRequest(f"the {self.name} judge needs a model, e.g. '{self.name}:qwen2.5:1.5b'")
        self.model = model
        url = (base_url or default_url()).rstrip("/")
        #: the URL as shown and stored (stats, summary.json, cache key): credentials masked
        self.base_url: str | None = mask_url(url)
        self._secrets = url_secrets(url)
        plain, basic = _split_userinfo(url)
        self._endpoint = plain + "/api/chat"
        self._headers: dict[str, str] = {}
        if basic is not None:
            self._headers["Authorization"] = basic
            self._secrets.append(basic.partition(" ")[2])
        key = api_key_for(url, api_key=api_key, api_key_env=api_key_env, env_var=None)
        if key is None and api_key_env:
            raise JudgeAuthError(f"api_key_env: the environment variable {api_key_env} is not set "
                                 f"(export {api_key_env}=...)")
        if key is not None and basic is None:
            self._headers["Authorization"] = f"Bearer {key}"
            self._secrets.append(key)
        #: extra request fields and model options (module docs)
        self.extra_body: dict[str, Any] = dict(extra_body or {})
        self.free = free
        self._sessions: dict[int, tuple[asyncio.AbstractEventLoop, Any]] = {}

    def _session(self) -> Any:
        """The ``aiohttp.ClientSession`` of the running event loop (connections are loop-bound)."""
        loop = asyncio.get_running_loop()
        got = self._sessions.get(id(loop))
        if got is not None and got[0] is loop:
            return got[1]
        for k in [k for k, (lp, _) in self._sessions.items() if lp.is_closed()]:
            del self._sessions[k]
        import aiohttp

        session = aiohttp.ClientSession(headers=self._headers)
        self._sessions[id(loop)] = (loop, session)
        return session

    def body(self, request: ChatRequest) -> dict[str, Any]:
        """The ``/api/chat`` request body for ``request``."""
        options: dict[str, Any] = {"temperature": request.temperature, "num_predict": request.max_tokens}
        if request.seed is not None:
            options["seed"] = request.seed
        if request.repeat_penalty is not None:
            options["repeat_penalty"] = request.repeat_penalty
        # truncate: false: a prompt longer than num_ctx is rejected (HTTP 400), not cut to fit
        out: dict[str, Any] = {"model": self.model, "messages": request.message_dicts(), "stream": False,
                               "truncate": False}
        if request.json_schema is not None:
            out["format"] = request.json_schema
        if request.top_logprobs is not None:
            out["logprobs"] = True
            out["top_logprobs"] = request.top_logprobs
        for k, v in self.extra_body.items():
            if k == "options" and isinstance(v, dict):
                options.update(v)
            elif k in BODY_FIELDS:
                out[k] = v
            else:
                options[k] = v
        out["options"] = options
        return out

    async def complete(self, request: ChatRequest) -> Completion:
        """Send one ``/api/chat`` request (no retry)."""
        import aiohttp

        try:
            async with self._session().post(self._endpoint, json=self.body(request),
                                            timeout=aiohttp.ClientTimeout(total=request.timeout)) as resp:
                raw = await resp.read()
                status, headers = resp.status, dict(resp.headers)
        except (aiohttp.ClientError, OSError, TimeoutError) as exc:
            raise map_transport_error(exc, backend=self.name, timeout=request.timeout,
                                      secrets=self._secrets) from exc
        text = raw.decode("utf-8", errors="replace")
        try:
            reply: Any = json.loads(text)
        except ValueError:
            reply = None
        if status != 200:
            detail = reply.get("error") if isinstance(reply, dict) else None
            detail = str(detail) if detail else " ".join(text.split())[:500]
            raise map_ollama_status(status, detail, headers, backend=self.name, model=self.model,
                                    url=self.base_url, secrets=self._secrets)
        return completion_from_chat(reply, self.name)

    async def aclose(self) -> None:
        """Close the HTTP session of the running loop."""
        loop = asyncio.get_running_loop()
        got = self._sessions.pop(id(loop), None)
        if got is not None:
            await got[1].close()

    def __repr__(self) -> str:
        return f"OllamaNativeBackend(model={self.model!r}, base_url={self.base_url!r})"


def completion_from_chat(reply: Any, backend: str) -> Completion:
    """A :class:`Completion` from an ``/api/chat`` reply body (a dict); JudgeServerError when the
    body is not one or reports an ``error``."""
    if isinstance(reply, dict) and reply.get("error"):
        raise JudgeServerError(f"{backend} judge: {reply['error']}")
    try:
        text = reply["message"].get("content") or ""
        if not isinstance(text, str):
            raise TypeError("content is not text")
        usage = Usage(int(reply.get("prompt_eval_count") or 0), int(reply.get("eval_count") or 0))
    except (KeyError, TypeError, AttributeError, ValueError) as exc:
        raise JudgeServerError(
            f"{backend} judge: the server's reply is not an /api/chat answer ({type(exc).__name__}: {exc})"
        ) from None
    # Ollama's list has the entries of OpenAI's ``logprobs.content``
    return Completion(text, usage, reply.get("done_reason"), parse_logprobs({"content": reply.get("logprobs")}))


def _ollama(model: str, *, base_url: str | None = None, **options: Any) -> OllamaNativeBackend:
    """``ollama:``: this backend under the short name; a base URL ending in ``/v1`` (Ollama's
    OpenAI-compatible root, as an ``openai:`` spec names it) names the same server."""
    if base_url is not None:
        base_url = base_url.rstrip("/").removesuffix("/v1")
    return OllamaNativeBackend(model, base_url=base_url, name="ollama", **options)


register_backend(
    BackendInfo(
        name="ollama",
        factory=_ollama,
        summary="a local Ollama server through its native /api/chat (http://127.0.0.1:11434, or $OLLAMA_HOST), "
                "no key; a prompt past num_ctx is rejected, not cut",
        example="ollama:qwen2.5:1.5b or ollama:qwen2.5:1.5b@http://127.0.0.1:11434",
    )
)
register_backend(
    BackendInfo(
        name="ollama-native",
        factory=OllamaNativeBackend,
        summary="the ollama backend under another name (the server's root URL only)",
        example="ollama-native:qwen2.5:1.5b or ollama-native:qwen2.5:1.5b@http://127.0.0.1:11434",
    )
)
