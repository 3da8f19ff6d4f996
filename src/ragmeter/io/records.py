"""Turning one raw row (a dict from any format) into a :class:`~ragmeter.types.Sample` or an
:class:`~ragmeter.errors.InputError` that names the file, the line or row, and the field.

Shared by every reader, so every format applies the same rules: ``field_map`` renames columns,
a missing or null value is the same as an absent field, a missing ``id`` becomes the row's
number, ids must be unique, and pydantic's validation errors are rewritten into a field path
such as ``contexts[2].score`` with an "expected X, got Y" message.
"""

from __future__ import annotations

import contextlib
import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from pydantic import ValidationError

from ..errors import InputError
from ..types import CANONICAL_FIELDS, FIELD_ALIASES, Sample

if TYPE_CHECKING:
    from .options import ReadOptions

#: Longest text (query, answer, reference, a context's text) a row may hold by default, in
#: characters; a longer one makes the row an input error (``max_text_chars``; None: no limit).
DEFAULT_MAX_TEXT_CHARS = 1_000_000

#: Fields a row must have at least one of (``id`` and ``metadata`` alone evaluate nothing).
EVALUABLE_FIELDS = ("query", "answer", "contexts", "reference", "relevant")

_EXPECTED = {
    "string_type": "a string",
    "float_type": "a number",
    "float_parsing": "a number",
    "int_type": "an integer",
    "int_parsing": "an integer",
    "list_type": "a list",
    "dict_type": "an object (mapping)",
    "model_type": "a string or an {id, text, score} object",
    "model_attributes_type": "a string or an {id, text, score} object",
    "finite_number": "a finite number",
}


def canonical(name: str) -> str:
    """The canonical field a column name stands for (itself when it is neither canonical nor an alias)."""
    return FIELD_ALIASES.get(name, name)


#: Keys only a DeepEval row has: a row with one of them reads its ``context`` (DeepEval's ideal,
#: ground-truth context) as ``relevant``; elsewhere ``context`` stays a plain column, since many
#: files name their *retrieved* context so (the "did you mean" suggests ``--map context=contexts``).
DEEPEVAL_KEYS = frozenset({"actual_output", "expected_output", "retrieval_context"})
_DEEPEVAL_CONTEXT = {"context": "relevant"}


def dialect_map(keys: Any, field_map: Mapping[str, str]) -> Mapping[str, str]:
    """Renames a row with ``keys`` gets beyond the aliases: ``{"context": "relevant"}`` for a
    DeepEval-named row that has ``context`` and no ``field_map`` entry for it, else ``{}``."""
    if "context" in keys and "context" not in field_map and not DEEPEVAL_KEYS.isdisjoint(keys):
        return _DEEPEVAL_CONTEXT
    return {}


def check_field_map(field_map: Mapping[str, str] | None) -> dict[str, str]:
    """Validate ``field_map`` (column -> canonical field); raises InvalidParameterError on a bad target."""
    from ..errors import InvalidParameterError

    if field_map is None:
        return {}
    if not isinstance(field_map, Mapping):
        raise InvalidParameterError(
            f"field_map: expected a mapping of column name -> field name, got {type(field_map).__name__}"
        )
    out: dict[str, str] = {}
    for column, target in field_map.items():
        if not isinstance(column, str) or not isinstance(target, str):
            raise InvalidParameterError(f"field_map: expected str -> str, got {column!r} -> {target!r}")
        target_c = canonical(target)
        if target_c not in CANONICAL_FIELDS:
            raise InvalidParameterError(
                f"field_map: {column!r} -> {target!r}: expected a target among "
                f"{', '.join(CANONICAL_FIELDS)} (or a RAGAS alias), got {target!r}"
            )
        out[column] = target_c
    return out


def check_columns(columns: list[str], field_map: Mapping[str, str], *, path: str) -> None:
    """File-level checks for formats with a header (CSV, Parquet): mapped columns exist, no
    mapped column collides with a present canonical one, and at least one field is evaluable."""
    missing = [c for c in field_map if c not in columns]
    if missing:
        raise InputError(
            f"field_map names column(s) {', '.join(map(repr, missing))} that the file does not have; "
            f"its columns are: {', '.join(map(repr, columns))}",
            path=path,
        )
    fields = [field_map.get(c) or canonical(c) for c in columns]
    doubled = sorted({f for f in fields if fields.count(f) > 1 and f in CANONICAL_FIELDS})
    if doubled:
        raise InputError(
            f"more than one column gives field(s) {', '.join(map(repr, doubled))} (through an alias or "
            "field_map); expected one column per field: drop or rename the others",
            path=path,
        )
    if not any(f in EVALUABLE_FIELDS for f in fields):
        raise InputError(_no_field_message(columns), path=path)


def _no_field_message(found: list[str]) -> str:
    shown = ", ".join(map(repr, found[:12])) + (", ..." if len(found) > 12 else "")
    return (
        f"no recognised field: expected at least one of {', '.join(EVALUABLE_FIELDS)} "
        f"(or a RAGAS or DeepEval alias such as user_input, response, retrieved_contexts, actual_output), found: "
        f"{shown or 'nothing'}. Map your own names with field_map={{'col': 'query'}} "
        "(CLI: --map col=query)"
    )


def _type_name(value: Any) -> str:
    return "null" if value is None else type(value).__name__


def _short(value: Any, limit: int = 60) -> str:
    text = repr(value)
    return text if len(text) <= limit else text[: limit - 3] + "..."


def loc_to_field(loc: tuple[int | str, ...]) -> str:
    """A pydantic error location as a field path: ``('contexts', 2, 'score')`` -> ``contexts[2].score``.

    Union-member tags that pydantic inserts (``list[str]``, ``function-after[...]``) are dropped.
    """
    out = ""
    for part in loc:
        if isinstance(part, int):
            out += f"[{part}]"
        elif "[" in part:
            continue
        else:
            out += f".{part}" if out else part
    return out


def _error_message(err: Mapping[str, Any]) -> str:
    etype = err.get("type", "")
    msg = str(err.get("msg", ""))
    value = err.get("input")
    if etype == "value_error":
        return msg.removeprefix("Value error, ")
    if etype == "extra_forbidden":
        return "unknown key"
    if etype == "missing":
        return "is required here"
    if etype in _EXPECTED:
        return f"expected {_EXPECTED[etype]}, got {_type_name(value)} {_short(value)}"
    return f"{msg} (got {_type_name(value)} {_short(value)})"


def from_validation_error(exc: ValidationError, *, path: str, line: int, where: str = "") -> InputError:
    """Translate pydantic's ``ValidationError`` into one :class:`InputError` (first problem named as
    the field; up to two more appended to the message)."""
    errors = exc.errors(include_url=False)
    first = errors[0]
    message = _error_message(first) + where
    for more in errors[1:3]:
        message += f"; also field {loc_to_field(tuple(more['loc']))!r}: {_error_message(more)}"
    if len(errors) > 3:
        message += f"; and {len(errors) - 3} more problem(s)"
    return InputError(message, path=path, line=line, field=loc_to_field(tuple(first["loc"])) or None)


@dataclass
class RowConverter:
    """Converts raw rows to samples for one file, remembering ids to reject duplicates.

    ``read`` gives the column renames and the longest text a row may hold; ``unit`` is the word
    for a position (``line`` or ``row``); the ``where`` argument of :meth:`convert` adds position
    detail to messages (a CSV row's file line).
    """

    path: str
    read: ReadOptions
    unit: str = "line"
    seen: dict[str, int] = field(default_factory=dict)
    _targets: dict[str, tuple[str, str | None]] = field(default_factory=dict, repr=False)

    @property
    def field_map(self) -> Mapping[str, str]:
        """Column name -> canonical field (the checked ``read.field_map``)."""
        return self.read.field_map

    @property
    def max_text_chars(self) -> int | None:
        """The longest text a row may hold (None: no limit)."""
        return self.read.max_text_chars

    def error(self, message: str, pos: int, field_name: str | None = None, where: str = "") -> InputError:
        """An InputError for the row at ``pos`` (``where`` is extra position detail)."""
        return InputError(message + where, path=self.path, line=pos, field=field_name)

    def _too_long(self, sample: Sample) -> tuple[str, int] | None:
        limit = self.max_text_chars
        if not limit:
            return None
        for fname in ("query", "answer", "reference"):
            text = getattr(sample, fname)
            if text is not None and len(text) > limit:
                return fname, len(text)
        for i, c in enumerate(sample.contexts):
            if c.text is not None and len(c.text) > limit:
                return f"contexts[{i}].text", len(c.text)
        return None

    def convert(self, record: Any, pos: int, where: str = "") -> Sample | InputError:
        """The :class:`Sample` for ``record`` at position ``pos``, or the InputError saying what is wrong."""
        if not isinstance(record, dict):
            return self.error(
                f"expected a JSON object (one sample per {self.unit}), got {_type_name(record)}", pos, where=where
            )
        data: dict[str, Any] = {}
        given_as: dict[str, str] = {}  # canonical field -> the column that gave it
        dialect = dialect_map(record, self.field_map)
        for key, value in record.items():
            key = str(key)
            resolved = (dialect[key], dialect[key]) if key in dialect else self._targets.get(key)
            if resolved is None:
                mapped = self.field_map.get(key, key)
                resolved = (mapped, canonical(mapped) if canonical(mapped) in CANONICAL_FIELDS else None)
                if len(self._targets) < 1024:  # column names repeat; stray keys must not grow memory
                    self._targets[key] = resolved
            target, fname = resolved
            if fname is None:  # a key ragmeter does not read: kept in the sample's metadata
                data[target] = value
                continue
            if value is None:
                continue  # null / empty cell = missing
            if fname in given_as:
                return self.error(
                    f"given twice, as {given_as[fname]!r} and as {key!r}: expected one column per field "
                    "(drop or rename one)", pos, fname, where,
                )
            given_as[fname] = key
            data[target] = value
        if not any(f in EVALUABLE_FIELDS for f in given_as):
            empty = [str(k) for k in record if canonical(self.field_map.get(str(k), str(k))) in EVALUABLE_FIELDS]
            message = (
                f"every field is empty (null or an empty cell): {', '.join(map(repr, empty))}; expected a "
                "value in at least one of " + ", ".join(EVALUABLE_FIELDS)
                if empty else _no_field_message(list(record))
            )
            return self.error(message, pos, where=where)
        meta = data.get("metadata")
        if isinstance(meta, str):
            with contextlib.suppress(json.JSONDecodeError):  # left as it is: rejected just below
                meta = data["metadata"] = json.loads(meta) if meta.strip() else {}
        if meta is not None and not isinstance(meta, dict):
            return self.error(
                f"expected an object (mapping), got {_type_name(meta)} {_short(meta)}", pos, "metadata", where
            )
        if data.get("id") == "":
            del data["id"]
        try:
            sample = Sample.from_record(data, default_id=str(pos))
        except ValidationError as exc:
            return from_validation_error(exc, path=self.path, line=pos, where=where)
        except (ValueError, TypeError, RecursionError) as exc:
            return self.error(f"could not read the row: {exc}", pos, where=where)
        too_long = self._too_long(sample)
        if too_long is not None:
            fname, size = too_long
            return self.error(
                f"{size:,} characters, more than the limit of {self.max_text_chars:,}: shorten it, or raise the "
                "limit with max_text_chars (CLI: --max-text-chars N; 0 = no limit)", pos, fname, where)
        first = self.seen.get(sample.id)
        if first is not None:
            return self.error(
                f"duplicate sample id {sample.id!r}: {self.unit} {first} has it too; expected unique ids "
                f"(fix one of the two, or drop the id column to number {self.unit}s automatically)",
                pos, "id", where,
            )
        self.seen[sample.id] = pos
        return sample
