"""Every exception ragmeter raises, in one tree.

::

    RagmeterError                     base of everything raised on purpose
    ├── InvalidParameterError         (also ValueError, TypeError) a bad argument at a public boundary
    │   └── UnknownMetricError        a metric or measure name that is not registered (lists close matches)
    ├── MissingBackendError           a metric needs a judge / embedder / optional extra that is not configured
    ├── InputError                    bad input data: names the file, the line or row, the field
    │   ├── EmptyInputError           a data file with no rows
    │   └── AppError                  the app under test (``ragmeter run``) raised, timed out or returned
    │       │                         what ragmeter cannot read: recorded as that question's error
    │       └── AppUnavailable        a transient failure (HTTP 429 / 5xx, connection refused or dropped,
    │                                 no reply in time): retried with backoff, then recorded
    ├── EmbedderError                 an embedding backend call failed (HTTP error, bad response);
    │                                 recorded on the affected samples
    └── JudgeError                    a judge call that failed (recorded on the sample, never raised mid-run)
        ├── JudgeTimeout              no answer within the per-call timeout (retried, then recorded)
        ├── JudgeRateLimited          HTTP 429 / quota; carries ``retry_after`` (retried, then recorded)
        ├── JudgeServerError          HTTP 5xx from the backend (retried, then recorded)
        ├── JudgeConnectionError      connection refused / dropped / DNS (retried, then recorded)
        ├── JudgeAuthError            missing or rejected API key (raised when the judge is built)
        ├── JudgeBadRequest           the backend rejected the request (unknown model, bad option...)
        │   └── JudgeContextOverflow  the prompt does not fit the judge's context window; carries
        │                             ``n_ctx`` and ``prompt_tokens`` where the server says them
        ├── JudgeParseError           the reply is not the expected JSON even after one repair;
        │                             carries ``raw`` (the reply) and ``validation`` (what failed)
        ├── JudgeBudgetExceeded       ``max_cost`` reached: no new call is sent
        ├── JudgeUnreachable          the first requests all failed to connect or authenticate, or
        │                             ``unreachable_after`` requests in a row got no reply (refused,
        │                             timeout, 429): the judge stops and the run stops (CLI exit 3)
        └── JudgeDryRun               ``dry_run=True``: the call was counted, not sent

Every message says what was expected, what was found, and what to do next.
Errors recorded on a sample are serialised with :func:`error_info` into
``{"type": ..., "message": ...}``; the type is the exception's class name.
"""

from __future__ import annotations

from typing import Any


class RagmeterError(Exception):
    """Base class of every exception ragmeter raises on purpose."""


class InvalidParameterError(RagmeterError, ValueError, TypeError):
    """A public function received an argument it cannot use ("expected X, got Y")."""


class UnknownMetricError(InvalidParameterError):
    """A metric or measure name is not registered.

    Attributes
    ----------
    name:
        The name that was asked for.
    suggestions:
        Registered names close to it, best first.
    """

    def __init__(self, name: str, suggestions: list[str], kind: str = "metric") -> None:
        self.name = name
        self.suggestions = suggestions
        hint = f" Did you mean: {', '.join(suggestions)}?" if suggestions else ""
        super().__init__(
            f"unknown {kind} {name!r}.{hint} Run `ragmeter metrics` to list every {kind}."
        )


class MissingBackendError(RagmeterError):
    """A metric needs a judge, an embedder or an optional extra that is not available."""


class InputError(RagmeterError):
    """Bad input data. Carries the file, the 1-based line or row, and the field when known.

    ``str(err)`` reads ``path:line: field 'x': message``.
    """

    def __init__(
        self,
        message: str,
        *,
        path: str | None = None,
        line: int | None = None,
        field: str | None = None,
    ) -> None:
        self.path = path
        self.line = line
        self.field = field
        self.message = message
        where = ""
        if path is not None:
            where = str(path)
            if line is not None:
                where += f":{line}"
            where += ": "
        elif line is not None:
            where = f"row {line}: "
        what = f"field {field!r}: " if field else ""
        super().__init__(f"{where}{what}{message}")


class AppError(InputError):
    """The app under test (``ragmeter run``) failed on one question: it raised, timed out, answered
    with an HTTP error or returned no answer and contexts ragmeter can read. Recorded as that
    sample's error on every metric (``path`` is the question's id), never a crash of the run."""

    retryable: bool = False


class AppUnavailable(AppError):
    """A transient failure of the app under test: HTTP 429 or 5xx, a connection refused or
    dropped, no reply within the timeout. ``ragmeter run`` retries the call with backoff
    (``retry_after`` seconds when the server said how long); a Python app may raise it to ask
    for a retry."""

    retryable = True

    def __init__(self, message: str, *, retry_after: float | None = None, **kw: Any) -> None:
        super().__init__(message, **kw)
        self.retry_after = retry_after


class EmptyInputError(InputError):
    """A data file that holds no rows."""


class EmbedderError(RagmeterError):
    """An embedding backend call failed (HTTP error, refused connection, malformed response).

    Raised by ``Embedder.embed``; the runner records it on the samples of the failed batch.
    """


class JudgeError(RagmeterError):
    """A judge call failed. Recorded on the sample's metric result; never a score of 0.

    Attributes
    ----------
    retry_after:
        Seconds the backend asked us to wait before trying again (``Retry-After`` or
        ``x-ratelimit-reset-*`` headers), or None.
    status_code:
        The HTTP status when there was one, else None.
    """

    retryable: bool = False

    def __init__(self, message: str, *, retry_after: float | None = None, status_code: int | None = None) -> None:
        super().__init__(message)
        self.retry_after = retry_after
        self.status_code = status_code


class JudgeTimeout(JudgeError):
    """The backend gave no answer within the per-call ``timeout``; raise ``timeout=`` or lower concurrency."""

    retryable = True


class JudgeRateLimited(JudgeError):
    """The backend answered HTTP 429 (rate limit or quota); lower ``rpm``/``tpm``/``concurrency``."""

    retryable = True


class JudgeServerError(JudgeError):
    """The backend answered HTTP 5xx."""

    retryable = True


class JudgeConnectionError(JudgeError):
    """The backend could not be reached (connection refused, dropped, DNS); check the base URL."""

    retryable = True


class JudgeAuthError(JudgeError):
    """The API key is missing (raised before the run, naming the env var to set) or was rejected."""


class JudgeBadRequest(JudgeError):
    """The backend rejected the request (HTTP 400/404/422: unknown model, bad option, prompt too long)."""


class JudgeContextOverflow(JudgeBadRequest):
    """The prompt (with room for the reply) does not fit the judge's context window: llama.cpp's
    ``exceed_context_size_error``, vLLM's and OpenAI's "maximum context length is N tokens",
    llama-cpp-python's "Requested tokens exceed context window". Not retried as sent; faithfulness
    judges the claims one by one against their evidence windows instead, or sends its one call
    again with the context sentences that fit
    (:mod:`ragmeter.metrics.generation._fit`).

    Attributes
    ----------
    n_ctx:
        The context window in tokens, when the server says it; else None.
    prompt_tokens:
        The rejected request's prompt tokens, when the server says them; else None.
    """

    def __init__(self, message: str, *, n_ctx: int | None = None, prompt_tokens: int | None = None,
                 retry_after: float | None = None, status_code: int | None = None) -> None:
        super().__init__(message, retry_after=retry_after, status_code=status_code)
        self.n_ctx = n_ctx
        self.prompt_tokens = prompt_tokens


class JudgeParseError(JudgeError):
    """The judge's reply is not the expected JSON object, even after one repair attempt.

    Attributes
    ----------
    raw:
        The judge's reply that could not be parsed (the repair's reply when there was one).
    validation:
        What was wrong: no JSON object found, or pydantic's validation errors.
    """

    def __init__(self, message: str, *, raw: str = "", validation: str = "") -> None:
        super().__init__(message)
        self.raw = raw
        self.validation = validation


class JudgeBudgetExceeded(JudgeError):
    """The run reached ``max_cost``: calls already sent finish, new ones raise this. Raise the budget."""


class JudgeUnreachable(JudgeError):
    """The judge cannot be used: its first few requests in a row failed to connect or to
    authenticate, before any reply ever came back (wrong URL, server down, bad key), or, whether or
    not it answered before, ``unreachable_after`` requests in a row got no reply (refused or reset
    connections, timeouts, HTTP 429; a server killed mid-run, hung or throttling forever). Every
    further call raises this at once, and the run stops (results computed so far are kept;
    ``ragmeter eval`` exits 3)."""


class JudgeDryRun(JudgeError):
    """``dry_run=True``: the call was counted (``judge.stats()``) but not sent."""


#: Characters of a judge's raw reply kept in a recorded error.
RAW_LIMIT = 4000


def error_info(exc: BaseException) -> dict[str, Any]:
    """Serialise an exception into the ``{"type", "message"}`` form stored on a sample's result."""
    info: dict[str, Any] = {"type": type(exc).__name__, "message": str(exc)}
    for attr in ("path", "line", "field", "status_code"):
        value = getattr(exc, attr, None)
        if value is not None:
            info[attr] = value
    raw = getattr(exc, "raw", None)
    if raw:  # the judge's unreadable reply, kept so a person can see what went wrong
        info["raw"] = raw if len(raw) <= RAW_LIMIT else raw[:RAW_LIMIT] + f"... [{len(raw) - RAW_LIMIT} more chars]"
    return info
