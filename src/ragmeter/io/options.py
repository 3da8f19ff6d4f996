"""How rows are read: :class:`ReadOptions`, one value for every reader, source and engine.

A run's read options (what a bad row does, the column renames, the file format, the longest text
a row may hold) are checked once, where the user gives them (:func:`ragmeter.evaluate`,
:func:`~ragmeter.io.read_samples`, :func:`~ragmeter.io.as_samples`), and handed on as this one
frozen value: the readers, the :class:`~ragmeter.io.records.RowConverter`, the columnar sources
and the Ray engine read their options from it and from nowhere else.

>>> ReadOptions(on_error="skip", field_map={"question": "query"}).field_map
{'question': 'query'}
>>> ReadOptions(max_text_chars=-1)
Traceback (most recent call last):
...
ragmeter.errors.InvalidParameterError: max_text_chars: expected None or an integer >= 0 (0: no limit), got -1
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

from ..errors import InvalidParameterError
from .records import DEFAULT_MAX_TEXT_CHARS, check_field_map

#: The file formats the readers know.
FORMATS: tuple[str, ...] = ("jsonl", "json", "csv", "parquet", "otel")

__all__ = ["DEFAULT_MAX_TEXT_CHARS", "FORMATS", "ReadOptions", "check_format", "read_options"]


def check_format(format: str) -> str:
    """The canonical name of the file format ``format`` (``".JSONL"`` -> ``"jsonl"``; ``ndjson`` is
    ``jsonl``); InvalidParameterError for one the readers do not know."""
    fmt = format.lower().lstrip(".") if isinstance(format, str) else None
    fmt = "jsonl" if fmt == "ndjson" else fmt
    if fmt not in FORMATS:
        raise InvalidParameterError(f"format: expected one of {', '.join(FORMATS)}, got {format!r}")
    return fmt


@dataclass(frozen=True)
class ReadOptions:
    """How the rows of a run are read, checked once at construction.

    Parameters
    ----------
    on_error:
        ``"raise"`` (default): the first bad row raises its :class:`~ragmeter.errors.InputError`
        (every row before it is scored and written); ``"skip"``: a bad row is recorded as an
        errored sample and the run goes on.
    field_map:
        Your column name -> ragmeter field (``{"question_text": "query"}``); RAGAS and DeepEval
        names need none. Kept as the checked ``dict`` (targets canonical).
    format:
        ``"jsonl"``, ``"json"``, ``"csv"`` or ``"parquet"`` for a file whose name does not say it;
        None (default): from the extension.
    max_text_chars:
        A row whose query, answer, reference or a context text is longer than this (characters)
        is a bad row (default :data:`~ragmeter.io.records.DEFAULT_MAX_TEXT_CHARS`, 1,000,000);
        None or 0: no limit (kept as None).

    Raises
    ------
    InvalidParameterError
        A value out of its range; the message names the field: ``on_error: expected 'raise' or
        'skip', got 'ignore'``.
    """

    on_error: Literal["raise", "skip"] = "raise"
    field_map: Mapping[str, str] = field(default_factory=dict, hash=False)
    format: str | None = None
    max_text_chars: int | None = DEFAULT_MAX_TEXT_CHARS

    def __post_init__(self) -> None:
        if self.on_error not in ("raise", "skip"):
            raise InvalidParameterError(f"on_error: expected 'raise' or 'skip', got {self.on_error!r}")
        # the checked forms are what every reader sees (set here, once, while constructing)
        object.__setattr__(self, "field_map", check_field_map(self.field_map))
        if self.format is not None:
            object.__setattr__(self, "format", check_format(self.format))
        limit = self.max_text_chars
        if limit is not None and (isinstance(limit, bool) or not isinstance(limit, int) or limit < 0):
            raise InvalidParameterError(
                f"max_text_chars: expected None or an integer >= 0 (0: no limit), got {limit!r}")
        if limit == 0:
            object.__setattr__(self, "max_text_chars", None)


#: The keyword arguments a public function takes for :class:`ReadOptions`, with their defaults.
_DEFAULTS: dict[str, Any] = {"on_error": "raise", "field_map": None, "format": None,
                             "max_text_chars": DEFAULT_MAX_TEXT_CHARS}


def read_options(read: ReadOptions | None = None, **given: Any) -> ReadOptions:
    """The :class:`ReadOptions` of a public call: ``read`` when given, else one built from the
    loose keyword arguments (``on_error``, ``field_map``, ``format``, ``max_text_chars``).

    Raises InvalidParameterError when ``read`` is given with a keyword set to other than its
    default (the two would disagree), or ``read`` is not a ReadOptions.
    """
    unknown = set(given) - set(_DEFAULTS)
    if unknown:
        raise TypeError(f"read_options() got unexpected keyword arguments {sorted(unknown)}")
    if read is None:
        return ReadOptions(**given)
    if not isinstance(read, ReadOptions):
        raise InvalidParameterError(f"read: expected a ragmeter.io.ReadOptions, got {type(read).__name__}")
    clash = [k for k, v in given.items() if v != _DEFAULTS[k]]
    if clash:
        raise InvalidParameterError(
            f"read: expected the read options once, as read=ReadOptions(...) or as keywords, got both "
            f"(read= and {', '.join(clash)}=): put {', '.join(clash)} in the ReadOptions")
    return read
