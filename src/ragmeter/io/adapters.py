"""Inputs as users already hold them: :func:`as_samples` turns any of them into samples.

:func:`ragmeter.evaluate` calls it on whatever it is given, so each of these works as it is:

==================================================  ===========================================
given                                               read as
==================================================  ===========================================
a path (``str`` or ``os.PathLike``)                 :func:`~ragmeter.io.read_samples` (its format)
a ``dict``                                          one sample
a list (any iterable) of dicts                      one sample per dict
a pandas ``DataFrame``                              one sample per row; a *named* index gives ids
a Hugging Face ``datasets.Dataset``                 one sample per row
a RAGAS ``EvaluationDataset``                       one sample per ``SingleTurnSample``
RAGAS ``SingleTurnSample`` objects (or one)         ``user_input``, ``response``,
                                                    ``retrieved_contexts``, ``reference``,
                                                    ``reference_contexts`` (and the ``*_ids``)
a DeepEval ``EvaluationDataset``                    its ``test_cases`` (its ``goldens`` if none)
DeepEval ``LLMTestCase`` objects (or one)           ``input``, ``actual_output``,
                                                    ``expected_output``, ``retrieval_context``,
                                                    ``context`` (ideal context -> ``relevant``)
:class:`~ragmeter.types.Sample` objects             as they are
==================================================  ===========================================

Every adapter is duck-typed on attribute names: none of pandas, ``datasets``, RAGAS or DeepEval
is imported here. Rows become samples through the readers' own
:class:`~ragmeter.io.records.RowConverter`, so the rules are the files' rules (aliases,
``field_map``, null = absent, unique ids, a 1-based position as the default id) and a bad row
is an :class:`~ragmeter.errors.InputError` naming the source, the 1-based row, the field and
the exact index to look at: ``DataFrame:3: field 'contexts': expected a list ..., got str 'x'
(df.iloc[2])``. Dict keys and DataFrame / Dataset columns may use ragmeter's, RAGAS's or
DeepEval's names (:data:`ragmeter.types.FIELD_ALIASES`).
"""

from __future__ import annotations

import enum
import math
import os
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass
from typing import Any, Literal

from ..errors import InputError, InvalidParameterError
from ..types import FIELD_ALIASES, Sample
from .options import ReadOptions, read_options
from .records import DEFAULT_MAX_TEXT_CHARS, RowConverter

#: Rows a DataFrame is converted in at a time (its memory is never copied whole).
FRAME_CHUNK_ROWS = 1024

#: A RAGAS ``SingleTurnSample`` attribute -> the row key it becomes (an alias ragmeter reads).
RAGAS_FIELDS = {"user_input": "user_input", "response": "response", "retrieved_contexts": "retrieved_contexts",
                "reference": "reference", "reference_contexts": "reference_contexts"}
#: RAGAS attributes kept in ``metadata`` when set.
RAGAS_EXTRA = ("multi_responses", "rubrics", "persona_name", "query_style", "query_length")
#: A DeepEval ``LLMTestCase`` attribute -> the ragmeter field it gives.
DEEPEVAL_FIELDS = {"input": "query", "actual_output": "answer", "expected_output": "reference",
                   "retrieval_context": "contexts", "context": "relevant"}


@dataclass(frozen=True)
class _Source:
    """Where rows come from: ``name`` starts error messages (as a file path would) and
    ``index`` shows how to reach the row at a 0-based position (``df.iloc[{}]``)."""

    name: str
    index: str

    def where(self, i: int) -> str:
        return f" ({self.index.format(i)})"


def as_samples(
    data: Any,
    *,
    field_map: Mapping[str, str] | None = None,
    on_error: Literal["raise", "skip"] = "raise",
    max_text_chars: int | None = DEFAULT_MAX_TEXT_CHARS,
    read: ReadOptions | None = None,
) -> Iterator[Sample | InputError]:
    """The samples held by ``data`` (any input in this module's table), lazily.

    Parameters
    ----------
    data:
        A path, a dict, an iterable of dicts / ``Sample`` / RAGAS / DeepEval objects, a pandas
        DataFrame, a Hugging Face ``Dataset``, a RAGAS or DeepEval ``EvaluationDataset``.
    field_map:
        Your column name -> ragmeter field, as for :func:`~ragmeter.io.read_samples`
        (``{"question_text": "query"}``). RAGAS and DeepEval names need none.
    on_error:
        ``"raise"`` (default): the first bad row raises its :class:`~ragmeter.errors.InputError`;
        ``"skip"``: it is yielded in the sample's place, and :func:`ragmeter.evaluate` records it
        as an errored sample.
    max_text_chars:
        The longest text a row may hold (as for ``read_samples``; None: no limit).
    read:
        These options as one :class:`~ragmeter.io.ReadOptions` (then leave the keywords at their
        defaults); its ``format`` applies to a path.

    Returns
    -------
    An iterator of :class:`~ragmeter.types.Sample` (and, with ``on_error="skip"``, of
    ``InputError``). A row without an ``id`` gets its 1-based position.

    Raises
    ------
    InvalidParameterError
        ``data`` is none of the accepted kinds (at once, before any row is read), or a
        ``DatasetDict`` (pick a split).
    InputError
        A bad row (``on_error="raise"``), or a path that cannot be read.

    Examples
    --------
    >>> [s.query for s in as_samples([{"input": "q?", "actual_output": "a."}])]
    ['q?']
    >>> rows = [{"question": "q?", "contexts": ["c"]}, {"question": "q?", "contexts": 7}]
    >>> next(as_samples(rows))  # doctest: +ELLIPSIS
    Sample(id='1', query='q?', ...)
    >>> list(as_samples(rows))  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    ragmeter.errors.InputError: samples:2: field 'contexts': expected a list of strings ..., got int (samples[1])
    """
    opts = read_options(read, on_error=on_error, field_map=field_map, max_text_chars=max_text_chars)
    if isinstance(data, str | os.PathLike):
        from .readers import read_samples

        return read_samples(data, read=opts)
    source, rows = _rows_of(data)
    return _convert(source, rows, RowConverter(source.name, opts, unit="row"), opts.on_error)


def _rows_of(data: Any) -> tuple[_Source, Iterable[Any]]:
    """The source description and the raw rows of ``data`` (checked now, read lazily)."""
    if isinstance(data, Sample | InputError):
        return _Source(type(data).__name__, "the object given"), [data]
    if isinstance(data, Mapping):
        splits = [k for k, v in data.items() if hasattr(v, "column_names") and hasattr(v, "features")]
        if splits:
            raise InvalidParameterError(
                f"samples: expected one Dataset, got a DatasetDict of splits {splits}: pass one split, "
                f"e.g. data[{splits[0]!r}]"
            )
        return _Source("dict", "the dict given"), [data]
    if hasattr(data, "iloc") and hasattr(data, "columns") and hasattr(data, "to_dict"):
        return _Source("DataFrame", "df.iloc[{}]"), _frame_rows(data)
    if hasattr(data, "column_names") and hasattr(data, "features"):
        with_format = getattr(data, "with_format", None)
        rows = with_format(None) if callable(with_format) else data  # python objects, not numpy/torch
        return _Source(type(data).__name__, "ds[{}]"), rows
    if _foreign_kind(data) is not None:  # after DataFrame: a column "user_input" is an attribute there
        return _Source(type(data).__name__, "the object given"), [data]
    samples = getattr(data, "samples", None)
    if isinstance(samples, list) and not isinstance(data, list | tuple):
        return _Source(type(data).__name__, "dataset.samples[{}]"), samples
    cases = getattr(data, "test_cases", None)
    if isinstance(cases, list) and not isinstance(data, list | tuple):
        if not cases and getattr(data, "goldens", None):
            return _Source(type(data).__name__, "dataset.goldens[{}]"), list(data.goldens)
        return _Source(type(data).__name__, "dataset.test_cases[{}]"), cases
    if isinstance(data, Iterable) and not isinstance(data, bytes | bytearray):
        return _Source("samples", "samples[{}]"), data
    raise InvalidParameterError(
        "samples: expected a path, a dict, a list of dicts or Samples, a pandas DataFrame, a Hugging Face "
        f"Dataset, or RAGAS / DeepEval samples or datasets, got {type(data).__name__}"
    )


def _convert(source: _Source, rows: Iterable[Any], conv: RowConverter,
             on_error: str) -> Iterator[Sample | InputError]:
    for i, row in enumerate(rows):
        if isinstance(row, Sample | InputError):  # a bad row a reader already let through is recorded
            yield row
            continue
        item = _convert_one(source, row, i, conv)
        if isinstance(item, InputError) and on_error == "raise":
            raise item
        yield item


def _convert_one(source: _Source, row: Any, i: int, conv: RowConverter) -> Sample | InputError:
    """One raw row (a dict or a RAGAS / DeepEval object) at 0-based position ``i``."""
    where = source.where(i)
    kind = _foreign_kind(row)
    if kind is not None:
        try:
            record = _foreign_record(row, kind)
        except ValueError as exc:
            return conv.error(str(exc), i + 1, where=where)
        return _name_attribute(conv.convert(record, i + 1, where), type(row).__name__, kind)
    elif not isinstance(row, Mapping):
        return conv.error(
            f"expected a dict, a Sample, a RAGAS SingleTurnSample or a DeepEval LLMTestCase, got "
            f"{type(row).__name__}", i + 1, where=where)
    else:
        row = {k: _plain(v, top=True) for k, v in row.items()}
    return conv.convert(row, i + 1, where)


def _name_attribute(item: Sample | InputError, cls: str, kind: str) -> Sample | InputError:
    """An error on a foreign object's field also names the attribute it came from."""
    if not isinstance(item, InputError) or not item.field:
        return item
    root = item.field.split("[")[0].split(".")[0]
    names = DEEPEVAL_FIELDS if kind == "deepeval" else {a: FIELD_ALIASES.get(k, k) for a, k in RAGAS_FIELDS.items()}
    attr = next((a for a, f in names.items() if f == root), None)
    if attr is None:
        return item
    return InputError(f"{item.message} [{cls}.{attr}]", path=item.path, line=item.line, field=item.field)


def _foreign_kind(obj: Any) -> str | None:
    """``"deepeval"`` / ``"ragas"`` for an object shaped like an ``LLMTestCase`` / a
    ``SingleTurnSample`` (a dict or a class is neither)."""
    if isinstance(obj, Mapping | type | str):
        return None
    if hasattr(obj, "actual_output") and hasattr(obj, "input"):
        return "deepeval"
    if hasattr(obj, "user_input") and (hasattr(obj, "retrieved_contexts") or hasattr(obj, "reference")):
        return "ragas"  # a MultiTurnSample too (it has no retrieved_contexts): rejected with a reason
    return None


def _foreign_record(obj: Any, kind: str) -> dict[str, Any]:
    """The row a RAGAS or DeepEval sample object stands for (raises ValueError when it has none)."""
    row: dict[str, Any] = {}
    if kind == "deepeval":
        for attr, fname in DEEPEVAL_FIELDS.items():
            row[fname] = _plain(getattr(obj, attr, None), top=True)
        meta = getattr(obj, "additional_metadata", None)
        row["metadata"] = dict(meta) if isinstance(meta, Mapping) else ({"additional_metadata": meta} if meta else None)
        name = getattr(obj, "name", None)
        if name:
            row["metadata"] = {**(row["metadata"] or {}), "name": name}
        return row
    user_input = getattr(obj, "user_input", None)
    if isinstance(user_input, list):
        raise ValueError("a multi-turn sample (user_input is a list of messages): expected a single-turn "
                         "sample (SingleTurnSample); ragmeter evaluates one query and its answer per sample")
    for attr, key in RAGAS_FIELDS.items():
        row[key] = _plain(getattr(obj, attr, None), top=True)
    ids = getattr(obj, "retrieved_context_ids", None)
    if ids is not None:
        row["retrieved_contexts"] = _with_ids(list(ids), row["retrieved_contexts"])
    ref_ids = getattr(obj, "reference_context_ids", None)
    if ref_ids is not None and row["reference_contexts"] is None:
        row["reference_contexts"] = _plain(ref_ids, top=True)
    meta = {a: _plain(getattr(obj, a, None)) for a in RAGAS_EXTRA if getattr(obj, a, None) is not None}
    row["metadata"] = meta or None
    return row


def _with_ids(ids: list[Any], texts: Any) -> list[Any]:
    """RAGAS's ``retrieved_context_ids`` joined to ``retrieved_contexts`` as ``{id, text}`` objects."""
    if texts is None:
        return [{"id": i} for i in ids]
    if not isinstance(texts, list) or len(texts) != len(ids):
        got = f"{len(texts)} contexts" if isinstance(texts, list) else type(texts).__name__
        raise ValueError(f"retrieved_context_ids has {len(ids)} ids but retrieved_contexts holds {got}: "
                         "expected one id per context")
    return [{"id": i, "text": t} if isinstance(t, str) else t for i, t in zip(ids, texts, strict=True)]


def _frame_rows(df: Any) -> Iterator[dict[str, Any]]:
    """A pandas DataFrame's rows as dicts, :data:`FRAME_CHUNK_ROWS` at a time; a named index
    (``df.set_index("id")``) becomes the ``id`` when no column gives one."""
    index_name = getattr(df.index, "name", None)
    use_index = index_name is not None and "id" not in [str(c) for c in df.columns]
    for start in range(0, len(df), FRAME_CHUNK_ROWS):
        part = df.iloc[start:start + FRAME_CHUNK_ROWS]
        labels = list(part.index) if use_index else None
        for j, record in enumerate(part.to_dict("records")):
            if labels is not None:
                record["id"] = labels[j]
            yield record


def _plain(value: Any, *, top: bool = False) -> Any:
    """``value`` as plain Python: numpy arrays -> lists, numpy scalars -> numbers, enums -> their
    value, and (``top``: a cell, not an item inside one) pandas' missing markers -> None."""
    if value is None or isinstance(value, str | bool | int):
        return value
    if isinstance(value, float):
        return None if top and math.isnan(value) else value
    if isinstance(value, Mapping):
        return {k: _plain(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_plain(v) for v in value]
    if isinstance(value, enum.Enum):
        return value.value
    if hasattr(value, "dtype") and hasattr(value, "tolist"):  # numpy array or scalar
        return _plain(value.tolist(), top=top)
    if top and type(value).__name__ in ("NAType", "NaTType"):
        return None
    return value


def keep_inputs(items: Iterable[Sample | InputError],
                into: list[Sample | None] | None) -> Iterator[Sample | InputError]:
    """``items`` as they are, each sample also appended to ``into`` (None for a bad row) unless
    ``into`` is None: how a run keeps its inputs for ``RunResult.to_pandas(inputs=True)``."""
    if into is None:
        yield from items
        return
    for item in items:
        into.append(item if isinstance(item, Sample) else None)
        yield item


#: The input columns of ``RunResult.to_pandas(inputs=True)``, in order (``context_ids`` only when
#: a context has an id).
INPUT_COLUMNS = ("query", "answer", "contexts", "context_ids", "reference", "relevant", "metadata")


def input_columns(inputs: list[Sample | None]) -> dict[str, list[Any]]:
    """``{column: values}`` of the samples' input fields (:data:`INPUT_COLUMNS`): None where a
    sample did not give the field and for a bad row (None in ``inputs``); ``contexts`` holds the
    texts (``""`` for an id-only context), ``context_ids`` the ids."""
    cols: dict[str, list[Any]] = {c: [] for c in INPUT_COLUMNS}
    with_ids = any(s is not None and any(c.id is not None for c in s.contexts) for s in inputs)
    for s in inputs:
        if s is None:
            for values in cols.values():
                values.append(None)
            continue
        has_contexts = s.has("contexts")
        cols["query"].append(s.query if s.has("query") else None)
        cols["answer"].append(s.answer)
        cols["contexts"].append(s.context_texts if has_contexts else None)
        cols["context_ids"].append([c.id for c in s.contexts] if has_contexts else None)
        cols["reference"].append(s.reference)
        cols["relevant"].append(s.relevant)
        cols["metadata"].append(s.metadata or None)
    if not with_ids:
        del cols["context_ids"]
    return cols
