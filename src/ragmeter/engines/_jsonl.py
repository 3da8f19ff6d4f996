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
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.typing import NDArray

from ..io._records import canonical
from ..io.readers import _open_binary, jsonl_record
from ..results import RunResult
from ..types import CANONICAL_FIELDS
from ._arrow import Columns, resolve_columns
from ._rows import kernel_types, records_batch
from .columnar import evaluate_columnar

#: Non-blank lines per block (one Arrow record batch).
BLOCK_LINES = 16384
_SURROGATE = re.compile(rb"\\u[dD][89a-fA-F]")


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

    def where(self, i: int) -> str:
        """Position detail for row ``i``'s messages (none: the line is the position)."""
        return ""


def _schema(fmap: dict[str, str], names: Sequence[str]) -> Any:
    """The explicit part of the Arrow schema: the kernels' fields under the file's key names."""
    import pyarrow as pa

    types = kernel_types()
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
        values the kernels can take (:func:`~ragmeter.engines._rows.records_batch`), every other
        row forced to the Sample path."""
        parsed = [jsonl_record(raw, pos, self.path) for raw, pos in zip(lines, positions, strict=True)]
        types = {f: self.schema.field(k).type for f, k in self.fields.items()}
        batch, forced = records_batch(parsed, self.fields, self.fmap, types)
        return JsonRows(batch, lines, positions, self.path, forced, parsed)


class JsonlSource:
    """The blocks of a JSONL file as :class:`JsonRows` (a
    :class:`~ragmeter.engines.columnar.Source`)."""

    unit = "line"
    keys: list[str] | None = None

    def __init__(self, path: str, fmap: dict[str, str]) -> None:
        self.reader = _BlockReader(path, fmap)
        self.columns: Columns | None = None

    def blocks(self) -> Iterator[JsonRows]:
        """One :class:`JsonRows` per :data:`BLOCK_LINES` non-blank lines."""
        import pyarrow as pa

        reader = self.reader
        for lines, positions in _blocks(reader.path):
            rows = reader.read(lines, positions)
            if self.columns is None:
                self.columns = resolve_columns(
                    pa.schema([(f, reader.schema.field(k).type) for f, k in reader.fields.items()]), {})
            yield rows


def evaluate_jsonl(path: str | os.PathLike[str], metrics: Sequence[str], **options: Any) -> RunResult:
    """Evaluate retrieval ``metrics`` over the JSONL file ``path`` on the columnar path: the files
    and :class:`~ragmeter.results.RunResult` of :func:`ragmeter.evaluate` over
    :func:`~ragmeter.io.read_samples` (``keep_records=False``); ``options`` as
    :func:`~ragmeter.engines.columnar.evaluate_columnar` takes them."""
    return evaluate_columnar(path, metrics, format="jsonl", **options)


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
