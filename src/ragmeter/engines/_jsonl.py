"""The columnar engine over JSONL: blocks of lines become Arrow record batches for the same kernels.

:func:`evaluate_jsonl` reads the file in blocks of :data:`BLOCK_LINES` non-blank lines. A block is
parsed by ``pyarrow.json`` with an explicit schema for the fields the kernels read (``contexts``
as ``{id, text, score}`` structs, ``relevant`` as a list of ids; other keys inferred). Where that
parser refuses the block (a ``relevant`` given as an id -> grade object, which Arrow's JSON reader
cannot read as a map; a type it does not expect; a malformed line; a lone surrogate escape, which
only Python's parser rejects the way the reader does) the block's lines are parsed one by one with
:func:`ragmeter.io.readers.jsonl_record` (the reader's own rules) and the batch built from those
records. Either way a row the kernels cannot take goes to the ``Sample`` path through the reader's
:class:`~ragmeter.io._records.RowConverter` with the line's raw record, so output, ids (a row
without id: its line number) and per-row errors (file, line, field) are those of
:func:`ragmeter.evaluate` over :func:`ragmeter.io.read_samples`.
"""

from __future__ import annotations

import io
import os
import re
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.typing import NDArray

from ..errors import EmptyInputError, InputError
from ..evaluator import plan
from ..io._records import DEFAULT_MAX_TEXT_CHARS, RowConverter, canonical, check_field_map
from ..io.readers import _open_binary, jsonl_record, read_samples
from ..results import RunResult, RunWriter
from ..types import CANONICAL_FIELDS
from ._arrow import BatchScores, resolve_columns, score_batch
from .columnar import ColumnarSink, retrieval_evaluators

#: Non-blank lines per block (one Arrow record batch).
BLOCK_LINES = 16384
_SURROGATE = re.compile(rb"\\u[dD][89a-fA-F]")
#: A row's keys that must not reach the kernels unseen (anything but these goes to the Sample path).
_KERNEL_FIELDS = ("id", "contexts", "relevant", "query", "answer", "reference", "metadata")


@dataclass
class JsonRows:
    """One block of JSONL lines as a record batch, with each row's line number and raw record."""

    batch: Any
    lines: list[bytes]
    positions: list[int]
    path: str
    forced_slow: NDArray[np.bool_] | None = None
    parsed: list[Any] | None = None

    @property
    def num_rows(self) -> int:
        """Rows (non-blank lines) in the block."""
        return len(self.lines)

    def position(self, i: int) -> int:
        """The line number of row ``i`` (its default id and the line errors name)."""
        return self.positions[i]

    def records(self, rows: list[int]) -> list[Any]:
        """The raw records of ``rows`` as the reader parses them (an InputError for a bad line)."""
        if self.parsed is not None:
            return [self.parsed[i] for i in rows]
        return [jsonl_record(self.lines[i], self.positions[i], self.path) for i in rows]


def _schema(fmap: dict[str, str], names: Sequence[str]) -> Any:
    """The explicit part of the Arrow schema: the kernels' fields under the file's key names."""
    import pyarrow as pa

    ctx = pa.list_(pa.struct([("id", pa.string()), ("text", pa.string()), ("score", pa.float64())]))
    types = {"id": pa.string(), "query": pa.string(), "answer": pa.string(), "reference": pa.string(),
             "contexts": ctx, "relevant": pa.list_(pa.string())}
    return pa.schema([(n, types[canonical(fmap.get(n, n))]) for n in names
                      if canonical(fmap.get(n, n)) in types])


def _blocks(path: str) -> Iterator[tuple[list[bytes], list[int]]]:
    """Blocks of non-blank lines (each ending with a newline) and their line numbers."""
    lines: list[bytes] = []
    positions: list[int] = []
    with _open_binary(path) as fh:
        for lineno, raw in enumerate(fh, start=1):
            if lineno == 1:
                raw = raw.removeprefix(b"\xef\xbb\xbf")
            if not raw.strip():
                continue
            lines.append(raw if raw.endswith(b"\n") else raw + b"\n")
            positions.append(lineno)
            if len(lines) >= BLOCK_LINES:
                yield lines, positions
                lines, positions = [], []
    if lines:
        yield lines, positions


class _BlockReader:
    """Turns blocks of lines into :class:`JsonRows` (see the module docstring for the two parsers)."""

    def __init__(self, path: str, fmap: dict[str, str]) -> None:
        self.path, self.fmap = path, fmap
        self.schema: Any = None
        self.fields: dict[str, str] = {}  # canonical field -> the key that gives it

    def read(self, lines: list[bytes], positions: list[int]) -> JsonRows:
        """The block as rows: Arrow's parser first, the reader's line by line where it refuses."""
        import pyarrow as pa
        import pyarrow.json as pj

        if self.schema is None:
            first = jsonl_record(lines[0], positions[0], self.path)
            keys = [str(k) for k in first] if isinstance(first, dict) else []
            self.schema = _schema(self.fmap, keys)
            self.fields = {canonical(self.fmap.get(k, k)): k for k in self.schema.names}
        data = b"".join(lines)
        if not _SURROGATE.search(data):
            try:
                table = pj.read_json(
                    io.BytesIO(data), read_options=pj.ReadOptions(use_threads=False, block_size=len(data) + 1),
                    parse_options=pj.ParseOptions(explicit_schema=self.schema, unexpected_field_behavior="infer"))
            except (pa.ArrowException, ValueError):
                table = None
            if table is not None and table.num_rows == len(lines) and self._same_fields(table.schema):
                batch = table.combine_chunks().to_batches()[0]
                return JsonRows(_canonical_batch(batch, self.fields), lines, positions, self.path)
        return self._by_line(lines, positions)

    def _same_fields(self, schema: Any) -> bool:
        """The explicit fields kept their types (no key inferred inside a context) and no other key
        gives a canonical field (an alias first seen in this block)."""
        for n in schema.names:
            if n in self.fields.values():
                if schema.field(n).type != self.schema.field(n).type:
                    return False
            elif canonical(self.fmap.get(n, n)) in CANONICAL_FIELDS:
                return False
        return True

    def _by_line(self, lines: list[bytes], positions: list[int]) -> JsonRows:
        """Each line parsed by the reader's rules; the batch built from the records whose keys and
        values the kernels can take, every other row forced to the Sample path."""
        import pyarrow as pa

        parsed = [jsonl_record(raw, pos, self.path) for raw, pos in zip(lines, positions, strict=True)]
        forced = np.zeros(len(lines), dtype=bool)
        cols: dict[str, list[Any]] = {f: [] for f in self.fields}
        for i, rec in enumerate(parsed):
            ok = isinstance(rec, dict) and all(canonical(self.fmap.get(str(k), str(k))) not in CANONICAL_FIELDS
                                               or k in self.fields.values() for k in rec)
            row = {f: rec.get(k) for f, k in self.fields.items()} if ok else {}
            if not ok or not _row_ok(row):
                forced[i] = True
                row = {}
            for f in self.fields:
                cols[f].append(row.get(f))
        schema = pa.schema([(f, pa.map_(pa.string(), pa.float64())) if f == "relevant"
                            else (f, self.schema.field(k).type) for f, k in self.fields.items()])
        try:
            batch = pa.RecordBatch.from_pydict(cols, schema=schema) if self.fields else None
        except (pa.ArrowException, TypeError, ValueError, OverflowError):
            batch, forced = None, np.ones(len(lines), dtype=bool)
        return JsonRows(batch, lines, positions, self.path, forced, parsed)


def _is_num(v: Any) -> bool:
    return isinstance(v, int | float) and not isinstance(v, bool)


def _row_ok(row: dict[str, Any]) -> bool:
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


def evaluate_jsonl(
    path: str | os.PathLike[str],
    metrics: Sequence[str],
    *,
    out_dir: str | os.PathLike[str],
    on_error: str = "raise",
    field_map: dict[str, str] | None = None,
    progress: Callable[[int], None] | None = None,
    on_bad_row: Callable[[InputError], None] | None = None,
    run_info: dict[str, Any] | None = None,
    max_text_chars: int | None = DEFAULT_MAX_TEXT_CHARS,
) -> RunResult:
    """Evaluate retrieval ``metrics`` over the JSONL file ``path`` on the columnar path: the files
    and :class:`~ragmeter.results.RunResult` of :func:`ragmeter.evaluate` over
    :func:`~ragmeter.io.read_samples` (``keep_records=False``), as
    :func:`~ragmeter.engines.columnar.evaluate_parquet` for Parquet."""
    import pyarrow as pa

    revs = retrieval_evaluators(metrics)
    run = plan(metrics, evaluators=revs, run_info=run_info)
    read_samples(path, on_error=on_error, field_map=field_map, format="jsonl")  # type: ignore[arg-type]  # file-level checks
    spath = os.fspath(path)
    fmap = check_field_map(field_map)
    conv = RowConverter(spath, fmap, unit="line", max_text_chars=max_text_chars)
    reader = _BlockReader(spath, fmap)
    writer = RunWriter(run.names, out_dir=out_dir, keep_records=False)
    sink: ColumnarSink | None = None
    t0 = time.perf_counter()
    for lines, positions in _blocks(spath):
        rows = reader.read(lines, positions)
        if sink is None:
            cols = resolve_columns(pa.schema([(f, reader.schema.field(k).type) for f, k in reader.fields.items()]), {})
            cols.max_text_chars = max_text_chars
            sink = ColumnarSink(run, writer, conv, cols, on_error=on_error, on_bad_row=on_bad_row, progress=progress)
            _note_keys(sink, rows)
        if rows.batch is None:
            scores = BatchScores(np.ones(rows.num_rows, dtype=bool), {}, {}, {}, np.zeros(0, dtype=bool))
        else:
            scores = score_batch(rows.batch, sink.cols, revs)
        sink.write(rows, scores)
    if sink is None:
        raise EmptyInputError("the file holds no samples: expected at least one line", path=spath)
    return sink.finish(t0, path=spath, keys=None)


def _note_keys(sink: ColumnarSink, rows: JsonRows) -> None:
    """The keys of the first rows' samples, noted as the Sample path notes them (what the error
    for a field no row has lists)."""
    conv = RowConverter(sink.conv.path, sink.conv.field_map, unit="line", max_text_chars=None)
    for i, rec in enumerate(rows.records(list(range(min(64, rows.num_rows))))):
        item = conv.convert(rec, rows.position(i)) if isinstance(rec, dict) else None
        if item is not None and not isinstance(item, InputError):
            sink.presence.note_sample(item)


def _canonical_batch(batch: Any, fields: dict[str, str]) -> Any:
    """The batch with its columns under their canonical names (what :func:`resolve_columns` saw)."""
    import pyarrow as pa

    names = batch.schema.names
    by_key = {k: f for f, k in fields.items()}
    if all(n in fields for n in names):
        return batch
    arrays = [batch.column(i) for i, n in enumerate(names) if n in by_key or n in fields]
    out_names = [by_key.get(n, n) for n in names if n in by_key or n in fields]
    return pa.RecordBatch.from_arrays(arrays, names=out_names)
