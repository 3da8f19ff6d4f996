"""Every exception ragmeter raises, in one tree.

::

    RagmeterError                     base of everything raised on purpose
    ├── InvalidParameterError         (also ValueError, TypeError) a bad argument at a public boundary
    │   └── UnknownMetricError        a metric or measure name that is not registered (lists close matches)
    ├── MissingBackendError           a metric needs a judge / embedder / optional extra that is not configured
    ├── InputError                    bad input data: names the file, the line or row, the field
    │   └── EmptyInputError           a data file with no rows
    └── JudgeError                    a judge call that failed (recorded on the sample, never raised mid-run)

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


class EmptyInputError(InputError):
    """A data file that holds no rows."""


class JudgeError(RagmeterError):
    """A judge call failed. Subclasses (timeout, rate limit, parse...) come with the judge layer."""


def error_info(exc: BaseException) -> dict[str, Any]:
    """Serialise an exception into the ``{"type", "message"}`` form stored on a sample's result."""
    info: dict[str, Any] = {"type": type(exc).__name__, "message": str(exc)}
    for attr in ("path", "line", "field"):
        value = getattr(exc, attr, None)
        if value is not None:
            info[attr] = value
    return info
