"""The data model: what goes into an evaluation (:class:`Sample`) and what comes out (:class:`MetricResult`).

A ``Sample`` is one RAG interaction: the query, the generated answer, the retrieved contexts in
rank order, an optional reference answer and optional relevance labels. Column names that RAGAS
users already have are accepted as aliases (``user_input``/``question`` -> ``query``, ``response``
-> ``answer``, ``retrieved_contexts`` -> ``contexts``, ``ground_truth`` -> ``reference``,
``reference_contexts`` -> ``relevant``), and so are DeepEval's (``input``, ``actual_output``,
``expected_output``, ``retrieval_context``; its ``context`` is read as ``relevant`` only in a row
that also has one of the others: :func:`ragmeter.io.records.dialect_map`). Unknown fields are kept
in ``metadata``.
"""

from __future__ import annotations

import ast
import contextlib
import json
import math
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from .errors import error_info
from .frameworks import context_record

#: Input column -> canonical field. The canonical names map to themselves.
FIELD_ALIASES: dict[str, str] = {
    "user_input": "query",
    "question": "query",
    "response": "answer",
    "retrieved_contexts": "contexts",
    "ground_truth": "reference",
    "reference_contexts": "relevant",
    # DeepEval (LLMTestCase) names
    "input": "query",
    "actual_output": "answer",
    "expected_output": "reference",
    "retrieval_context": "contexts",
}
CANONICAL_FIELDS = ("id", "query", "answer", "contexts", "reference", "relevant", "metadata")


def finite_number(value: Any, what: str = "number") -> float:
    """``value`` (a number, not a bool) as a finite float, else ValueError ("expected a finite
    <what>, got ..."). An integer too large for a float (309 digits or more) is refused like the
    infinity a float would read it as.

    >>> finite_number(2), finite_number(0.5)
    (2.0, 0.5)
    >>> finite_number(10**400, "relevance grade")
    Traceback (most recent call last):
    ValueError: expected a finite relevance grade, got an integer of 401 digits
    """
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise ValueError(f"expected a number, got {value!r}")
    try:
        number = float(value)
    except OverflowError:
        try:
            size = f"{len(str(abs(value)))} digits"
        except ValueError:  # Python refuses to print an integer of more than 4,300 digits
            size = "more than 4,300 digits"
        raise ValueError(f"expected a finite {what}, got an integer of {size}") from None
    if not math.isfinite(number):
        raise ValueError(f"expected a finite {what}, got {number!r}")
    return number


def relevance_grade(value: Any) -> float:
    """``value`` as a relevance grade: the one rule of every reader of grades (rows of any format,
    qrels): a number that is finite as a float (:func:`finite_number`), else ValueError."""
    return finite_number(value, "relevance grade")


#: The keys of a context ragmeter reads (and validates); any other key is kept in its ``metadata``.
CONTEXT_FIELDS = ("id", "text", "score")


class Context(BaseModel):
    """One retrieved chunk: an id, its text and the retriever's score (each optional, one of id/text
    needed), and its ``metadata``: every other key the context came with (``source``, ``title``,
    ``url``, ``page``, a ``metadata`` mapping's keys), kept as given and never read by a metric.

    A LangChain / LlamaIndex / Haystack document is read as one (:mod:`ragmeter.frameworks`).
    """

    model_config = ConfigDict(extra="forbid", frozen=True)

    id: str | None = None
    text: str | None = None
    score: float | None = None
    metadata: dict[str, Any] = Field(default_factory=dict)

    @model_validator(mode="before")
    @classmethod
    def _extra_keys_are_metadata(cls, data: Any) -> Any:
        data = context_record(data)
        if not isinstance(data, dict) or data.keys() <= {"id", "text", "score"}:
            return data
        out = {k: data[k] for k in CONTEXT_FIELDS if k in data}
        meta = data.get("metadata")
        if isinstance(meta, str) and meta.startswith("{"):  # JSON-encoded (a Parquet / CSV cell)
            with contextlib.suppress(json.JSONDecodeError, RecursionError):
                meta = json.loads(meta)
        merged: dict[str, Any] = dict(meta) if isinstance(meta, dict) else ({} if meta is None else {"metadata": meta})
        merged.update((str(k), v) for k, v in data.items() if k not in CONTEXT_FIELDS and k != "metadata")
        out["metadata"] = merged
        return out

    @field_validator("id", mode="before")
    @classmethod
    def _id_to_str(cls, v: Any) -> Any:
        return str(v) if isinstance(v, int) and not isinstance(v, bool) else v

    @field_validator("score")
    @classmethod
    def _finite_score(cls, v: float | None) -> float | None:
        return None if v is None else finite_number(v, "score")

    @model_validator(mode="after")
    def _needs_id_or_text(self) -> Context:
        if self.id is None and self.text is None:
            keys = ", ".join(map(repr, self.metadata)) or "none"
            raise ValueError(f"a context needs an 'id' or a 'text' (its other keys: {keys}; "
                             "a key read as the text needs renaming to 'text')")
        return self


class Sample(BaseModel):
    """One RAG interaction to evaluate.

    ``relevant`` is either a list of labelled relevant chunks (ids or texts; each grade 1), or a
    mapping ``id -> grade`` (graded relevance, e.g. 0..3; fractional grades are kept as they are;
    grades <= 0 are judged non-relevant).
    """

    model_config = ConfigDict(extra="forbid")

    id: str
    query: str = ""
    answer: str | None = None
    contexts: list[Context] = Field(default_factory=list)
    reference: str | None = None
    relevant: list[str] | dict[str, float] | None = None
    metadata: dict[str, Any] = Field(default_factory=dict)

    @model_validator(mode="before")
    @classmethod
    def _null_is_absent(cls, data: Any) -> Any:
        # a null query or contexts is the same as an absent one (see :meth:`has`)
        if isinstance(data, dict) and (data.get("contexts", 0) is None or data.get("query", 0) is None):
            data = {k: v for k, v in data.items() if not (k in ("contexts", "query") and v is None)}
        return data

    @field_validator("id", mode="before")
    @classmethod
    def _id_to_str(cls, v: Any) -> Any:
        return str(v) if isinstance(v, int) and not isinstance(v, bool) else v

    def has(self, field: str) -> bool:
        """True when the row gave ``field`` (``context_texts`` stands for ``contexts``).

        *Absent* (no such key, or null) is not *empty*: ``contexts: []`` is a retriever that
        returned nothing (a retrieval metric scores it 0), a missing ``contexts`` says nothing
        (the metric is undefined with the reason ``no contexts field``). ``query`` and
        ``contexts`` count as given when they were set; ``answer``, ``reference`` and
        ``relevant`` when they are not None.
        """
        if field in ("contexts", "context_texts", "query"):
            return ("contexts" if field == "context_texts" else field) in self.model_fields_set
        return getattr(self, field, None) is not None

    @field_validator("contexts", mode="before")
    @classmethod
    def _contexts(cls, v: Any) -> Any:
        if v is None:
            return []
        if isinstance(v, str):
            v = _decode_json_list(v, "contexts")
        if not isinstance(v, list | tuple):
            raise ValueError(f"expected a list of strings or {{id, text, score}} objects, got {_tname(v)}")
        return [{"text": c} if isinstance(c, str) else c for c in v]

    @field_validator("relevant", mode="before")
    @classmethod
    def _relevant(cls, v: Any) -> Any:
        if v is None:
            return None
        if isinstance(v, str):
            v = _decode_json_list(v, "relevant", allow_dict=True)
        if isinstance(v, dict):
            out: dict[str, float] = {}
            for key, grade in v.items():
                try:
                    out[str(key)] = relevance_grade(grade)
                except ValueError as exc:
                    raise ValueError(f"grade of {key!r}: {exc}") from None
            return out
        if isinstance(v, list | tuple):
            items = []
            for item in v:
                if isinstance(item, dict) and ("id" in item or "text" in item):
                    item = item.get("id", item.get("text"))
                if isinstance(item, int) and not isinstance(item, bool):
                    item = str(item)
                if not isinstance(item, str):
                    raise ValueError(f"expected ids or texts, got an item of type {_tname(item)}")
                items.append(item)
            return items
        raise ValueError(f"expected a list of ids/texts or a mapping id -> grade, got {_tname(v)}")

    @classmethod
    def from_record(cls, record: dict[str, Any], *, default_id: str | None = None) -> Sample:
        """Build a sample from a raw row, mapping aliases and moving unknown fields into metadata.

        Raises pydantic's ``ValidationError`` on a wrong type; :mod:`ragmeter.io` turns that into an
        :class:`~ragmeter.errors.InputError` that names the file, line and field.
        """
        data: dict[str, Any] = {}
        metadata: dict[str, Any] = dict(record.get("metadata") or {})
        for key, value in record.items():
            if key == "metadata":
                continue
            canonical = FIELD_ALIASES.get(key, key)
            if canonical in CANONICAL_FIELDS:
                if canonical in data and data[canonical] is not None and value is None:
                    continue
                data[canonical] = value
            else:
                metadata[key] = value
        if data.get("id") is None and default_id is not None:
            data["id"] = default_id
        data["metadata"] = metadata
        return cls.model_validate(data)

    def input_metadata(self) -> dict[str, Any]:
        """What ``results.jsonl`` keeps of this sample's inputs beside its results: ``metadata``
        (the row's keys ragmeter does not read) and ``context_metadata`` (one mapping per context,
        in rank order) when there are any, within the details budget (:func:`bound_details`);
        ``{}`` when the row has neither. A null value is left out (null is absent, as everywhere)."""
        out: dict[str, Any] = {}
        meta = _given(self.metadata)
        if meta:
            out["metadata"] = meta
        ctx = [_given(c.metadata) for c in self.contexts]
        if any(ctx):
            out["context_metadata"] = ctx
        return bound_details(out) if out else out

    @property
    def context_texts(self) -> list[str]:
        """The retrieved contexts' texts (empty string for an id-only context)."""
        return [c.text or "" for c in self.contexts]


def _given(meta: dict[str, Any]) -> dict[str, Any]:
    """``meta`` without its null values."""
    return meta if None not in meta.values() else {k: v for k, v in meta.items() if v is not None}


def _tname(v: Any) -> str:
    return type(v).__name__


def _reject_constant(name: str) -> Any:
    raise ValueError(f"{name} is not a number ragmeter accepts: expected a finite number")


def _decode_json_list(v: str, field: str, allow_dict: bool = False) -> Any:
    """Decode a JSON-encoded list (how CSV files carry list columns).

    A Python literal (``['a', 'b']``, what pandas ``to_csv`` writes for a list column) is accepted
    too, parsed with :func:`ast.literal_eval` (literals only: nothing is ever evaluated).
    """
    s = v.strip()
    if not s:
        return []
    if s[0] in "[{":
        try:
            return json.loads(s, parse_constant=_reject_constant)
        except json.JSONDecodeError as exc:
            literal = _python_literal(s)
            if literal is not None:
                return literal
            raise ValueError(f"could not decode the JSON-encoded {field}: {exc.msg} at char {exc.pos} "
                             "(expected JSON such as [\"a\", \"b\"], or a Python list literal as pandas "
                             "to_csv writes it)") from exc
        except RecursionError as exc:
            raise ValueError(f"the JSON-encoded {field} is nested too deeply") from exc
    shape = "a list or a mapping" if allow_dict else "a list"
    raise ValueError(f"expected {shape} (JSON-encoded in CSV), got a plain string")


def _python_literal(s: str) -> list[Any] | dict[Any, Any] | None:
    """``s`` as a Python list / dict literal of plain values (None when it is not one)."""
    try:
        value = ast.literal_eval(s)
    except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
        return None
    if isinstance(value, tuple):
        value = list(value)
    return value if isinstance(value, list | dict) else None


class ErrorInfo(BaseModel):
    """A typed error recorded on one sample's metric (never a score of 0)."""

    model_config = ConfigDict(extra="allow")

    type: str
    message: str


class MetricResult(BaseModel):
    """One metric's outcome on one sample.

    ``score`` is in [0, 1] (a rate metric says so in its docs), or ``None`` when the metric is
    undefined for this sample (``reason`` says why) or errored (``error`` says how). A score that
    is not a finite number (NaN, an infinity) is no score: the result becomes an error saying so.
    """

    model_config = ConfigDict(extra="forbid")

    name: str
    score: float | None
    reason: str = ""
    details: dict[str, Any] = Field(default_factory=dict)
    error: ErrorInfo | None = None
    version: str = ""

    @model_validator(mode="after")
    def _finite_score(self) -> MetricResult:
        if self.score is not None and not math.isfinite(self.score):
            exc = ValueError(f"metric {self.name!r} computed a score that is not a finite number ({self.score}); "
                             "recorded as an error, never as a number")
            self.score, self.reason, self.error = None, f"error: {exc}", ErrorInfo(**error_info(exc))
        return self

    @property
    def status(self) -> str:
        """``"scored"``, ``"undefined"`` or ``"error"``."""
        if self.error is not None:
            return "error"
        return "undefined" if self.score is None else "scored"

    @classmethod
    def from_error(cls, name: str, version: str, exc: BaseException) -> MetricResult:
        """The result recorded when computing metric ``name`` raised ``exc``: no score, the error
        typed (:func:`ragmeter.errors.error_info`), ``reason`` ``"error: <message>"``."""
        return cls(name=name, score=None, reason=f"error: {exc}", error=ErrorInfo(**error_info(exc)),
                   version=version)

    def to_record(self) -> dict[str, Any]:
        """The per-metric object stored in ``results.jsonl``, within the details budget
        (:func:`bound_details`: a 5 MB answer never becomes a 400 MB results file)."""
        return {
            "score": self.score,
            "reason": clip(self.reason, MAX_STORED_CHARS),
            "error": None if self.error is None else bound_details(self.error.model_dump()),
            "details": bound_details(self.details),
            "version": self.version,
        }


#: Longest string stored in a result (reason, details, error message), in characters.
MAX_STORED_CHARS = 2_000
#: Most items stored per list in a result's details (a ranking of more contexts is cut too).
MAX_STORED_ITEMS = 1_000
#: Key under which :func:`bound_details` lists what it cut.
TRUNCATED_KEY = "truncated"


def clip(text: str, limit: int = MAX_STORED_CHARS) -> str:
    """``text`` cut to ``limit`` characters, with a note of how many were left out."""
    if len(text) <= limit:
        return text
    return text[:limit] + f"... [{len(text) - limit:,} more characters not stored]"


def json_safe(value: Any) -> Any:
    """``value`` as strict JSON can hold it, at any depth: a float that is not finite (NaN, an
    infinity) is None, an integer too long to print (over 4,300 digits) is a text saying so;
    everything else is returned as it is (itself when nothing changes).

    >>> json_safe({"a": [1.5, float("nan")], "b": float("-inf")})
    {'a': [1.5, None], 'b': None}
    """
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    if isinstance(value, int) and not isinstance(value, bool) and value.bit_length() > 14_000:
        try:
            str(value)
        except ValueError:
            return "an integer of more than 4,300 digits"
        return value
    if isinstance(value, dict):
        out = {k: json_safe(x) for k, x in value.items()}
        return value if all(out[k] is value[k] for k in value) else out
    if isinstance(value, list | tuple):
        items = [json_safe(x) for x in value]
        return value if all(a is b for a, b in zip(items, value, strict=True)) else items
    return value


def bound_details(details: dict[str, Any]) -> dict[str, Any]:
    """``details`` with every string cut to :data:`MAX_STORED_CHARS` and every list to
    :data:`MAX_STORED_ITEMS` items; what was cut is listed under ``details["truncated"]``
    (``"sentences: 1,000 of 62,345 items kept"``), and every value JSON cannot hold made JSON
    (:func:`json_safe`: a NaN or an infinity is null). Returns ``details`` itself when nothing is
    over budget and all is JSON (the usual case: no copy)."""
    try:  # the usual case, decided in C: a details object this short holds nothing over budget
        if len(json.dumps(details, ensure_ascii=False, allow_nan=False, default=str)) <= MAX_STORED_CHARS:
            return details
    except (TypeError, ValueError):
        pass
    notes: list[str] = []

    def walk(v: Any, path: str) -> Any:
        if isinstance(v, str):
            if len(v) > MAX_STORED_CHARS:
                notes.append(f"{path}: {MAX_STORED_CHARS:,} of {len(v):,} characters kept")
                return clip(v)
            return v
        if isinstance(v, dict):
            out = {k: walk(x, f"{path}.{k}" if path else str(k)) for k, x in v.items()}
            return v if all(out[k] is v[k] for k in v) else out
        if isinstance(v, list | tuple):
            items = v[:MAX_STORED_ITEMS]
            if len(v) > MAX_STORED_ITEMS:
                notes.append(f"{path}: {MAX_STORED_ITEMS:,} of {len(v):,} items kept")
            out_l = [walk(x, f"{path}[]") for x in items]
            return v if len(v) <= MAX_STORED_ITEMS and all(a is b for a, b in zip(out_l, v, strict=True)) \
                else out_l
        return json_safe(v)

    bounded = walk(details, "")
    if notes:
        bounded = dict(bounded)
        bounded[TRUNCATED_KEY] = notes[:20]
    return bounded
