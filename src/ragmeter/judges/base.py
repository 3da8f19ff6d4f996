"""The judge seam: one request type, one response type, one async method.

Every backend (OpenAI-compatible servers, Ollama, LiteLLM, in-process llama.cpp, a test
function) implements :class:`JudgeBackend.complete`. Everything else, the cache, retries, rate
limits, budget, cost accounting and output parsing, lives once in :class:`~ragmeter.judges.Judge`,
which wraps a backend. This mirrors httpx's ``Client`` over ``Transport.handle_request``.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any, Literal, Protocol, runtime_checkable

Role = Literal["system", "user", "assistant"]

#: ``ChatRequest.repeat_penalty`` asking for no repetition penalty: the model's most likely tokens,
#: as temperature 0 intends, where a server would otherwise penalise repeated tokens (llama.cpp's
#: sampler as llama-cpp-python's server and Ollama run it: 1.1 over the last 64 tokens)
NO_REPEAT_PENALTY = 1.0

#: ``ChatRequest.repeat_penalty`` of the one repair of a reply cut at the token limit: llama.cpp's
#: sampler's 1.1 over the last 64 tokens, which llama-cpp-python's server and Ollama apply unasked
#: and llama.cpp's own server does not (its default is 1.0); a small judge that looped on one
#: sentence to the limit loops again when asked the same way (measured on the 1.5B bench judge)
REPAIR_REPEAT_PENALTY = 1.1


@dataclass(frozen=True)
class Message:
    """One chat message. ``content`` is plain text."""

    role: Role
    content: str

    def to_dict(self) -> dict[str, str]:
        """The ``{"role", "content"}`` form every chat API takes."""
        return {"role": self.role, "content": self.content}


@dataclass(frozen=True)
class ChatRequest:
    """What a backend is asked to do.

    Attributes
    ----------
    messages:
        The rendered conversation, oldest first.
    temperature:
        Sampling temperature (0 for the most repeatable judgements).
    max_tokens:
        Upper bound on the reply's length in tokens.
    json_schema:
        The JSON schema the reply must follow, or None for free text. A backend uses the
        strongest structured-output mode the server accepts (json_schema, json_object, or an
        instruction in the prompt).
    schema_name:
        A short name for the schema (OpenAI's ``response_format.json_schema.name``).
    seed:
        Sampling seed, passed through when the backend supports one.
    timeout:
        Seconds the backend may spend on this request (the :class:`Judge` also enforces it).
    top_logprobs:
        None (default): no log-probabilities. ``n >= 0``: ask for the log-probability of every
        generated token and of its ``n`` most likely alternatives (OpenAI's ``logprobs: true,
        top_logprobs: n``); they come back in :attr:`Completion.logprobs` where the server
        supports them, and a backend without them returns ``logprobs=None``.
    repeat_penalty:
        None (default): the server's own repetition penalty. A value (:data:`NO_REPEAT_PENALTY`,
        1.0: none; :data:`REPAIR_REPEAT_PENALTY`) is a request for that penalty, which the
        :class:`~ragmeter.judges.Judge` passes on only where the server is known to take the field
        (llama-cpp-python's server, llama.cpp's own server, Ollama's native API, the in-process
        llama.cpp backend) and drops everywhere else, where an unknown field may be refused. A
        backend sends it when set.
    """

    messages: tuple[Message, ...]
    temperature: float = 0.0
    max_tokens: int = 1024
    json_schema: dict[str, Any] | None = None
    schema_name: str = "judgement"
    seed: int | None = None
    timeout: float = 60.0
    top_logprobs: int | None = None
    repeat_penalty: float | None = None

    def message_dicts(self) -> list[dict[str, str]]:
        """The messages as plain dicts."""
        return [m.to_dict() for m in self.messages]


@dataclass(frozen=True)
class Usage:
    """Tokens spent by one call (0 when the backend does not report them). A negative count is no
    count: ValueError (a backend reading it from a reply refuses the reply, never a negative cost).

    ``cached_prompt_tokens`` is the part of ``prompt_tokens`` the server took from its prompt cache
    instead of computing it (OpenAI's ``usage.prompt_tokens_details.cached_tokens``, which
    llama.cpp's server and vLLM report too); 0 when the server does not say."""

    prompt_tokens: int = 0
    completion_tokens: int = 0
    cached_prompt_tokens: int = 0

    def __post_init__(self) -> None:
        for what, n in (("prompt", self.prompt_tokens), ("completion", self.completion_tokens),
                        ("cached prompt", self.cached_prompt_tokens)):
            if n < 0:
                raise ValueError(f"expected token counts >= 0, got {n} {what} tokens")
        if self.cached_prompt_tokens > self.prompt_tokens:
            raise ValueError(f"expected cached prompt tokens <= prompt tokens, got {self.cached_prompt_tokens} "
                             f"of {self.prompt_tokens}")

    @property
    def total_tokens(self) -> int:
        """Prompt plus completion tokens."""
        return self.prompt_tokens + self.completion_tokens

    def __add__(self, other: Usage) -> Usage:
        return Usage(self.prompt_tokens + other.prompt_tokens, self.completion_tokens + other.completion_tokens,
                     self.cached_prompt_tokens + other.cached_prompt_tokens)


@dataclass(frozen=True)
class TokenLogprob:
    """One generated token: its text, its natural-log probability, and the most likely
    alternatives at that position as ``(token, logprob)`` pairs as the server sent them, most
    likely first (llama-cpp-python's server appends the chosen token when it is not among the
    top ``n``)."""

    token: str
    logprob: float
    top: tuple[tuple[str, float], ...] = ()

    def alternatives(self) -> dict[str, float]:
        """``{token: logprob}`` of the alternatives and the chosen token (the first value kept
        when a token text repeats)."""
        out: dict[str, float] = {}
        for tok, lp in (*self.top, (self.token, self.logprob)):
            out.setdefault(tok, lp)
        return out


@dataclass(frozen=True)
class Completion:
    """A backend's answer: the reply text, the tokens spent and why generation stopped.

    ``logprobs`` holds one :class:`TokenLogprob` per generated token when the request asked for
    them (``ChatRequest.top_logprobs``) and the server returned them; otherwise None.
    """

    text: str
    usage: Usage = field(default_factory=Usage)
    finish_reason: str | None = None
    logprobs: tuple[TokenLogprob, ...] | None = None


@runtime_checkable
class JudgeBackend(Protocol):
    """The one seam every judge backend implements.

    Attributes
    ----------
    name:
        The registered backend name (``openai``, ``ollama``...).
    model:
        The model the backend sends requests to.
    base_url:
        The server URL, or None for in-process / provider-routed backends. Part of the cache key.
    free:
        True when calls cost nothing (a local model): cost is then 0 rather than unknown.

    Optional attributes, read with ``getattr`` where a backend has them (a plugin may leave them out):

    ``extra_body``
        Fields added to every request (a dict); part of the cache key and of the judge-check record.
    ``fixed_mode``, ``mode``
        True when the structured-output mode is pinned, and that mode (``json_schema``,
        ``json_object``...); a pinned mode is part of the cache key and of the judge-check record.
    ``repeat_penalty_field``
        Whether the backend sends :attr:`ChatRequest.repeat_penalty`: ``"yes"`` (always),
        ``"probe"`` (an OpenAI-compatible server: only when the endpoint probe finds
        llama-cpp-python's server) or absent (never).
    """

    name: str
    model: str
    base_url: str | None
    free: bool

    async def complete(self, request: ChatRequest) -> Completion:
        """Send ``request`` once (no retry) and return the reply.

        Raises a :class:`~ragmeter.errors.JudgeError` subclass on failure: backend SDK
        exceptions are translated in one place per backend, ``raise ... from exc``.
        """
        ...

    async def aclose(self) -> None:
        """Release connections (optional; a no-op for most backends)."""
        ...


Handler = Callable[[ChatRequest], Awaitable[Completion | str]]


class FunctionBackend:
    """A backend that calls an async function: for tests and for wrapping any custom client.

    ``handler(request)`` returns a :class:`Completion` or plain reply text, or raises a
    :class:`~ragmeter.errors.JudgeError`. Like ``httpx.MockTransport``.
    """

    def __init__(self, handler: Handler, *, model: str = "function", name: str = "function",
                 base_url: str | None = None, free: bool = True) -> None:
        self.handler = handler
        self.name = name
        self.model = model
        self.base_url = base_url
        self.free = free

    async def complete(self, request: ChatRequest) -> Completion:
        """Call the handler."""
        out = await self.handler(request)
        return Completion(out) if isinstance(out, str) else out

    async def aclose(self) -> None:
        """Nothing to release."""

    def __repr__(self) -> str:
        return f"FunctionBackend(model={self.model!r})"
