"""The columnar engine over JSONL: blocks of lines become Arrow record batches for the same kernels.

:class:`JsonlSource` (a :class:`~ragmeter.engines.columnar.Source`) reads the file in blocks of
:data:`BLOCK_LINES` non-blank lines. A block is
parsed by ``pyarrow.json`` with an explicit schema for the fields the kernels read (``contexts``
as ``{id, text, score}`` structs, ``relevant`` as a list of ids; other keys inferred). Where that
parser refuses the block (a ``relevant`` given as an id -> grade object, which Arrow's JSON reader
cannot read as a map; a type it does not expect; a malformed line; a lone surrogate escape, which
only Python's parser rejects the way the reader does) the block's lines are parsed one by one with
:func:`ragmeter.io.readers.jsonl_record` (the reader's own rules) and the batch built from those
records. Either way a row the kernels cannot take goes to the ``Sample`` path through the reader's
:class:`~ragmeter.io.records.RowConverter` with the line's raw record, so output, ids (a row
without id: its line number) and per-row errors (file, line, field) are those of
:func:`ragmeter.evaluate` over :func:`ragmeter.io.read_samples`.
"""

from __future__ import annotations

import contextlib
import re
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.typing import NDArray

from .._arrowbuf import np_bool
from ..errors import InputError
from ..io.options import ReadOptions
from ..io.readers import DECOMPRESS_ERRORS, jsonl_record, open_binary
from ..io.records import canonical
from ..types import CANONICAL_FIELDS
from ._arrow import Columns, resolve_columns
from ._rows import kernel_types, records_batch

#: Non-blank lines per block (one Arrow record batch).
BLOCK_LINES = 16384
_SURROGATE = re.compile(rb"\\u[dD][89a-fA-F]")


@dataclass
class JsonRows:
    """One block of JSONL lines as a record batch: the lines' bytes (``data``, line ``i`` is
    ``data[offsets[i]:offsets[i + 1]]``, newline included), each row's line number and raw record."""

    batch: Any
    data: bytes
    offsets: NDArray[np.int64]
    positions: list[int]
    path: str
    forced_slow: NDArray[np.bool_] | None = None
    parsed: list[Any] | None = None

    @property
    def num_rows(self) -> int:
        """Rows (non-blank lines) in the block."""
        return len(self.positions)

    def line(self, i: int) -> bytes:
        """Row ``i``'s line, newline included."""
        return self.data[int(self.offsets[i]):int(self.offsets[i + 1])]

    def position(self, i: int) -> int:
        """The line number of row ``i`` (its default id and the line errors name)."""
        return self.positions[i]

    def records(self, rows: list[int]) -> list[Any]:
        """The raw records of ``rows`` as the reader parses them (an InputError for a bad line)."""
        if self.parsed is not None:
            return [self.parsed[i] for i in rows]
        return [jsonl_record(self.line(i), self.positions[i], self.path) for i in rows]

    def where(self, i: int) -> str:
        """Position detail for row ``i``'s messages (none: the line is the position)."""
        return ""


def _schema(fmap: dict[str, str], names: Sequence[str]) -> Any:
    """The explicit part of the Arrow schema: the kernels' fields under the file's key names."""
    import pyarrow as pa

    types = kernel_types()
    return pa.schema([(n, types[canonical(fmap.get(n, n))]) for n in names
                      if canonical(fmap.get(n, n)) in types])


# ---- the file in blocks of lines ------------------------------------------------------------------


@dataclass
class _Block:
    """:data:`BLOCK_LINES` non-blank lines (fewer at the end of the file): their bytes, each
    ending with a newline, where each starts (``offsets``, with the end) and its line number."""

    data: bytes
    offsets: NDArray[np.int64]
    positions: list[int]


#: Bytes read from the file at a time (its lines are found in numpy, not one by one in Python).
READ_BYTES = 1 << 23
_BOM = b"\xef\xbb\xbf"
_BLANK_START = np.frombuffer(b" \t\r\x0b\x0c\n", dtype=np.uint8)  # what a blank line starts with


def _blocks(path: str) -> Iterator[_Block]:
    """The file's non-blank lines (``bytes.strip()`` leaves something) in blocks of
    :data:`BLOCK_LINES`, with their line numbers; a UTF-8 BOM before line 1 is dropped, a last
    line without a newline gets one. A gzip file that stops decompressing gives its complete
    lines, then the reader's InputError naming the last of them."""
    lineno = 0  # lines of the file before ``pending``
    pending = b""
    first = True
    for chunk, broken in _chunks(path):
        eof = not chunk or broken is not None
        data = pending + chunk if pending else chunk
        if first:  # the BOM is looked for once the first 3 bytes are in
            if len(data) < len(_BOM) and not eof:
                pending = data
                continue
            data, first = data.removeprefix(_BOM), False
        cut = data.rfind(b"\n") + 1 if broken is not None or not eof else len(data)
        body, pending = data[:cut], data[cut:]
        if body:
            starts, ends = _line_bounds(body)
            numbers = np.arange(lineno + 1, lineno + len(starts) + 1, dtype=np.int64)
            lineno += len(starts)
            kept = np.flatnonzero(_non_blank(body, starts, ends))
            whole = len(kept) if eof else len(kept) // BLOCK_LINES * BLOCK_LINES
            for j in range(0, whole, BLOCK_LINES):
                yield _block(body, starts, ends, numbers, kept[j:j + BLOCK_LINES])
            if whole < len(kept):  # fewer lines than a block left: read again with the next bytes
                pending = body[int(starts[kept[whole]]):] + pending
                lineno = int(numbers[kept[whole]]) - 1
        if broken is not None:
            raise InputError(f"cannot decompress the gzip file after this line: {broken}", path=path,
                             line=lineno) from broken
        if eof:
            return


def _chunks(path: str) -> Iterator[tuple[bytes, Exception | None]]:
    """The file's bytes (decompressed) in pieces of :data:`READ_BYTES`, then ``(b"", None)``; where
    a gzip stream breaks, the rest of the lines the reader's line iteration gets before the error
    (:func:`ragmeter.io.readers.read_samples` reads it line by line: the file is read that way
    again, so both stop after the same line) and the error, last."""
    done = 0
    with open_binary(path) as fh:
        try:
            while chunk := fh.read(READ_BYTES):
                yield chunk, None
                done += len(chunk)
        except DECOMPRESS_ERRORS as exc:
            broken: Exception = exc
        else:
            yield b"", None
            return
    tail, at = bytearray(), 0
    with open_binary(path) as fh, contextlib.suppress(*DECOMPRESS_ERRORS):
        for raw in fh:
            if at + len(raw) > done:
                tail += raw[max(done - at, 0):]
            at += len(raw)
    yield bytes(tail), broken


def _line_bounds(body: bytes) -> tuple[NDArray[np.int64], NDArray[np.int64]]:
    """Where each line of ``body`` starts and ends (newline included; the last line may lack one)."""
    arr = np.frombuffer(body, dtype=np.uint8)
    ends = np.flatnonzero(arr == 10).astype(np.int64) + 1
    if not len(ends) or ends[-1] != len(body):
        ends = np.append(ends, len(body))
    starts = np.empty_like(ends)
    starts[0] = 0
    starts[1:] = ends[:-1]
    return starts, ends


def _non_blank(body: bytes, starts: NDArray[np.int64], ends: NDArray[np.int64]) -> NDArray[np.bool_]:
    """Per line: ``strip()`` leaves something (only a line that starts with whitespace is looked at)."""
    arr = np.frombuffer(body, dtype=np.uint8)
    keep = np.ones(len(starts), dtype=bool)
    for i in np.flatnonzero(np.isin(arr[starts], _BLANK_START)).tolist():
        keep[i] = bool(body[int(starts[i]):int(ends[i])].strip())
    return keep


def _block(body: bytes, starts: NDArray[np.int64], ends: NDArray[np.int64], numbers: NDArray[np.int64],
           rows: NDArray[np.int64]) -> _Block:
    """The lines ``rows`` of ``body`` as one :class:`_Block`."""
    s, e = starts[rows], ends[rows]
    offsets = np.zeros(len(rows) + 1, dtype=np.int64)
    np.cumsum(e - s, out=offsets[1:])
    if (s[1:] == e[:-1]).all():  # contiguous: one slice
        data = body[int(s[0]):int(e[-1])]
    else:
        data = b"".join(body[a:b] for a, b in zip(s.tolist(), e.tolist(), strict=True))
    if not data.endswith(b"\n"):  # the file's last line
        data += b"\n"
        offsets[-1] += 1
    return _Block(data, offsets, numbers[rows].tolist())


#: Bracket steps per byte: +1 for ``{`` and ``[``, -1 for ``}`` and ``]``.
_BRACKET_STEP = np.zeros(256, dtype=np.int8)
_BRACKET_STEP[[ord("{"), ord("[")]] = 1
_BRACKET_STEP[[ord("}"), ord("]")]] = -1
#: The deepest bracket nesting a line may have for Arrow's JSON parser to read its block (pyarrow
#: 26 crashes the process on a line nested 20,000 deep; the line reader names such a line).
MAX_ARROW_DEPTH = 1000


def arrow_safe(data: bytes, offsets: NDArray[np.int64]) -> bool:
    r"""Whether Arrow's JSON parser may read the block ``data`` (lines starting at ``offsets[:-1]``):
    every line starts with ``{`` (pyarrow crashes on a first line such as ``null``, read with the
    empty schema it gives) and no line nests brackets deeper than :data:`MAX_ARROW_DEPTH`. Brackets
    inside strings count too, so the check errs toward the line reader, which is exact.

    >>> import numpy as np
    >>> arrow_safe(b'{"a": [1]}\n{"b": 2}\n', np.array([0, 11, 20]))
    True
    >>> arrow_safe(b'null\n', np.array([0, 5]))
    False
    >>> arrow_safe(b'{"a": ' + b'[' * 1001 + b']' * 1001 + b'}\n', np.array([0, 2010]))
    False
    """
    arr = np.frombuffer(data, dtype=np.uint8)
    starts = offsets[:-1]
    if len(starts) == 0 or not (arr[starts] == ord("{")).all():
        return False
    steps = _BRACKET_STEP[arr]
    if np.count_nonzero(steps > 0) <= MAX_ARROW_DEPTH:
        return True
    depth = np.cumsum(steps, dtype=np.int32)
    base = np.where(starts > 0, depth[np.maximum(starts - 1, 0)], 0)
    return bool((np.maximum.reduceat(depth, starts) - base).max() <= MAX_ARROW_DEPTH)


class _BlockReader:
    """Turns blocks of lines into :class:`JsonRows` (see the module docstring for the two parsers)."""

    def __init__(self, path: str, fmap: dict[str, str]) -> None:
        self.path, self.fmap = path, fmap
        self.schema: Any = None
        self.fields: dict[str, str] = {}  # canonical field -> the key that gives it

    def read(self, block: _Block) -> JsonRows:
        """The block as rows: Arrow's parser first, the reader's line by line where it refuses."""
        import pyarrow as pa
        import pyarrow.json as pj

        data, positions = block.data, block.positions
        if self.schema is None:
            first = jsonl_record(data[:int(block.offsets[1])], positions[0], self.path)
            keys = [str(k) for k in first] if isinstance(first, dict) else []
            self.schema = _schema(self.fmap, keys)
            self.fields = {canonical(self.fmap.get(k, k)): k for k in self.schema.names}
        if not _SURROGATE.search(data) and arrow_safe(data, block.offsets):
            try:
                table = pj.read_json(
                    pa.BufferReader(data), read_options=pj.ReadOptions(use_threads=False, block_size=len(data) + 1),
                    parse_options=pj.ParseOptions(explicit_schema=self.schema, unexpected_field_behavior="infer"))
            except (pa.ArrowException, ValueError):
                table = None
            if table is not None and table.num_rows == len(positions) and self._same_fields(table.schema):
                batch = table.combine_chunks().to_batches()[0]
                return JsonRows(_canonical_batch(batch, self.fields), data, block.offsets, positions, self.path,
                                self._kept_keys(batch))
        return self._by_line(block)

    def _kept_keys(self, batch: Any) -> NDArray[np.bool_] | None:
        """The rows with a value under a key the kernels do not read (kept as the row's metadata,
        written beside its results: the Sample path takes them); None when there is none."""
        forced = None
        for i, name in enumerate(batch.schema.names):
            if name not in self.fields.values():
                valid = np_bool(batch.column(i).is_valid())
                forced = valid if forced is None else forced | valid
        return forced

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

    def _by_line(self, block: _Block) -> JsonRows:
        """Each line parsed by the reader's rules; the batch built from the records whose keys and
        values the kernels can take (:func:`~ragmeter.engines._rows.records_batch`), every other
        row forced to the Sample path."""
        data, o = block.data, block.offsets.tolist()
        parsed = [jsonl_record(data[o[i]:o[i + 1]], pos, self.path) for i, pos in enumerate(block.positions)]
        types = {f: self.schema.field(k).type for f, k in self.fields.items()}
        batch, forced = records_batch(parsed, self.fields, self.fmap, types)
        return JsonRows(batch, data, block.offsets, block.positions, self.path, forced, parsed)


class JsonlSource:
    """The blocks of a JSONL file as :class:`JsonRows` (a
    :class:`~ragmeter.engines.columnar.Source`)."""

    unit = "line"
    keys: list[str] | None = None

    def __init__(self, path: str, read: ReadOptions) -> None:
        self.reader = _BlockReader(path, dict(read.field_map))
        self.max_text_chars = read.max_text_chars
        self.columns: Columns | None = None

    def blocks(self) -> Iterator[JsonRows]:
        """One :class:`JsonRows` per :data:`BLOCK_LINES` non-blank lines."""
        import pyarrow as pa

        reader = self.reader
        for block in _blocks(reader.path):
            rows = reader.read(block)
            if self.columns is None:
                self.columns = resolve_columns(
                    pa.schema([(f, reader.schema.field(k).type) for f, k in reader.fields.items()]), {},
                    self.max_text_chars)
            yield rows


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
