"""Raw records -> one Arrow record batch for the columnar kernels: the exact fallback of the text formats.

The JSONL and CSV sources (:mod:`._jsonl`, :mod:`._csv`) parse a block with Arrow first; where
Arrow's parser refuses it, the block's rows are read by the reader's own rules
(:mod:`ragmeter.io.readers`) and :func:`records_batch` builds the batch from those records. A row
goes to the kernels only when :func:`row_ok` says its values have exactly the types the batch is
built with; every other row is *forced* to the ``Sample`` path, which words what is wrong.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
from numpy.typing import NDArray

from ..io.records import dialect_map

#: The fields the kernels read (anything else a row gives is checked on the Sample path).
KERNEL_FIELDS = ("id", "query", "answer", "reference", "contexts", "relevant")


def kernel_types() -> dict[str, Any]:
    """The Arrow type of each kernel field as a text parser reads it (``relevant``: a list of ids)."""
    import pyarrow as pa

    ctx = pa.list_(pa.struct([("id", pa.string()), ("text", pa.string()), ("score", pa.float64())]))
    return {"id": pa.string(), "query": pa.string(), "answer": pa.string(), "reference": pa.string(),
            "contexts": ctx, "relevant": pa.list_(pa.string())}


def _is_num(v: Any) -> bool:
    return isinstance(v, int | float) and not isinstance(v, bool)


def row_ok(row: dict[str, Any]) -> bool:
    """The row's values have the types the batch is built with (else the Sample path words what is
    wrong); rewrites ``contexts`` (a text: ``{"text": ...}``) and ``relevant`` (id -> grade pairs)."""
    for f in ("id", "query", "answer", "reference"):
        if row.get(f) is not None and not isinstance(row[f], str):
            return False
    ctx = row.get("contexts")
    if ctx is not None:
        if not isinstance(ctx, list):
            return False
        ctx = row["contexts"] = [{"text": c} if isinstance(c, str) else c for c in ctx]
        for c in ctx:
            if not isinstance(c, dict) or not c.keys() <= {"id", "text", "score"}:
                return False
            if any(c.get(k) is not None and not isinstance(c[k], str) for k in ("id", "text")):
                return False
            if c.get("score") is not None and not _is_num(c["score"]):
                return False
    rel = row.get("relevant")
    if isinstance(rel, list) and all(isinstance(x, str) for x in rel):
        row["relevant"] = [(x, 1.0) for x in rel]
    elif isinstance(rel, dict) and all(isinstance(k, str) and _is_num(v) for k, v in rel.items()):
        row["relevant"] = list(rel.items())
    elif rel is not None:
        return False
    return True


def records_batch(parsed: list[Any], fields: dict[str, str], fmap: dict[str, str], types: dict[str, Any],
                  decode: Callable[[dict[str, Any]], bool] | None = None) -> tuple[Any, NDArray[np.bool_]]:
    """The record batch (columns: the canonical ``fields``, of ``types``; ``relevant`` as a map
    id -> grade) of the raw records ``parsed``, and the rows forced to the Sample path: a record that
    is not an object, a non-null key other than those in ``fields`` (a canonical field given
    otherwise, a DeepEval ``context``, or a key kept as metadata on that path), a value
    :func:`row_ok` refuses, or one ``decode`` (which rewrites the row in place) refuses.
    ``fields`` maps each canonical field to the key that gives it."""
    import pyarrow as pa

    forced = np.zeros(len(parsed), dtype=bool)
    cols: dict[str, list[Any]] = {f: [] for f in fields}
    keys = set(fields.values())
    for i, rec in enumerate(parsed):
        ok = isinstance(rec, dict) and all(k in keys or rec[k] is None for k in rec) and not dialect_map(rec, fmap)
        row = {f: rec.get(k) for f, k in fields.items()} if ok else {}
        if not ok or (decode is not None and not decode(row)) or not row_ok(row):
            forced[i] = True
            row = {}
        for f in fields:
            cols[f].append(row.get(f))
    schema = pa.schema([(f, pa.map_(pa.string(), pa.float64())) if f == "relevant" else (f, types[f])
                        for f in fields])
    try:
        batch = pa.RecordBatch.from_pydict(cols, schema=schema) if fields else None
    except (pa.ArrowException, TypeError, ValueError, OverflowError):
        batch, forced = None, np.ones(len(parsed), dtype=bool)
    return batch, forced
