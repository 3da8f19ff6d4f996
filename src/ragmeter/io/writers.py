"""Writing samples to JSONL (optionally gzip-compressed) or Parquet: :func:`write_samples`.

What is written reads back with :func:`~ragmeter.io.read_samples` into equal samples. JSONL
lines carry only the fields that are set. Parquet has a fixed schema: ``id``, ``query``,
``answer``, ``reference`` (strings), ``contexts`` (list of ``{id, text, score, metadata}`` structs,
the context's metadata JSON-encoded), and ``relevant`` and ``metadata`` as JSON-encoded strings
(a column cannot hold both a list and a mapping); it needs pyarrow (the ``arrow`` extra). Both
stream, so memory stays bounded.
"""

from __future__ import annotations

import gzip
import json
import os
from collections.abc import Iterable, Iterator, Mapping
from typing import Any

from .._optional import require
from ..errors import InvalidParameterError
from ..types import Sample
from .readers import detect_format

PARQUET_BATCH_ROWS = 4096


def sample_record(sample: Sample) -> dict[str, Any]:
    """The JSON object of ``sample`` as written to JSONL (unset fields left out)."""
    record = sample.model_dump(mode="json", exclude_none=True)
    for absent in ("query", "contexts"):  # absent stays absent (not "" / []): it reads back the same
        if not sample.has(absent):
            record.pop(absent, None)
    if not record.get("metadata"):
        record.pop("metadata", None)
    for c in record.get("contexts", ()):
        if not c.get("metadata"):
            c.pop("metadata", None)
    return record


def _as_samples(samples: Iterable[Sample | Mapping[str, Any]]) -> Iterator[Sample]:
    for i, s in enumerate(samples):
        if isinstance(s, Sample):
            yield s
        elif isinstance(s, Mapping):
            yield Sample.from_record(dict(s), default_id=str(i + 1))
        else:
            raise InvalidParameterError(
                f"write_samples: item {i + 1}: expected a Sample or a dict, got {type(s).__name__} "
                "(filter out InputError items read with on_error='skip' first)"
            )


def write_samples(
    samples: Iterable[Sample | Mapping[str, Any]],
    path: str | os.PathLike[str],
    *,
    format: str | None = None,
) -> int:
    """Write ``samples`` to ``path`` as JSONL (``.jsonl``, ``.jsonl.gz``) or Parquet (``.parquet``).

    Dicts are converted with :meth:`Sample.from_record` (a dict without ``id`` gets its 1-based
    position). Returns the number of samples written.
    """
    spath = os.fspath(path)
    fmt = detect_format(spath, format)
    if fmt == "jsonl":
        return _write_jsonl(_as_samples(samples), spath)
    if fmt == "parquet":
        return _write_parquet(_as_samples(samples), spath)
    raise InvalidParameterError(f"write_samples: expected a .jsonl or .parquet path, got format {fmt!r}")


def _write_jsonl(samples: Iterator[Sample], path: str) -> int:
    opener: Any = gzip.open if path.lower().endswith(".gz") else open
    n = 0
    with opener(path, "wt", encoding="utf-8") as fh:
        for s in samples:
            fh.write(json.dumps(sample_record(s), ensure_ascii=False) + "\n")
            n += 1
    return n


def _parquet_schema() -> Any:
    import pyarrow as pa

    context = pa.struct([("id", pa.string()), ("text", pa.string()), ("score", pa.float64()),
                         ("metadata", pa.string())])
    return pa.schema([
        ("id", pa.string()), ("query", pa.string()), ("answer", pa.string()),
        ("contexts", pa.list_(context)), ("reference", pa.string()),
        ("relevant", pa.string()), ("metadata", pa.string()),
    ])


def _parquet_row(s: Sample) -> dict[str, Any]:
    return {
        "id": s.id,
        "query": s.query if s.has("query") else None,
        "answer": s.answer,
        "contexts": [{"id": c.id, "text": c.text, "score": c.score,
                      "metadata": json.dumps(c.metadata, ensure_ascii=False) if c.metadata else None}
                     for c in s.contexts] if s.has("contexts") else None,
        "reference": s.reference,
        "relevant": None if s.relevant is None else json.dumps(s.relevant, ensure_ascii=False),
        "metadata": json.dumps(s.metadata, ensure_ascii=False) if s.metadata else None,
    }


def _write_parquet(samples: Iterator[Sample], path: str) -> int:
    pq = require("pyarrow.parquet", f"writing the Parquet file {path}")
    import pyarrow as pa

    schema = _parquet_schema()
    n = 0
    with pq.ParquetWriter(path, schema) as writer:
        rows: list[dict[str, Any]] = []
        for s in samples:
            rows.append(_parquet_row(s))
            if len(rows) >= PARQUET_BATCH_ROWS:
                writer.write_table(pa.Table.from_pylist(rows, schema=schema))
                n += len(rows)
                rows = []
        if rows or n == 0:
            writer.write_table(pa.Table.from_pylist(rows, schema=schema))
            n += len(rows)
    return n
