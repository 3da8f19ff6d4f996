"""Every openai SDK exception maps to a specific JudgeError; Retry-After parsing; redaction."""

from __future__ import annotations

import inspect

import httpx2
import openai
import pytest

from ragmeter.errors import (
    JudgeAuthError,
    JudgeBadRequest,
    JudgeConnectionError,
    JudgeError,
    JudgeParseError,
    JudgeRateLimited,
    JudgeServerError,
    JudgeTimeout,
)
from ragmeter.judges.backends._errors import map_openai_error, openai_error_map, redact, retry_after

SDK_ERRORS = sorted(
    (cls for _, cls in inspect.getmembers(openai, inspect.isclass)
     if issubclass(cls, openai.OpenAIError) and not cls.__name__.startswith("_")),
    key=lambda c: c.__name__,
)


def test_every_sdk_error_class_is_in_the_table():
    mapped = {cls for cls, _ in openai_error_map()}
    missing = [c.__name__ for c in SDK_ERRORS if c not in mapped]
    # classes not in the table must still map through a mapped base class
    for name in missing:
        cls = getattr(openai, name)
        assert any(issubclass(cls, m) for m in mapped), name


def _make(cls, status=500, headers=None, message="boom"):
    request = httpx2.Request("POST", "http://127.0.0.1/v1/chat/completions")
    response = httpx2.Response(status, headers=headers or {}, request=request)
    params = inspect.signature(cls.__init__).parameters
    if cls.__name__ == "APIError":
        return cls(message, request, body=None)
    if cls.__name__ == "APIResponseValidationError":
        return cls(response, None)
    if "unsent_messages" in params:
        return cls(message, unsent_messages=[])
    if "response" in params and "body" in params and "message" in params:
        return cls(message, response=response, body=None)
    if "response" in params and "body" in params:  # OAuthError
        return cls(response=response, body=None)
    if "request" in params and "message" in params:
        return cls(message=message, request=request)
    if "request" in params:
        return cls(request)
    if "completion" in params:
        return cls.__new__(cls)
    if "message" in params:
        return cls(message)
    return cls()


EXPECTED = {
    "APITimeoutError": JudgeTimeout,
    "APIConnectionError": JudgeConnectionError,
    "RateLimitError": JudgeRateLimited,
    "AuthenticationError": JudgeAuthError,
    "OAuthError": JudgeAuthError,
    "PermissionDeniedError": JudgeAuthError,
    "BadRequestError": JudgeBadRequest,
    "NotFoundError": JudgeBadRequest,
    "ConflictError": JudgeBadRequest,
    "UnprocessableEntityError": JudgeBadRequest,
    "InternalServerError": JudgeServerError,
    "APIResponseValidationError": JudgeServerError,
    "LengthFinishReasonError": JudgeParseError,
}

STATUS = {"RateLimitError": 429, "AuthenticationError": 401, "OAuthError": 401, "PermissionDeniedError": 403,
          "BadRequestError": 400, "NotFoundError": 404, "ConflictError": 409, "UnprocessableEntityError": 422}


@pytest.mark.parametrize("cls", SDK_ERRORS, ids=lambda c: c.__name__)
def test_each_sdk_error_maps_to_a_judge_error(cls):
    try:
        exc = _make(cls, status=STATUS.get(cls.__name__, 500))
    except Exception as err:  # pragma: no cover - a constructor we do not know how to call
        pytest.skip(f"cannot build {cls.__name__}: {err}")
    mapped = map_openai_error(exc, backend="openai")
    assert isinstance(mapped, JudgeError)
    if cls is not openai.OpenAIError:  # every concrete SDK error gets a specific type
        assert type(mapped) is not JudgeError, cls
    if cls.__name__ in EXPECTED:
        assert type(mapped) is EXPECTED[cls.__name__], (cls, mapped)


@pytest.mark.parametrize(("status", "error"), [(429, JudgeRateLimited), (408, JudgeTimeout),
                                               (502, JudgeServerError), (418, JudgeBadRequest)])
def test_generic_status_errors_are_refined_by_code(status, error):
    exc = _make(openai.APIStatusError, status=status)
    assert type(map_openai_error(exc, backend="openai")) is error


@pytest.mark.parametrize(
    ("headers", "seconds"),
    [
        ({"retry-after": "2"}, 2.0),
        ({"Retry-After": "0"}, 0.0),
        ({"retry-after-ms": "250"}, 0.25),
        ({"x-ratelimit-reset-requests": "1s", "x-ratelimit-reset-tokens": "6m0s"}, 360.0),
        ({"x-ratelimit-reset-tokens": "20ms"}, 0.02),
        ({"x-ratelimit-reset-requests": "1h2m3.5s"}, 3723.5),
        ({"retry-after": "soon"}, None),
        ({}, None),
    ],
)
def test_retry_after(headers, seconds):
    got = retry_after(headers)
    assert got == (pytest.approx(seconds) if seconds is not None else None)


def test_retry_after_reaches_the_error():
    exc = _make(openai.RateLimitError, status=429, headers={"retry-after": "3"})
    err = map_openai_error(exc, backend="openai")
    assert isinstance(err, JudgeRateLimited) and err.retry_after == 3.0 and err.status_code == 429


def test_redact():
    text = "key sk-proj-abcdefghijkl and Bearer abc.def and my-own-secret-value"
    out = redact(text, ["my-own-secret-value"])
    assert "abcdefghijkl" not in out and "abc.def" not in out and "my-own-secret-value" not in out
