"""One call of the user's app, with the limits the judge's calls have: a per-call timeout, a
concurrency gate, and retries with backoff on transient failures.

What is retried (:func:`retryable`):

* an HTTP app's 429 and 5xx replies, a connection refused or dropped (:class:`HttpApp` raises
  :class:`~ragmeter.errors.AppUnavailable` for them; ``Retry-After`` is honoured);
* no reply within the timeout;
* a Python app that raises :class:`~ragmeter.errors.AppUnavailable`, or Python's own
  ``ConnectionError`` / ``TimeoutError``.

Anything else a Python app raises is that question's error at once: an exception from the user's
code is usually a bug that a second call would only repeat. Before retry *n* (0-based) the call
waits ``uniform(0, min(max_backoff, backoff * 2**n))`` seconds (full jitter, as the judge), or
what the server asked, up to ``max_retry_wait``; the concurrency slot is given back while it waits.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from typing import Any

from ..backoff import retry_delay
from ..errors import AppError, InvalidParameterError
from .targets import AppTarget

DEFAULT_RETRIES = 3


@dataclass(frozen=True, kw_only=True)
class RetryPolicy:
    """How failed app calls are retried (see the module docstring); ``max_retries=0`` never retries."""

    max_retries: int = DEFAULT_RETRIES
    backoff: float = 0.5
    max_backoff: float = 30.0
    max_retry_wait: float = 120.0

    def __post_init__(self) -> None:
        if self.max_retries < 0:
            raise InvalidParameterError(f"max_retries: expected 0 or more, got {self.max_retries}")
        if min(self.backoff, self.max_backoff, self.max_retry_wait) < 0:
            raise InvalidParameterError("backoff, max_backoff, max_retry_wait: expected seconds >= 0, got "
                                        f"{self.backoff}, {self.max_backoff}, {self.max_retry_wait}")

    def wait(self, retry: int, error: BaseException) -> float:
        """Seconds to wait before retry ``retry`` (0-based) after ``error``."""
        return retry_delay(retry, getattr(error, "retry_after", None), backoff=self.backoff,
                           max_backoff=self.max_backoff, max_retry_wait=self.max_retry_wait)


def retryable(exc: BaseException) -> bool:
    """True for a transient failure worth another call (see the module docstring)."""
    if isinstance(exc, AppError):
        return exc.retryable
    return isinstance(exc, ConnectionError | TimeoutError)


def error_message(exc: BaseException, timeout: float) -> str:
    """The message recorded for a failed call."""
    if isinstance(exc, AppError):
        return exc.message
    if isinstance(exc, TimeoutError) and not str(exc):
        return f"no reply within {timeout:g} s"
    return f"{type(exc).__name__}: {exc}"


@dataclass
class Attempted:
    """What :func:`call_app` got: the raw output or the last error, and the retries made."""

    raw: Any
    error: BaseException | None
    retries: int


async def call_app(app: AppTarget, question: str, params: dict[str, Any], *, timeout: float,
                   gate: asyncio.Semaphore, retry: RetryPolicy) -> Attempted:
    """Call ``app`` within ``timeout`` seconds per attempt, holding ``gate`` while a call is in
    flight, retrying transient failures as ``retry`` says."""
    attempt = 0
    while True:
        async with gate:
            try:
                raw = await asyncio.wait_for(app.call(question, dict(params)), timeout)
            except Exception as exc:  # whatever the user's app raises is that row's error
                error: BaseException = exc
            else:
                return Attempted(raw, None, attempt)
        if attempt >= retry.max_retries or not retryable(error):
            return Attempted(None, error, attempt)
        await asyncio.sleep(retry.wait(attempt, error))
        attempt += 1


@dataclass
class AppTally:
    """Running counts of a run's app calls, for the progress line."""

    questions: int = 0
    cached: int = 0
    retries: int = 0
    errors: int = 0

    def add(self, cached: bool, retries: int, failed: bool) -> None:
        self.questions += 1
        self.cached += cached
        self.retries += retries
        self.errors += failed

    def text(self) -> str:
        """``app: 3 cached, 2 retries, 1 error``."""
        return (f"app: {self.cached:,} cached, {self.retries:,} retr{'y' if self.retries == 1 else 'ies'}, "
                f"{self.errors:,} error{'' if self.errors == 1 else 's'}")


__all__ = ["DEFAULT_RETRIES", "AppTally", "Attempted", "RetryPolicy", "call_app", "retryable"]
