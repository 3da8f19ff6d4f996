"""Translating backend SDK exceptions into the :class:`~ragmeter.errors.JudgeError` tree, in one place.

:func:`map_openai_error` covers the ``openai`` SDK and everything built on its exception classes
(LiteLLM's exceptions subclass them). :data:`OPENAI_ERROR_MAP` is the table, most specific class
first; a test checks that every exception class the SDK exports has an entry.
:func:`map_transport_error` and :func:`map_ollama_status` cover a backend that speaks HTTP itself
(aiohttp): a failed call, and an HTTP error answer of Ollama's native API. A rejection that says the
prompt does not fit the model's context window becomes a :class:`~ragmeter.errors.JudgeContextOverflow`
(:func:`context_overflow` reads the window and the prompt's tokens where the server gives them). Messages are
passed through :func:`redact` so an API key never reaches an error, a log line or a result.
"""

from __future__ import annotations

import email.utils
import json
import re
import time
from collections.abc import Iterable, Mapping
from typing import Any

from ...errors import (
    JudgeAuthError,
    JudgeBadRequest,
    JudgeConnectionError,
    JudgeContextOverflow,
    JudgeError,
    JudgeParseError,
    JudgeRateLimited,
    JudgeServerError,
    JudgeTimeout,
)
from ...masking import redact

_DURATION = re.compile(r"(?:(\d+(?:\.\d+)?)h)?(?:(\d+(?:\.\d+)?)m(?!s))?(?:(\d+(?:\.\d+)?)s)?(?:(\d+(?:\.\d+)?)ms)?$")


def _duration_seconds(value: str) -> float | None:
    """Seconds in ``"1.5"``, ``"20ms"``, ``"6m0s"``, ``"1h2m3s"``, an epoch time or an HTTP date."""
    v = value.strip()
    if not v:
        return None
    try:
        num = float(v)
    except ValueError:
        m = _DURATION.match(v)
        if m and any(m.groups()):
            h, mi, s, ms = (float(g) if g else 0.0 for g in m.groups())
            return h * 3600 + mi * 60 + s + ms / 1000
        try:
            when = email.utils.parsedate_to_datetime(v)
        except (TypeError, ValueError):
            return None
        return max(0.0, when.timestamp() - time.time())
    if num > 1_000_000_000:  # an epoch timestamp
        return max(0.0, num - time.time())
    return max(0.0, num)


def retry_after(headers: Mapping[str, str] | None) -> float | None:
    """Seconds to wait according to ``retry-after-ms``, ``retry-after`` or ``x-ratelimit-reset*``.

    The explicit ``retry-after(-ms)`` wins; otherwise the longest ``x-ratelimit-reset-*`` value.
    None when the response carries no such header.
    """
    if not headers:
        return None
    h = {k.lower(): v for k, v in headers.items()}
    if "retry-after-ms" in h:
        try:
            return max(0.0, float(h["retry-after-ms"]) / 1000)
        except ValueError:
            pass
    if "retry-after" in h:
        got = _duration_seconds(h["retry-after"])
        if got is not None:
            return got
    resets = [
        _duration_seconds(v)
        for k, v in h.items()
        if k in ("x-ratelimit-reset", "x-ratelimit-reset-requests", "x-ratelimit-reset-tokens")
    ]
    found = [r for r in resets if r is not None]
    return max(found) if found else None


#: the error types servers give a prompt too long for the model: llama.cpp's server, OpenAI (and vLLM)
_OVERFLOW_TYPE = re.compile(r"exceed_context_size_error|context_length_exceeded")
#: a message about the context window, and one that says it was exceeded (both must match)
_OVERFLOW_WHAT = re.compile(r"context (?:size|length|window)", re.I)
_OVERFLOW_HOW = re.compile(r"exceed|maximum|too (?:long|large)|reduce|greater than|longer than", re.I)
#: where the window's size is said, most specific first
_N_CTX = (re.compile(r'"n_ctx":\s*(\d+)'), re.compile(r"maximum context length is (\d+)", re.I),
          re.compile(r"context window of (\d+)", re.I), re.compile(r"context size \((\d+) tokens\)", re.I),
          re.compile(r"context length (?:is |of )?(\d+)", re.I))
#: where the prompt's tokens are said, most specific first (vLLM's "5000 tokens (4000 in the messages,
#: 1000 in the completion)": the messages')
_PROMPT_TOKENS = (re.compile(r'"n_prompt_tokens":\s*(\d+)'), re.compile(r"\((\d+) in the messages"),
                  re.compile(r"request \((\d+) tokens\)", re.I), re.compile(r"resulted in (\d+) tokens", re.I),
                  re.compile(r"has (\d+) input tokens", re.I), re.compile(r"Requested tokens \((\d+)\)", re.I))


def _first_number(patterns: Iterable[re.Pattern[str]], text: str) -> int | None:
    for pattern in patterns:
        m = pattern.search(text)
        if m:
            return int(m.group(1))
    return None


def context_overflow(text: str) -> tuple[int | None, int | None] | None:
    """``(n_ctx, prompt_tokens)`` when ``text`` (an error's message, with its JSON body where there is
    one) says that the prompt does not fit the model's context window, each None where it does not
    say the number; None when it says something else."""
    if not (_OVERFLOW_TYPE.search(text) or (_OVERFLOW_WHAT.search(text) and _OVERFLOW_HOW.search(text))):
        return None
    return _first_number(_N_CTX, text), _first_number(_PROMPT_TOKENS, text)


def overflow_error(message: str, found: tuple[int | None, int | None], *, status_code: int | None = None,
                   secrets: Iterable[str | None] = ()) -> JudgeContextOverflow:
    """The :class:`JudgeContextOverflow` for ``message`` (a backend's words) and what
    :func:`context_overflow` read from it, with what to do next."""
    return JudgeContextOverflow(redact(message + _OVERFLOW_HINT, secrets), n_ctx=found[0], prompt_tokens=found[1],
                                status_code=status_code)


_OVERFLOW_HINT = (". The prompt is longer than the judge's context window: start the server with a larger one "
                  "(llama.cpp -c, vLLM --max-model-len, Ollama num_ctx) or send fewer or shorter contexts.")


def _openai_map() -> list[tuple[type[BaseException], type[JudgeError]]]:
    import openai

    pairs: list[tuple[str, type[JudgeError]]] = [
        ("APITimeoutError", JudgeTimeout),
        ("APIConnectionError", JudgeConnectionError),
        ("RateLimitError", JudgeRateLimited),
        ("AuthenticationError", JudgeAuthError),  # includes OAuthError
        ("PermissionDeniedError", JudgeAuthError),
        ("BadRequestError", JudgeBadRequest),
        ("NotFoundError", JudgeBadRequest),
        ("ConflictError", JudgeBadRequest),
        ("UnprocessableEntityError", JudgeBadRequest),
        ("InternalServerError", JudgeServerError),
        ("APIResponseValidationError", JudgeServerError),
        ("APIStatusError", JudgeBadRequest),  # other statuses; refined by status code below
        ("LengthFinishReasonError", JudgeParseError),
        ("ContentFilterFinishReasonError", JudgeBadRequest),
        ("SubjectTokenProviderError", JudgeAuthError),
        ("WebSocketConnectionClosedError", JudgeConnectionError),
        ("WebSocketQueueFullError", JudgeConnectionError),
        ("APIError", JudgeServerError),
        ("OpenAIError", JudgeError),
    ]
    out: list[tuple[type[BaseException], type[JudgeError]]] = []
    for name, target in pairs:
        cls = getattr(openai, name, None)
        if cls is None:
            cls = getattr(getattr(openai, "_exceptions", None), name, None)
        if isinstance(cls, type):
            out.append((cls, target))
    return out


_MAP_CACHE: list[tuple[type[BaseException], type[JudgeError]]] | None = None


def openai_error_map() -> list[tuple[type[BaseException], type[JudgeError]]]:
    """``[(openai exception class, JudgeError class)]``, most specific first."""
    global _MAP_CACHE
    if _MAP_CACHE is None:
        _MAP_CACHE = _openai_map()
    return _MAP_CACHE


def map_openai_error(exc: BaseException, *, backend: str, secrets: Iterable[str | None] = ()) -> JudgeError:
    """The :class:`JudgeError` for an ``openai`` SDK exception (``raise map_openai_error(e) from e``)."""
    target: type[JudgeError] = JudgeError
    for cls, judge_cls in openai_error_map():
        if isinstance(exc, cls):
            target = judge_cls
            break
    cause = _connection_cause(exc) if target in (JudgeTimeout, JudgeConnectionError) else None
    if cause is not None:  # the SDK's aiohttp transport reports a refused connection as a timeout
        target = JudgeConnectionError
    status: int | None = getattr(exc, "status_code", None)
    if not isinstance(status, int):
        status = None
    response: Any = getattr(exc, "response", None)
    headers = getattr(response, "headers", None)
    wait = retry_after(headers) if headers is not None else None
    if status is not None and target in (JudgeBadRequest, JudgeServerError):
        if status == 429:
            target = JudgeRateLimited
        elif status == 408:
            target = JudgeTimeout
        elif status >= 500:
            target = JudgeServerError
        elif status in (401, 403):
            target = JudgeAuthError
    message = getattr(exc, "message", None) or str(exc) or type(exc).__name__
    where = f" (HTTP {status})" if status is not None else ""
    hint = _HINTS.get(target, "")
    what = f"{type(exc).__name__}{where}: {message}"
    if cause is not None:
        what = f"{_connection_words(cause)} ({type(cause).__name__}: {' '.join(str(cause).split())})"
    if target is JudgeBadRequest:
        body = getattr(exc, "body", None)
        found = context_overflow(f"{message} {json.dumps(body, default=str) if body is not None else ''}")
        if found is not None:
            return overflow_error(f"{backend} judge: {what}", found, status_code=status, secrets=secrets)
    text = redact(f"{backend} judge: {what}{hint}", secrets)
    if target is JudgeParseError:
        return JudgeParseError(text, raw="", validation="the reply was cut at the token limit")
    return target(text, retry_after=wait, status_code=status)


def _connection_cause(exc: BaseException) -> BaseException | None:
    """The connection failure behind an SDK exception (``ConnectionRefusedError``, aiohttp's
    ``ServerDisconnectedError``...), or None when there is none, or a real timeout comes first:
    the SDK's aiohttp transport reports a refused or dropped connection as a connect timeout."""
    seen = 0
    cause = exc.__cause__ or exc.__context__
    found: BaseException | None = None
    while cause is not None and seen < 10:
        if isinstance(cause, TimeoutError) and found is None:
            return None
        names = {c.__name__ for c in type(cause).__mro__}
        if isinstance(cause, ConnectionError) or "ClientConnectionError" in names:
            found = cause  # the innermost one names the cause best (ConnectionRefusedError)
        cause = cause.__cause__ or cause.__context__
        seen += 1
    return found


def _connection_words(cause: BaseException) -> str:
    """``connection refused``, ``connection reset`` or ``connection failed``, after ``cause``."""
    names = {c.__name__ for c in type(cause).__mro__}
    if isinstance(cause, ConnectionRefusedError):
        return "connection refused"
    if isinstance(cause, ConnectionResetError | ConnectionAbortedError | BrokenPipeError) or (
            "ServerDisconnectedError" in names):
        return "connection reset (the server closed it without answering)"
    return "connection failed"


_HINTS: dict[type[JudgeError], str] = {
    JudgeAuthError: ". Check the API key (e.g. OPENAI_API_KEY) and that it may use this model.",
    JudgeBadRequest: ". Check the model name and the judge options.",
    JudgeConnectionError: ". Check that the server is running and the base URL is right.",
    JudgeTimeout: ". Raise the judge timeout or lower its concurrency.",
    JudgeRateLimited: ". Lower rpm/tpm/concurrency or wait for the quota to reset.",
}


def map_transport_error(exc: BaseException, *, backend: str, timeout: float | None = None,
                        secrets: Iterable[str | None] = ()) -> JudgeError:
    """The :class:`JudgeError` for a failure of an HTTP call made without an SDK (aiohttp).

    A timeout (``TimeoutError``, which aiohttp's timeouts subclass) is a :class:`JudgeTimeout`; a
    refused, reset or failed connection (``OSError``, aiohttp's ``ClientConnectionError``) a
    :class:`JudgeConnectionError` saying which; a body cut short (``ClientPayloadError``) a
    :class:`JudgeServerError`; a malformed URL (``InvalidURL``) a :class:`JudgeBadRequest`.
    """
    names = {c.__name__ for c in type(exc).__mro__}
    detail = " ".join(str(exc).split())
    if isinstance(exc, TimeoutError):
        within = f" within {timeout:g} s" if timeout is not None else ""
        return JudgeTimeout(redact(f"{backend} judge: no reply{within}{_HINTS[JudgeTimeout]}", secrets))
    if "InvalidURL" in names:
        return JudgeBadRequest(redact(f"{backend} judge: invalid URL {detail}", secrets))
    if "ClientPayloadError" in names:
        return JudgeServerError(redact(f"{backend} judge: the reply was cut short ({detail})", secrets))
    if isinstance(exc, OSError) or "ClientConnectionError" in names:
        cause = _connection_cause(exc) or exc
        what = f"{_connection_words(cause)} ({type(cause).__name__}: {' '.join(str(cause).split())})"
        return JudgeConnectionError(redact(f"{backend} judge: {what}{_HINTS[JudgeConnectionError]}", secrets))
    return JudgeError(redact(f"{backend} judge: {type(exc).__name__}: {detail}", secrets))


def map_ollama_status(status: int, detail: str, headers: Mapping[str, str] | None, *, backend: str,
                      model: str, url: str | None, secrets: Iterable[str | None] = ()) -> JudgeError:
    """The :class:`JudgeError` for an HTTP error answer of Ollama's native API.

    ``detail`` is the server's ``error`` text. HTTP 429 is a :class:`JudgeRateLimited` carrying
    the ``Retry-After`` wait, 408 a :class:`JudgeTimeout`, 401/403 a :class:`JudgeAuthError`,
    5xx a :class:`JudgeServerError`; a 404 about the model says to ``ollama pull`` it, another
    404 that ``url`` is not an Ollama server's root; any other status is a :class:`JudgeBadRequest`.
    """
    target: type[JudgeError] = JudgeBadRequest
    hint = _HINTS[JudgeBadRequest]
    if status == 429:
        target, hint = JudgeRateLimited, _HINTS[JudgeRateLimited]
    elif status == 408:
        target, hint = JudgeTimeout, _HINTS[JudgeTimeout]
    elif status in (401, 403):
        target, hint = JudgeAuthError, ". Check the key named with api_key_env and that it may use this model."
    elif status >= 500:
        target, hint = JudgeServerError, ""
    elif status == 404 and "model" in detail.lower():
        hint = f". Pull it first: ollama pull {model}"
    elif status == 404:
        hint = f". Check the base URL: {url} should be the Ollama server's root (no /v1 or /api)."
    found = context_overflow(detail) if target is JudgeBadRequest else None
    if found is not None:
        return overflow_error(f"{backend} judge: HTTP {status}: {detail}", found, status_code=status, secrets=secrets)
    text = redact(f"{backend} judge: HTTP {status}: {detail or 'no detail'}{hint}", secrets)
    return target(text, retry_after=retry_after(headers), status_code=status)
