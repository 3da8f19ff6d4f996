"""The :class:`Judge`: everything around the backend seam, written once for every backend.

A call goes: render the request -> cache lookup -> (budget / dry-run check) -> concurrency slot
and rate limiter -> backend ``complete`` with a per-call timeout -> retry with backoff on
429/5xx/timeouts/connection errors (honouring ``Retry-After``) -> parse and validate into the
declared pydantic model -> one repair request when that fails -> commit to the cache -> count
tokens and cost under the call's ``tag``.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import hashlib
import json
import logging
import math
import time
from collections.abc import AsyncIterator, Callable, Sequence
from dataclasses import dataclass, replace
from typing import Any, Generic, TypeVar

from pydantic import BaseModel

from ..backoff import retry_delay
from ..errors import (
    InvalidParameterError,
    JudgeAuthError,
    JudgeBadRequest,
    JudgeBudgetExceeded,
    JudgeConnectionError,
    JudgeDryRun,
    JudgeError,
    JudgeParseError,
    JudgeRateLimited,
    JudgeTimeout,
    JudgeUnreachable,
    MissingBackendError,
)
from ..masking import mask_secrets, mask_url
from .base import REPAIR_REPEAT_PENALTY, ChatRequest, Completion, JudgeBackend, Message, TokenLogprob, Usage
from .cache import CacheEntry, ResponseCache, canonical_json
from .concurrency import AdaptiveLimit, EndpointInfo, probe_endpoint, start_for
from .counters import Stats
from .parsing import length_repair_note, parse_reply, repair_message
from .pricing import Price, check_prices, cost_of, lookup_price

T = TypeVar("T")
M = TypeVar("M", bound=BaseModel)
logger = logging.getLogger("ragmeter.judges")

#: Consecutive connection / authentication failures, before any request ever succeeded, after
#: which the judge is declared unreachable and every further call raises JudgeUnreachable at once.
UNREACHABLE_AFTER = 3
#: The run-level budget, the default of ``Judge(unreachable_after=...)``: this many failed requests
#: in a row (:func:`_no_reply`: refused or reset connections, timeouts, HTTP 429, rejected keys,
#: wrong URLs), with no reply of another kind in between, declare the judge unreachable whether or
#: not it answered before. Requests in flight together count once (a failure counts when its
#: request was sent after the last counted one came back, and after the pause it started), so a
#: burst of concurrent timeouts or 429s is one signal. After each counted failure that is not a
#: timeout every request of the judge waits ``min(max_backoff, backoff * 2**(k-1))`` (k-th in a
#: row; the server's ``Retry-After`` instead when it sent one): 0.5, 1, 2, 4, 8 s by default, so a
#: dead server is declared after about 15 s and six waves of requests, and a restart shorter than
#: that is ridden out.
FAILED_IN_A_ROW = 6


def _cannot_reach(error: JudgeError) -> bool:
    """A failure that says the judge cannot be used at all: no connection, a rejected key (401/403)
    or a wrong URL (404)."""
    return isinstance(error, JudgeConnectionError | JudgeAuthError) or (
        isinstance(error, JudgeBadRequest) and error.status_code == 404)


def _no_reply(error: JudgeError) -> bool:
    """A failure the run-level budget counts: no usable answer came (see :data:`FAILED_IN_A_ROW`);
    any other error (HTTP 5xx, 400...) is a reply, and ends a streak."""
    return _cannot_reach(error) or isinstance(error, JudgeTimeout | JudgeRateLimited)

MessagesLike = str | Sequence[Message | dict[str, str]]


@dataclass(frozen=True)
class JudgeResult(Generic[T]):
    """The outcome of one judgement.

    Attributes
    ----------
    value:
        The validated pydantic object (or the text, for :meth:`Judge.complete`).
    raw:
        The reply text that ``value`` was parsed from.
    usage:
        Tokens of the request(s) behind this result (the stored usage on a cache hit).
    cached:
        True when no request was sent: every reply came from the cache.
    repaired:
        True when the first reply was unreadable and the repair request's reply was used.
    key:
        The cache key of the judgement (``sha256:...``, ``#i`` for extra samples).
    sample:
        0 for the first sample; 1..N-1 for the extra samples of ``repeat=N``.
    logprobs:
        The reply's token log-probabilities when the call asked for them (``top_logprobs``) and
        the backend returned them (also on a cache hit: they are stored with the reply); else None.
    """

    value: T
    raw: str
    usage: Usage
    cached: bool
    repaired: bool = False
    key: str = ""
    sample: int = 0
    logprobs: tuple[TokenLogprob, ...] | None = None


@dataclass
class _LoopState:
    loop: asyncio.AbstractEventLoop
    limit: AdaptiveLimit | None
    probing: asyncio.Lock
    rpm: Any
    tpm: Any
    pause_until: float = 0.0
    finalizer: Any = None


def _messages(messages: MessagesLike) -> tuple[Message, ...]:
    if isinstance(messages, str):
        return (Message("user", messages),)
    out = []
    for m in messages:
        if isinstance(m, Message):
            out.append(m)
        elif isinstance(m, dict) and m.get("role") in ("system", "user", "assistant"):
            out.append(Message(m["role"], str(m.get("content", ""))))  # type: ignore[arg-type]
        else:
            raise InvalidParameterError(f"expected Message or {{'role', 'content'}} dicts, got {m!r}")
    if not out:
        raise InvalidParameterError("expected at least one message, got none")
    return tuple(out)


def _with_note(messages: tuple[Message, ...], note: str) -> tuple[Message, ...]:
    """``messages`` with ``note`` appended to the last user message (after a blank line), or added
    as a user message when the conversation does not end with one."""
    last = messages[-1]
    if last.role == "user":
        return (*messages[:-1], Message("user", f"{last.content}\n\n{note}"))
    return (*messages, Message("user", note))


@functools.lru_cache(maxsize=256)
def _json_schema(schema: type[BaseModel]) -> dict[str, Any]:
    """The JSON schema sent with a request: :func:`request_schema`, computed once per model class."""
    return request_schema(schema)


def request_schema(schema: type[BaseModel]) -> dict[str, Any]:
    """``schema.model_json_schema()`` with every property of every object required, in declared
    order, no defaults, and no other property allowed.

    Servers that enforce the schema with a grammar (llama.cpp, vLLM, Ollama) let the model skip an
    optional property, and a small model skips every one it can: asked for ``{"statement",
    "evidence", "supported"}`` with only ``supported`` required, a 0.5B judge wrote
    ``{"supported": true}`` entries alternating true/false, whatever the claims said. Requiring
    every field makes the model write the item and its evidence before the verdict, in that
    order. ragmeter's reply models declare no default either, so validation is exactly as strict
    as the schema: a reply that lacks a field (``{"score": 5}`` to every prompt) fails, gets one
    repair request, then is a :class:`~ragmeter.errors.JudgeParseError`, never a default value.
    """
    out = schema.model_json_schema()

    def walk(node: Any) -> None:
        if isinstance(node, dict):
            props = node.get("properties")
            if isinstance(props, dict) and node.get("type") == "object":
                node["required"] = list(props)
                node["additionalProperties"] = False
                for prop in props.values():  # a required property has no default
                    if isinstance(prop, dict):
                        prop.pop("default", None)
            for v in node.values():
                walk(v)
        elif isinstance(node, list):
            for v in node:
                walk(v)

    walk(out)
    return out


_SCHEMA_JSON: dict[int, tuple[dict[str, Any], str]] = {}


def judge_cache_key(*, backend: str, model: str, base_url: str | None, messages: list[dict[str, str]],
                    temperature: float, max_tokens: int, schema: dict[str, Any] | None, seed: int | None,
                    template_version: str, top_logprobs: int | None = None,
                    extra_body: dict[str, Any] | None = None, repeat_penalty: float | None = None,
                    structured_output: str | None = None) -> str:
    """``cache_key`` of these fields, i.e. ``sha256:`` + SHA-256 of their canonical JSON.

    ``top_logprobs`` is part of the key only when set (a request asking for log-probabilities
    is a different request; keys of requests without it are unchanged); likewise ``extra_body``
    (the backend's extra request fields, e.g. ``repeat_penalty``) only when not empty, and a
    request's own ``repeat_penalty`` only when set (the request as asked: the same key whether or
    not this server is one it is passed on to); and a pinned structured-output mode (the backend's
    ``structured_output`` when not ``auto``) only when set, since the mode changes what is sent (a
    ``json_object`` request carries the schema as a system message, a ``json_schema`` one does not).

    The same bytes as ``canonical_json({...all fields...})``, built from pieces so the (large,
    constant) schema is serialised once per schema, not once per call.
    """
    if schema is None:
        schema_json = "null"
    else:
        got = _SCHEMA_JSON.get(id(schema))
        if got is None or got[0] is not schema:
            got = _SCHEMA_JSON[id(schema)] = (schema, canonical_json(schema))
        schema_json = got[1]
    head = canonical_json({"backend": backend, "base_url": base_url, "max_tokens": max_tokens,
                           "messages": messages, "model": model})
    tail_fields: dict[str, Any] = {"seed": seed, "temperature": temperature, "template_version": template_version}
    if top_logprobs is not None:
        tail_fields["top_logprobs"] = top_logprobs
    if extra_body:
        tail_fields["extra_body"] = extra_body
    if repeat_penalty is not None:
        tail_fields["repeat_penalty"] = repeat_penalty
    if structured_output is not None:
        tail_fields["structured_output"] = structured_output
    tail = canonical_json(tail_fields)
    text = f'{head[:-1]},"schema":{schema_json},{tail[1:]}'
    return "sha256:" + hashlib.sha256(text.encode("utf-8")).hexdigest()


def logprobs_to_json(logprobs: tuple[TokenLogprob, ...] | None) -> str | None:
    """Token log-probabilities as compact JSON for the cache (None stays None)."""
    if logprobs is None:
        return None
    return json.dumps([[t.token, t.logprob, [list(a) for a in t.top]] for t in logprobs], ensure_ascii=False)


def logprobs_from_json(text: str | None) -> tuple[TokenLogprob, ...] | None:
    """Inverse of :func:`logprobs_to_json`; None for None or an unreadable value."""
    if text is None:
        return None
    try:
        return tuple(TokenLogprob(str(t), float(lp), tuple((str(a), float(b)) for a, b in top))
                     for t, lp, top in json.loads(text))
    except (ValueError, TypeError):
        return None


def estimate_tokens(messages: Sequence[Message]) -> int:
    """A rough prompt token count (4 characters a token, plus 4 a message), for dry runs and ``tpm``."""
    return sum(math.ceil(len(m.content) / 4) + 4 for m in messages)


class Judge:
    """An LLM judge: a backend plus cache, concurrency and rate limits, retries, budget and stats.

    Build one with :func:`ragmeter.judges.from_spec` or ``Judge(backend, ...)``. Every option is
    keyword-only.

    Parameters
    ----------
    backend:
        Any :class:`~ragmeter.judges.base.JudgeBackend`.
    cache:
        True (default): the persistent cache in :func:`~ragmeter.judges.cache.default_cache_dir`;
        False: no cache; a path: that cache file or directory; or a
        :class:`~ragmeter.judges.cache.ResponseCache`.
    concurrency:
        Most requests in flight at once (default 16).
    adaptive:
        True (default): the number in flight starts from what the endpoint can take and
        follows its measured latency, timeouts and 429s, up to ``concurrency`` (see
        :mod:`ragmeter.judges.concurrency`); a timeout then counts only the server's time, not
        the time spent queued inside the server behind this judge's own earlier requests.
        A request that timed out is retried with twice the timeout (up to 8x), as TCP backs
        off its retransmission timeout, and a first attempt gets 3x the slowest recent reply
        when that is longer, on a local server also 3x its time per token times the request's
        size (at most 8x; :meth:`.concurrency.AdaptiveLimit.learned_timeout`). False: always
        ``concurrency`` and ``timeout``.
    rpm, tpm:
        Requests and tokens per minute (None: unlimited). Tokens are estimated before sending
        (prompt estimate + ``max_tokens``).
    timeout:
        Seconds one request may take before it counts as a :class:`~ragmeter.errors.JudgeTimeout`.
    max_retries:
        Retries of one request after 429, 5xx, timeouts and connection errors (default 5).
    backoff, max_backoff:
        Exponential backoff with full jitter: before retry *n* wait uniform(0, min(max_backoff,
        backoff * 2**n)) seconds, unless the server said how long (``Retry-After``,
        ``x-ratelimit-reset-*``), which is honoured up to ``max_retry_wait``.
    max_retry_wait:
        Longest server-requested wait honoured (default 120 s); longer waits are cut to it.
    max_cost:
        Budget in USD. Once spent, new requests raise :class:`~ragmeter.errors.JudgeBudgetExceeded`
        (requests in flight finish). Needs a known price for the model.
    prices:
        ``{model: (input, output)}`` USD per 1M tokens, over the built-in table.
    dry_run:
        Send nothing: count the calls that would be sent and their estimated prompt tokens
        (cache hits are still served); each such call raises :class:`~ragmeter.errors.JudgeDryRun`.
    repeat:
        Samples per judgement for :meth:`judge_n` (default 1). Extra samples bypass the first
        sample's cached reply and are cached under their own key, so a resumed run reuses them.
    temperature, max_tokens, seed:
        Request defaults; each call may override them.
    repair:
        Send one repair request when a reply does not parse (default True).
    unreachable_after:
        The run-level budget (None: :data:`FAILED_IN_A_ROW`, 6, read when the judge is built):
        after this many failed requests
        in a row (refused or reset connections, timeouts, HTTP 429 after its ``Retry-After`` was
        honoured, rejected keys, 404s) with no reply of another kind in between, requests in flight
        together counted once, the judge is declared unreachable, whether or not it answered
        before (after each counted failure but a timeout, all its requests wait 0.5, 1, 2, 4...
        s): every later call raises :class:`~ragmeter.errors.JudgeUnreachable` at once and a
        run stops (``ragmeter eval`` exits 3). A judge never reached stops sooner, after
        :data:`UNREACHABLE_AFTER` connection / key failures.
    """

    def __init__(
        self,
        backend: JudgeBackend,
        *,
        cache: bool | str | Any = True,
        concurrency: int = 16,
        adaptive: bool = True,
        rpm: float | None = None,
        tpm: float | None = None,
        timeout: float = 60.0,
        max_retries: int = 5,
        backoff: float = 0.5,
        max_backoff: float = 30.0,
        max_retry_wait: float = 120.0,
        max_cost: float | None = None,
        prices: dict[str, Price] | None = None,
        dry_run: bool = False,
        repeat: int = 1,
        temperature: float = 0.0,
        max_tokens: int = 1024,
        seed: int | None = None,
        repair: bool = True,
        unreachable_after: int | None = None,
    ) -> None:
        unreachable_after = FAILED_IN_A_ROW if unreachable_after is None else unreachable_after
        for name, value, low in (("concurrency", concurrency, 1), ("repeat", repeat, 1),
                                 ("unreachable_after", unreachable_after, 1),
                                 ("max_retries", max_retries, 0), ("max_tokens", max_tokens, 1)):
            if isinstance(value, bool) or not isinstance(value, int) or value < low:
                raise InvalidParameterError(f"{name}: expected an integer >= {low}, got {value!r}")
        for name, fvalue in (("timeout", timeout), ("rpm", rpm), ("tpm", tpm), ("max_cost", max_cost)):
            if fvalue is not None and not (isinstance(fvalue, int | float) and fvalue > 0):
                raise InvalidParameterError(f"{name}: expected a positive number, got {fvalue!r}")
        self.backend = backend
        self.concurrency = concurrency
        self.adaptive = bool(adaptive)
        self.rpm, self.tpm = rpm, tpm
        self.timeout = float(timeout)
        self.max_retries = max_retries
        self.backoff, self.max_backoff, self.max_retry_wait = backoff, max_backoff, max_retry_wait
        self.max_cost = max_cost
        self.prices = check_prices(prices)
        self.dry_run = dry_run
        self.repeat = repeat
        self.temperature, self.max_tokens, self.seed = temperature, max_tokens, seed
        self.repair = repair
        self.price: Price | None = (0.0, 0.0) if backend.free else lookup_price(backend.model, self.prices)
        if max_cost is not None and self.price is None:
            raise InvalidParameterError(
                f"max_cost needs the price of {backend.model!r}, which is not in the built-in table: "
                f"pass prices={{'{backend.model}': (input_usd_per_1m, output_usd_per_1m)}}"
            )
        if cache is True:
            self.cache: ResponseCache | None = ResponseCache()
        elif cache is False or cache is None:
            self.cache = None
        elif isinstance(cache, ResponseCache):
            self.cache = cache
        else:
            self.cache = ResponseCache(cache)
        self._stats = Stats()
        self._plan: dict[str, Any] = {}
        self._state: _LoopState | None = None
        self._learned: AdaptiveLimit | None = None
        #: what the endpoint is, once probed (:meth:`_endpoint_info`)
        self._endpoint: EndpointInfo | None = None
        self._spent = 0.0
        self._reached = False  # a request ever succeeded
        self._cannot_reach = 0  # consecutive connection/auth failures (no reply of any kind in between)
        self.unreachable_after = unreachable_after
        self._failed = 0  # consecutive failed requests without a reply, those in flight together once
        self._failed_at = -math.inf  # when the last counted one came back
        #: set once the judge is declared unreachable (see :data:`UNREACHABLE_AFTER`)
        self.unreachable: JudgeUnreachable | None = None

    # -- public API ---------------------------------------------------------------------------

    async def judge(
        self,
        messages: MessagesLike,
        schema: type[M],
        *,
        tag: str = "",
        template_version: str = "",
        temperature: float | None = None,
        max_tokens: int | None = None,
        seed: int | None = None,
        sample: int = 0,
        top_logprobs: int | None = None,
        repeat_penalty: float | None = None,
    ) -> JudgeResult[M]:
        """Ask the judge and return its reply validated as ``schema``.

        ``tag`` names the metric for accounting; ``template_version`` (e.g.
        ``PromptTemplate.cache_version``) goes into the cache key. Raises a
        :class:`~ragmeter.errors.JudgeError` subclass, e.g. :class:`~ragmeter.errors.JudgeParseError`
        with ``.raw`` when the reply is unreadable even after one repair. ``top_logprobs=n`` asks
        for token log-probabilities (see :attr:`JudgeResult.logprobs`); ``repeat_penalty``
        (:data:`~ragmeter.judges.base.NO_REPEAT_PENALTY`) asks for no repetition penalty where the
        server would apply one (:attr:`~ragmeter.judges.base.ChatRequest.repeat_penalty`).
        """
        request = self._request(messages, schema, temperature, max_tokens, seed, top_logprobs, repeat_penalty)
        key = self._key(request, template_version, sample)
        self._stats.bump(tag, "calls")
        try:
            return await self._judge(request, key, schema, tag, template_version, sample)
        except JudgeError as exc:
            self._stats.error(tag, type(exc).__name__, final=True)
            raise
        finally:
            self._stats.bump(tag, "finished")

    async def judge_n(self, messages: MessagesLike, schema: type[M], *, n: int | None = None,
                      **kwargs: Any) -> list[JudgeResult[M]]:
        """``n`` (default ``repeat``) samples of one judgement, concurrently; sample 0 is :meth:`judge`.

        Raises the first sample's error after all samples finished (each success is cached).
        """
        count = self.repeat if n is None else n
        outs = await asyncio.gather(
            *(self.judge(messages, schema, sample=i, **kwargs) for i in range(count)), return_exceptions=True
        )
        for o in outs:
            if isinstance(o, BaseException):
                raise o
        return list(outs)  # type: ignore[arg-type]

    async def complete(self, messages: MessagesLike, *, tag: str = "", template_version: str = "",
                       temperature: float | None = None, max_tokens: int | None = None,
                       seed: int | None = None, sample: int = 0,
                       top_logprobs: int | None = None,
                       accept: Callable[[str, Sequence[TokenLogprob] | None], bool] | None = None,
                       ) -> JudgeResult[str]:
        """Free-text reply (no schema, no parsing), with the same cache, retries and accounting;
        ``top_logprobs=n`` asks for token log-probabilities (:attr:`JudgeResult.logprobs`).
        ``accept(text, logprobs)``, when given, decides whether a fresh reply is stored in the cache
        (a reply the caller cannot read is returned but never stored, as for :meth:`judge`)."""
        request = self._request(messages, None, temperature, max_tokens, seed, top_logprobs)
        key = self._key(request, template_version, sample)
        self._stats.bump(tag, "calls")
        try:
            completion, hit = await self._fetch(request, key, tag)
            if not hit and (accept is None or accept(completion.text, completion.logprobs)):
                await self._store([(key, completion)], tag)
            return JudgeResult(completion.text, completion.text, completion.usage, hit, key=key, sample=sample,
                               logprobs=completion.logprobs)
        except JudgeError as exc:
            self._stats.error(tag, type(exc).__name__, final=True)
            raise
        finally:
            self._stats.bump(tag, "finished")

    def recovered(self, tag: str, kind: str, n: int = 1) -> None:
        """Say that ``n`` failed calls of ``tag``, errors of type ``kind``, were recovered from: the
        metric sent other requests and the sample has its score (e.g. a verdict list rejected as
        longer than the context window, its claims then judged one by one). They stay
        in ``errors`` and are counted in ``recovered`` as well (:func:`.counters.unrecovered`)."""
        self._stats.recover(tag, kind, n)

    def expect(self, plan: dict[str, Any]) -> None:
        """Take the run's plan of judge calls (``planned``, ``planned_rows``, ``planned_exact``;
        :class:`~ragmeter.engines.driver.CallPlan`), shown by :meth:`stats` until the next plan."""
        self._plan = dict(plan)

    def stats(self) -> dict[str, Any]:
        """Counters so far: ``calls`` (judgements asked), ``finished`` (those that have ended: answered,
        failed or cancelled; ``calls - finished`` are waiting or in flight), ``cache_hits``/``cache_misses`` (lookups),
        ``requests`` (sent to the backend, retries and repairs included), ``retries``, ``repairs``,
        ``format_fallbacks`` (structured-output downgrades, extra HTTP requests) and
        ``format_fallback_paths`` (``{"json_schema->json_object": n}``), ``extra_body`` (extra
        request fields sent, e.g. ``{"repeat_penalty": 1.0}``), ``endpoint`` (what the server was
        probed to be, once it was: ``llama.cpp``, ``llama-cpp-python``, ``vllm``, ``local``...), ``errors``
        (final failures by type), ``attempt_errors`` (every failed request by type), ``recovered``
        (the final failures by type that a metric recovered from, :meth:`recovered`),
        ``prompt_tokens``/``completion_tokens`` (spent, cache hits excluded), ``cached_prompt_tokens``
        (the part of ``prompt_tokens`` the server reported taken from its own prompt cache), ``cost`` (USD, None
        when the price is unknown), dry-run counts, the same per tag in ``by_tag``, and the run's
        plan (:meth:`expect`) when it has one."""
        out: dict[str, Any] = {**self.describe(), **self._stats.total.as_dict(), **self._plan}
        out["format_fallbacks"] = int(getattr(self.backend, "format_fallbacks", 0))
        out["format_fallback_paths"] = dict(getattr(self.backend, "format_fallback_paths", None) or {})
        out["extra_body"] = dict(getattr(self.backend, "extra_body", None) or {})
        if self._endpoint is not None:
            out["endpoint"] = self._endpoint.kind
        if self.dry_run:
            est = cost_of(Usage(self._stats.total.estimated_prompt_tokens, 0), self.price)
            out["estimated_prompt_cost"] = None if est is None else round(est, 8)
        out["by_tag"] = {tag: t.as_dict() for tag, t in sorted(self._stats.by_tag.items())}
        return out

    def describe(self) -> dict[str, Any]:
        """Backend, model and base URL (never the key; credentials in the URL masked)."""
        return {"backend": self.backend.name, "model": self.backend.model,
                "base_url": mask_url(self.backend.base_url)}

    async def aclose(self) -> None:
        """Close the backend's connections for the running loop (the cache stays usable)."""
        await self.backend.aclose()

    async def __aenter__(self) -> Judge:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()

    def close(self) -> None:
        """Close the cache."""
        if self.cache is not None:
            self.cache.close()

    def __repr__(self) -> str:
        return f"Judge({self.backend.name}:{self.backend.model}, cache={self.cache!r})"

    # -- internals ----------------------------------------------------------------------------

    def _request(self, messages: MessagesLike, schema: type[BaseModel] | None, temperature: float | None,
                 max_tokens: int | None, seed: int | None, top_logprobs: int | None = None,
                 repeat_penalty: float | None = None) -> ChatRequest:
        return ChatRequest(
            messages=_messages(messages),
            temperature=self.temperature if temperature is None else temperature,
            max_tokens=self.max_tokens if max_tokens is None else max_tokens,
            json_schema=None if schema is None else _json_schema(schema),
            schema_name=(schema.__name__ if schema is not None else "judgement")[:64],
            seed=self.seed if seed is None else seed,
            timeout=self.timeout,
            top_logprobs=top_logprobs,
            repeat_penalty=repeat_penalty,
        )

    def _key(self, request: ChatRequest, template_version: str, sample: int) -> str:
        """``cache_key`` of everything that decides the reply (see :mod:`.cache`), ``#i`` for sample i."""
        key = judge_cache_key(
            backend=self.backend.name,
            model=self.backend.model,
            base_url=mask_url(self.backend.base_url),
            messages=request.message_dicts(),
            temperature=request.temperature,
            max_tokens=request.max_tokens,
            schema=request.json_schema,
            seed=request.seed,
            template_version=template_version,
            top_logprobs=request.top_logprobs,
            extra_body=getattr(self.backend, "extra_body", None),
            repeat_penalty=request.repeat_penalty,
            structured_output=(getattr(self.backend, "mode", None) if getattr(self.backend, "fixed_mode", False)
                               else None),
        )
        return f"{key}#{sample}" if sample else key

    async def _judge(self, request: ChatRequest, key: str, schema: type[M], tag: str,
                     template_version: str, sample: int) -> JudgeResult[M]:
        first, hit = await self._fetch(request, key, tag)
        try:
            value = parse_reply(first.text, schema)
        except JudgeParseError as exc:
            if not self.repair:
                raise
            error = exc
        else:
            if not hit:
                await self._store([(key, first)], tag)
            return JudgeResult(value, first.text, first.usage, hit, key=key, sample=sample, logprobs=first.logprobs)
        # one repair: show the judge its reply and what was wrong with it; a reply cut at the token
        # limit is asked again without it (the note on the last user message, so templates that
        # insist on alternating roles still render), as a looping reply shown back loops again, and
        # with a repetition penalty (REPAIR_REPEAT_PENALTY) whatever the request asked (it looped
        # without: the 1.5B bench judge repeated claims to the limit in the repair too, 2 of 20
        # rows; llama.cpp's own server applies none unasked)
        if first.finish_reason == "length":
            fix = replace(request, messages=_with_note(request.messages, length_repair_note(request.max_tokens)),
                          repeat_penalty=REPAIR_REPEAT_PENALTY)
        else:
            fix = replace(request, messages=(*request.messages, Message("assistant", first.text),
                                             Message("user", repair_message(error, schema))))
        fix_key = self._key(fix, template_version, sample)
        self._stats.bump(tag, "repairs")
        second, hit2 = await self._fetch(fix, fix_key, tag, repair=True)
        try:
            value = parse_reply(second.text, schema)
        except JudgeParseError as exc2:
            raise JudgeParseError(
                f"{exc2} (after one repair attempt; first reply: {error.validation})",
                raw=second.text, validation=exc2.validation,
            ) from None
        # only a reply that validated is stored, under the original request's key: the next run
        # reads it back in one lookup; the reply that failed validation is never written
        await self._store([(key, second)], tag)
        return JudgeResult(value, second.text, first.usage + second.usage, hit and hit2, True, key, sample,
                           second.logprobs)

    async def _fetch(self, request: ChatRequest, key: str, tag: str, repair: bool = False) -> tuple[Completion, bool]:
        if self.cache is not None:
            entry = self.cache.get(key)
            if entry is not None:
                self._stats.bump(tag, "cache_hits")
                return Completion(entry.response, Usage(entry.prompt_tokens, entry.completion_tokens),
                                  entry.finish_reason, logprobs_from_json(entry.logprobs)), True
            self._stats.bump(tag, "cache_misses")
        return await self._send(request, tag, check_budget=not repair), False

    async def _store(self, items: list[tuple[str, Completion]], tag: str) -> None:
        if self.cache is None or not items:
            return
        entries = [
            CacheEntry(k, c.text, c.usage.prompt_tokens, c.usage.completion_tokens, c.finish_reason,
                       self.backend.name, self.backend.model, tag, logprobs_to_json(c.logprobs))
            for k, c in items
        ]
        await self.cache.aput_many(entries)

    def _loop_state(self) -> _LoopState:
        loop = asyncio.get_running_loop()
        if self._state is None or self._state.loop is not loop:

            def limiter(per_minute: float | None) -> Any:
                # a leaky bucket holding 10 s worth (not a whole minute's burst), never below one unit
                if not per_minute:
                    return None
                try:
                    from aiolimiter import AsyncLimiter
                except ImportError as exc:  # pragma: no cover - a core dependency
                    raise MissingBackendError("rpm/tpm limits need aiolimiter: pip install aiolimiter") from exc
                if per_minute / 6 >= 1:
                    return AsyncLimiter(per_minute / 6, 10)
                return AsyncLimiter(1, 60 / per_minute)

            # a pause (Retry-After, a failing judge) is the judge's, not the loop's: a new loop keeps it
            pause = self._state.pause_until if self._state is not None else 0.0
            self._state = _LoopState(loop, None, asyncio.Lock(), limiter(self.rpm), limiter(self.tpm), pause)
        return self._state

    async def _limit(self, state: _LoopState) -> AdaptiveLimit:
        """The loop's in-flight limit, built on first use (probing the endpoint when adaptive)."""
        if state.limit is None:
            async with state.probing:
                if state.limit is None:
                    prev = self._learned
                    if not self.adaptive:
                        state.limit = AdaptiveLimit(self.concurrency, timeout=self.timeout)
                    elif prev is not None:  # a new event loop: start where the last one ended
                        state.limit = AdaptiveLimit(self.concurrency, start=prev.limit, mode=prev.mode,
                                                    slots=prev.slots, timeout=self.timeout)
                        state.limit.slow_start = prev.slow_start
                    else:
                        info = await self._endpoint_info()
                        start, mode = start_for(info, self.concurrency)
                        state.limit = AdaptiveLimit(self.concurrency, start=start, mode=mode,
                                                    slots=info.slots, timeout=self.timeout)
                        logger.info("judge %s: endpoint %s (slots %s): concurrency starts at %g (%s mode)",
                                    self.backend.model, info.kind, info.slots, start, mode)
                    self._learned = state.limit
        return state.limit

    async def _endpoint_info(self) -> EndpointInfo:
        """What the endpoint is: :func:`~.concurrency.probe_endpoint`, once per judge."""
        if self._endpoint is None:
            self._endpoint = await probe_endpoint(self.backend.base_url)
        return self._endpoint

    async def _passes_repeat_penalty(self, state: _LoopState) -> bool:
        """Whether a request's ``repeat_penalty`` goes to the server: the backend's
        ``repeat_penalty_field`` says "yes" (a server that takes it always), "probe" (an
        OpenAI-compatible server: only when it is llama-cpp-python's or llama.cpp's own) or
        nothing (never)."""
        how = getattr(self.backend, "repeat_penalty_field", None)
        if how == "probe":
            if self._endpoint is None:
                async with state.probing:
                    await self._endpoint_info()
            return self._endpoint is not None and self._endpoint.kind in ("llama-cpp-python", "llama.cpp")
        return how == "yes"

    def concurrency_info(self) -> dict[str, Any] | None:
        """The adaptive limit of the current/last event loop (mode, start, limit, lowest, peak in
        flight, decreases), or None before the first request."""
        state = self._state
        return None if state is None or state.limit is None else state.limit.info()

    async def _send(self, request: ChatRequest, tag: str, *, check_budget: bool) -> Completion:
        if self.dry_run:
            self._stats.bump(tag, "dry_run_calls")
            self._stats.bump(tag, "estimated_prompt_tokens", estimate_tokens(request.messages))
            raise JudgeDryRun("dry run: this judge call was counted, not sent")
        if check_budget and self.max_cost is not None and self._spent >= self.max_cost:
            raise JudgeBudgetExceeded(
                f"the judge budget max_cost={self.max_cost} USD is spent ({self._spent:.4f} USD): "
                "raise max_cost (--max-cost) to judge the remaining samples"
            )
        state = self._loop_state()
        if state.finalizer is None:
            # an async generator that asyncio.run() closes at the end of the loop (shutdown_asyncgens):
            # it closes the backend's connections of that loop, so no "Unclosed client session"
            state.finalizer = self._close_with_loop()
            await state.finalizer.__anext__()
        limit = await self._limit(state)
        if request.repeat_penalty is not None and not await self._passes_repeat_penalty(state):
            request = replace(request, repeat_penalty=None)
        attempt = timeouts = 0
        prompt_tokens = estimate_tokens(request.messages)
        while True:
            self._raise_if_unreachable()
            async with limit.slot() as slot:
                self._raise_if_unreachable()
                await self._wait_turn(state, request)
                self._stats.bump(tag, "requests")
                # adaptive: each timeout of this request doubles its next timeout (TCP's retransmission
                # timeout backoff), up to 8x: a server slower than the timeout still gets to answer;
                # and no attempt gets less than 3x the slowest recent reply (the learnt timeout)
                # (and, on a local server, 3x its seconds per weighted token times this prompt's weight)
                timeout = (min(8 * self.timeout, max(limit.learned_timeout(self.timeout, prompt_tokens),
                                                     self.timeout * 2 ** min(timeouts, 3)))
                           if self.adaptive else self.timeout)
                sent = replace(request, timeout=slot.backstop(timeout))
                sent_at = time.monotonic()
                try:
                    completion = await slot.run(functools.partial(self.backend.complete, sent), timeout,
                                                lambda c: c.usage)
                except TimeoutError as exc:
                    timeouts += 1
                    error: JudgeError = JudgeTimeout(
                        f"{self.backend.name} judge: no reply within {timeout:g} s of server time: "
                        "raise the judge timeout"
                    )
                    error.__cause__ = exc
                except JudgeError as exc:
                    error = exc
                else:
                    self._reached, self._cannot_reach, self._failed, self._failed_at = True, 0, 0, -math.inf
                    self._account(tag, completion.usage)
                    return completion
                slot.failed(timeout=isinstance(error, JudgeTimeout),
                            overloaded=isinstance(error, JudgeRateLimited) or error.status_code in (503, 529))
            self._stats.error(tag, type(error).__name__, final=False)
            self._note_unreachable(error, sent_at, state)
            if not error.retryable or attempt >= self.max_retries:
                raise error
            delay = self._delay(error, attempt)
            if isinstance(error, JudgeRateLimited) and error.retry_after is not None:
                state.pause_until = max(state.pause_until, time.monotonic() + delay)
            attempt += 1
            self._stats.bump(tag, "retries")
            logger.info("judge %s: %s; retry %d in %.2f s", self.backend.model, type(error).__name__,
                        attempt, delay)
            await asyncio.sleep(delay)

    def _note_unreachable(self, error: JudgeError, sent_at: float, state: _LoopState) -> None:
        """Count a failed request sent at ``sent_at``; declare the judge unreachable, and raise,
        after :data:`UNREACHABLE_AFTER` connection/auth failures in a row when no request ever
        succeeded, or after ``unreachable_after`` failed requests in a row without a reply
        (:func:`_no_reply`; those in flight together counted once, each counted one but a
        timeout pausing the judge's requests, see :data:`FAILED_IN_A_ROW`), whether or not it
        answered before. Any other reply from the server (a success, a 5xx...) ends both streaks."""
        if self.unreachable is not None:
            return
        if not _no_reply(error):
            self._cannot_reach = self._failed = 0
            self._failed_at = -math.inf
            return
        self._cannot_reach = self._cannot_reach + 1 if _cannot_reach(error) else 0
        if sent_at >= self._failed_at:  # sent after the last counted failure came back (and its pause)
            self._failed += 1
            now = time.monotonic()
            if not isinstance(error, JudgeTimeout):  # a timeout has waited already
                pause = (min(self.max_backoff, self.backoff * 2 ** (self._failed - 1)) if error.retry_after is None
                         else min(error.retry_after, self.max_retry_wait))  # the server said how long
                state.pause_until = max(state.pause_until, now + pause)
            self._failed_at = max(now, state.pause_until)
        if not self._reached and self._cannot_reach >= UNREACHABLE_AFTER:
            why = f"{self._cannot_reach} requests in a row failed and none ever succeeded"
        elif self._failed >= self.unreachable_after:
            why = (f"{self._failed} requests in a row failed with no reply in between (unreachable_after="
                   f"{self.unreachable_after})" + ("; it answered before: the rows finished before are kept"
                                                    if self._reached else ""))
        else:
            return
        cause = " ".join(str(error).split())
        self.unreachable = JudgeUnreachable(
            f"judge {self.backend.name}:{self.backend.model} at {mask_url(self.backend.base_url) or '-'} is "
            f"unreachable: {why} ({type(error).__name__}: {mask_secrets(cause)}); check the URL, that the server "
            "runs, and the API key", status_code=error.status_code)
        self._raise_if_unreachable()

    def _raise_if_unreachable(self) -> None:
        if self.unreachable is not None:
            raise JudgeUnreachable(str(self.unreachable), status_code=self.unreachable.status_code)

    async def _close_with_loop(self) -> AsyncIterator[None]:
        try:
            yield
        finally:
            with contextlib.suppress(Exception):
                await self.backend.aclose()

    async def _wait_turn(self, state: _LoopState, request: ChatRequest) -> None:
        # the server asked everyone to wait (429 with Retry-After), or the judge is failing (a
        # pause after each counted failure, see FAILED_IN_A_ROW); a pause may grow meanwhile
        while (pause := state.pause_until - time.monotonic()) > 0:
            await asyncio.sleep(pause)
        if state.rpm is not None:
            await state.rpm.acquire()
        if state.tpm is not None:
            need = estimate_tokens(request.messages) + request.max_tokens
            await state.tpm.acquire(min(float(need), state.tpm.max_rate))

    def _delay(self, error: JudgeError, attempt: int) -> float:
        return retry_delay(attempt, error.retry_after, backoff=self.backoff, max_backoff=self.max_backoff,
                           max_retry_wait=self.max_retry_wait)

    def _account(self, tag: str, usage: Usage) -> None:
        cost = cost_of(usage, self.price)
        if cost is not None:
            self._spent += cost
        for t in self._stats.tallies(tag):
            t.add_usage(usage, cost)
