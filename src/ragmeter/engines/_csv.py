"""The columnar engine over CSV: blocks of records become Arrow record batches for the same kernels.

:class:`CsvSource` reads the file in blocks of about :data:`BLOCK_BYTES` that end at a record
boundary, and reads each block one of two ways:

* **Arrow** (the fast way). A block qualifies when its quoting is plain RFC 4180, checked with
  numpy over the bytes (:func:`_layout`): every ``"`` opens a field (at a field's start), closes
  it (before a comma or a line end) or is doubled inside it; no lone carriage return, no NUL byte.
  There Python's ``csv`` module and ``pyarrow.csv`` split fields the same way, a newline is a
  record boundary exactly when an even number of quotes precede it, and each record's first file
  line is known. ``pyarrow.csv`` reads the block (every column a string, an empty cell null, as
  the reader gives it), then the ``contexts`` and ``relevant`` cells (JSON, or a Python literal as
  pandas ``to_csv`` writes it) are parsed together by ``pyarrow.json`` (:func:`_decode`). A cell
  whose reading could differ from :func:`ragmeter.types._decode_json_list`'s (a control
  character, ``NaN``, a surrogate escape, a plain string, a literal with a ``"`` or ``\\``, a
  grade object beyond ``{"id": number, ...}``) sends its row to the ``Sample`` path instead.
* **The reader's rules** (:func:`ragmeter.io.readers.csv_records` over the block), where Arrow
  refuses the block (a row with another cell count, a byte that is not UTF-8, a whitespace-only
  line, a type Arrow's JSON parser does not expect); the batch is built from those records
  (:func:`~ragmeter.engines._rows.records_batch`). Where the quoting is not plain the rest of
  the file is read this way (only Python's parser says where such a record ends).

Either way a row the kernels cannot take goes to the ``Sample`` path through the reader's
:class:`~ragmeter.io.records.RowConverter` with the row's raw record and its position detail, so
output, ids (a row without id: its row number), and per-row errors (file, row, field, the file
line the record starts on) are those of :func:`ragmeter.evaluate` over
:func:`ragmeter.io.read_samples`.
"""

from __future__ import annotations

import csv
import io
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.typing import NDArray

from .._arrowbuf import arrow_false, arrow_numbers, arrow_string, take_rows
from .._arrowbuf import np_bool as _np_bool
from ..io.options import ReadOptions
from ..io.readers import DECOMPRESS_ERRORS, csv_error, csv_header, csv_records, open_binary, raise_csv_field_limit
from ..io.records import canonical, dialect_map
from ..types import _decode_json_list
from ._arrow import Columns, resolve_columns
from ._rows import kernel_types, records_batch

#: Bytes per block (a block ends at the last record boundary before this many bytes).
BLOCK_BYTES = 4 << 20
#: Rows per block where the rest of the file is read by the reader's rules.
BLOCK_ROWS = 16384

_FORCE = r"[\x00-\x1f]|NaN|Infinity|\\u[dD][89a-fA-F]"  # cells left to Python's decoder
_LITERAL = r"^ *[\[{] *(?:[\[{] *)?'"  # a Python literal: its first string in single quotes
_NUM = r"-?(?:0|[1-9][0-9]*)(?:\.[0-9]+)?(?:[eE][+-]?[0-9]+)?"
_PAIR = rf' *"[^"\\]*" *: *{_NUM} *'
_GRADES = rf"^ *\{{(?:{_PAIR}(?:,{_PAIR})*| *)\}} *$"


@dataclass
class CsvRows:
    """One block of CSV records as a record batch (a :class:`~ragmeter.engines.columnar.Source`
    block): either Arrow's string ``table`` of the block with each row's first file line
    (``starts``), or the reader's ``parsed`` rows ``(row, record or InputError, where)``."""

    batch: Any
    row0: int
    forced_slow: NDArray[np.bool_] | None
    table: Any = None
    starts: NDArray[np.int64] | None = None
    parsed: list[tuple[int, Any, str]] | None = None

    @property
    def num_rows(self) -> int:
        """Rows in the block."""
        return len(self.parsed) if self.parsed is not None else int(self.table.num_rows)

    def position(self, i: int) -> int:
        """The CSV row number of row ``i`` (its default id and the row errors name)."""
        return self.parsed[i][0] if self.parsed is not None else self.row0 + i + 1

    @property
    def positions(self) -> range | list[int]:
        """Every row's :meth:`position`, in order."""
        if self.parsed is not None:
            return [p[0] for p in self.parsed]
        return range(self.row0 + 1, self.row0 + self.num_rows + 1)

    def where(self, i: int) -> str:
        """`` (CSV row N starts on file line L)``, as the reader words it."""
        if self.parsed is not None:
            return self.parsed[i][2]
        assert self.starts is not None
        return f" (CSV row {self.row0 + i + 1} starts on file line {int(self.starts[i])})"

    def records(self, rows: list[int]) -> list[Any]:
        """The raw records of ``rows`` as the reader gives them (an InputError for a bad row)."""
        if self.parsed is not None:
            return [self.parsed[i][1] for i in rows]

        return take_rows(self.table, rows).to_pylist() if rows else []


# ---- the file in blocks ---------------------------------------------------------------------------


@dataclass
class _Layout:
    """Where a block ends, whether its quoting is plain, each record's start and its line feeds."""

    end: int
    plain: bool
    starts: NDArray[np.int64]
    newlines: NDArray[np.int64]


def _layout(data: bytes, final: bool) -> _Layout | None:
    """The layout of the records at the head of ``data`` (all of it when ``final``, else up to the
    last newline preceded by an even number of quotes); None when no record ends in ``data``."""
    a = np.frombuffer(data, dtype=np.uint8)
    q = np.flatnonzero(a == 34)
    nl = np.flatnonzero(a == 10)
    bounds = nl[(np.searchsorted(q, nl) & 1) == 0]
    if final:
        end = len(data)
    elif len(bounds):
        end = int(bounds[-1]) + 1
    else:
        return None
    q, nl, bounds = (x[:np.searchsorted(x, end)] for x in (q, nl, bounds))
    lone_cr = False
    if data.find(b"\r", 0, end) >= 0:
        cr = np.flatnonzero(a[:end] == 13)
        lone_cr = int(cr[-1]) + 1 >= end or not bool(np.all(a[cr + 1] == 10))
    plain = len(q) % 2 == 0 and not lone_cr and data.find(b"\0", 0, end) < 0
    if plain and len(q):
        op, cl = q[0::2], q[1::2]
        before = a[np.maximum(op - 1, 0)]
        ok = (op == 0) | (before == 44) | (before == 10)
        ok[1:] |= op[1:] - 1 == cl[: len(op) - 1]  # the second quote of a doubled pair
        after = a[np.minimum(cl + 1, len(a) - 1)]
        closed = (cl + 1 >= end) | (after == 44) | (after == 10) | (after == 13) | (after == 34)
        plain = bool(ok.all() and closed.all())
    starts = np.concatenate(([0], bounds + 1)).astype(np.int64)
    starts = starts[starts < end]
    first = a[starts]
    nxt = a[np.minimum(starts + 1, len(a) - 1)]
    empty = (first == 10) | ((first == 13) & (nxt == 10) & (starts + 1 < end))
    return _Layout(end, plain, starts[~empty], nl)


class _Chain(io.RawIOBase):
    """``head`` then the rest of ``fh``, as one binary stream."""

    def __init__(self, head: bytes, fh: Any) -> None:
        self.head, self.fh = memoryview(head), fh

    def readable(self) -> bool:
        return True

    def readinto(self, b: Any) -> int:
        if len(self.head):
            n = min(len(b), len(self.head))
            b[:n] = self.head[:n]
            self.head = self.head[n:]
            return n
        data = self.fh.read(len(b))
        b[: len(data)] = data
        return len(data)


def _text_reader(stream: Any) -> Any:
    raise_csv_field_limit()
    return csv.reader(io.TextIOWrapper(stream, encoding="utf-8", errors="surrogateescape", newline=""))


def _read(fh: Any, path: str) -> bytes:
    """The next :data:`BLOCK_BYTES` of ``fh`` (a gzip stream that cannot be decompressed: the
    reader's InputError)."""
    try:
        return bytes(fh.read(BLOCK_BYTES))
    except DECOMPRESS_ERRORS as exc:
        raise csv_error(exc, path, 0) from exc


# ---- the source --------------------------------------------------------------------------------------


class CsvSource:
    """The blocks of a CSV file as :class:`CsvRows` (a :class:`~ragmeter.engines.columnar.Source`)."""

    unit = "row"
    keys: list[str] | None = None

    def __init__(self, path: str, read: ReadOptions) -> None:
        self.path, self.fmap, self.max_text_chars = path, dict(read.field_map), read.max_text_chars
        self.columns: Columns | None = None
        self.header: list[str] = []
        self.fields: dict[str, str] = {}  # canonical field -> the column that gives it
        self.meta: list[str] = []  # columns giving metadata or kept as it (left to the Sample path)
        self.usable = True  # False: two columns give one field (every row on the Sample path)
        self.types = kernel_types()

    def _set_header(self, cells: list[str]) -> None:
        import pyarrow as pa

        self.header = csv_header(cells, self.fmap, self.path)
        dfmap = {**dialect_map(self.header, self.fmap), **self.fmap}
        for h in self.header:
            f = canonical(dfmap.get(h, h))
            if f in self.types:
                self.usable = self.usable and f not in self.fields
                self.fields.setdefault(f, h)
            else:  # metadata, or a column kept as metadata on the Sample path
                self.meta.append(h)
        self.rec_fmap = dfmap
        self.columns = resolve_columns(pa.schema([(f, self.types[f]) for f in self.fields]), {}, self.max_text_chars)

    def blocks(self) -> Iterator[CsvRows]:
        """The file's blocks, in order (see the module docstring)."""
        with open_binary(self.path) as fh:
            first = _read(fh, self.path)
            buf, final, lay = self._more(fh, first.removeprefix(b"\xef\xbb\xbf"), len(first) < BLOCK_BYTES)
            hend = int(lay.newlines[0]) + 1 if len(lay.newlines) else len(buf)
            if not lay.plain or not len(lay.starts) or lay.starts[0] != 0 or b'"' in buf[:hend]:
                yield from self._by_reader(io.BufferedReader(_Chain(buf, fh)), row=0, line0=0, header=True)
                return
            self._set_header(next(_text_reader(io.BytesIO(buf[:hend])), []))
            buf, row0, line0 = buf[hend:], 0, 1
            while buf or not final:
                buf, final, lay = self._more(fh, buf, final)
                if not lay.plain:  # where the next record ends, only Python's parser says
                    yield from self._by_reader(io.BufferedReader(_Chain(buf, fh)), row=row0, line0=line0,
                                               header=False)
                    return
                rows = self._block(buf[:lay.end], lay, row0, line0)
                if rows.num_rows:  # (a block of blank lines has none)
                    yield rows
                row0 += rows.num_rows
                line0 += len(lay.newlines)
                buf = buf[lay.end:]

    def _more(self, fh: Any, buf: bytes, final: bool) -> tuple[bytes, bool, _Layout]:
        """``buf`` extended from ``fh`` until a record ends in it (or the file does), whether the
        file has ended, and the layout of its records."""
        lay = _layout(buf, final)
        while lay is None:
            more = _read(fh, self.path)
            buf, final = buf + more, len(more) < BLOCK_BYTES
            lay = _layout(buf, final)
        return buf, final, lay

    def _by_reader(self, stream: Any, *, row: int, line0: int, header: bool) -> Iterator[CsvRows]:
        """The rest of the file read by the reader's rules, :data:`BLOCK_ROWS` rows a block."""
        reader = _text_reader(stream)
        if header:
            try:
                cells = next(reader)
            except StopIteration:
                return
            except (csv.Error, UnicodeDecodeError, *DECOMPRESS_ERRORS) as exc:
                raise csv_error(exc, self.path, reader.line_num) from exc
            self._set_header(cells)
        block: list[tuple[int, Any, str]] = []
        for item in csv_records(reader, self.header, self.path, row=row, line0=line0):
            block.append(item)
            if len(block) >= BLOCK_ROWS:
                yield self._parsed(block)
                block = []
        if block:
            yield self._parsed(block)

    def _parsed(self, rows: list[tuple[int, Any, str]]) -> CsvRows:
        """A block of the reader's rows, its batch built from the records."""
        parsed = [rec for _, rec, _ in rows]
        if not self.usable:
            return CsvRows(None, rows[0][0] - 1, np.ones(len(rows), dtype=bool), parsed=rows)
        types = {f: self.types[f] for f in self.fields}
        batch, forced = records_batch(parsed, self.fields, self.rec_fmap, types, decode=_decode_cells)
        return CsvRows(batch, rows[0][0] - 1, forced, parsed=rows)

    def _block(self, data: bytes, lay: _Layout, row0: int, line0: int) -> CsvRows:
        """One block of plain records: Arrow's way, else the reader's."""
        import pyarrow as pa
        import pyarrow.csv as pcsv

        try:
            table = pcsv.read_csv(
                io.BytesIO(data),
                read_options=pcsv.ReadOptions(column_names=self.header, use_threads=False, block_size=len(data) + 1),
                parse_options=pcsv.ParseOptions(newlines_in_values=True, ignore_empty_lines=True),
                convert_options=pcsv.ConvertOptions(column_types={h: pa.string() for h in self.header},
                                                    null_values=[""], strings_can_be_null=True,
                                                    quoted_strings_can_be_null=True))
        except (pa.ArrowException, ValueError):
            table = None
        if table is not None and table.num_rows == len(lay.starts):
            starts = line0 + 1 + np.searchsorted(lay.newlines, lay.starts)
            if not self.usable:
                return CsvRows(None, row0, np.ones(table.num_rows, dtype=bool), table, starts)
            batch, forced = self._batch(table)
            if batch is not None:
                return CsvRows(batch, row0, forced, table, starts)
        rows = list(csv_records(_text_reader(io.BytesIO(data)), self.header, self.path, row=row0, line0=line0))
        return self._parsed(rows) if rows else CsvRows(None, row0, None, parsed=[])

    def _batch(self, table: Any) -> tuple[Any, NDArray[np.bool_]]:
        """The kernels' batch of an Arrow-read block and its rows forced to the Sample path (None:
        Arrow's JSON parser refused the cells)."""
        import pyarrow as pa

        n = table.num_rows
        forced = np.zeros(n, dtype=bool)
        for h in self.meta:
            forced |= _np_bool(table.column(h).is_valid())
        arrays, names = [], []
        for f, h in self.fields.items():
            if f not in ("contexts", "relevant"):
                arrays.append(table.column(h).combine_chunks())
                names.append(f)
        ctx = table.column(self.fields["contexts"]).combine_chunks() if "contexts" in self.fields else None
        rel = table.column(self.fields["relevant"]).combine_chunks() if "relevant" in self.fields else None
        got = _decode(ctx, rel, n)
        if got is None:
            return None, forced
        contexts, relevant, bad = got
        forced |= bad
        if ctx is not None:
            arrays.append(contexts)
            names.append("contexts")
        if rel is not None:
            arrays.append(relevant)
            names.append("relevant")
        return pa.RecordBatch.from_arrays(arrays, names=names), forced


def _decode_cells(row: dict[str, Any]) -> bool:
    """Decode a reader's row's ``contexts`` / ``relevant`` cells as :class:`~ragmeter.types.Sample`
    does (False: it would refuse one; the Sample path words why)."""
    for f in ("contexts", "relevant"):
        v = row.get(f)
        if isinstance(v, str):
            try:
                row[f] = _decode_json_list(v, f, allow_dict=f == "relevant")
            except (ValueError, RecursionError):
                return False
    return True


# ---- the list cells, all at once ------------------------------------------------------------------


def _has(cells: Any, pattern: str) -> Any:
    import pyarrow.compute as pc

    return pc.fill_null(pc.match_substring_regex(cells, pattern), arrow_false())


def _classify(cells: Any, graded: bool) -> tuple[Any, Any, Any]:
    """``(list texts, grade-object texts, forced)`` of one column of list cells: JSON as it is, a
    Python literal with its single quotes made double, blank as ``[]``; every cell whose reading
    could differ from Python's forced to the Sample path (its texts null). (Each step runs only
    where a cell needs it: a plain JSON column costs two regex passes.)"""
    import pyarrow as pa
    import pyarrow.compute as pc

    null = pa.nulls(1, pa.string())[0]
    force = _has(cells, _FORCE)
    text = cells
    lit = _has(cells, _LITERAL)
    if _any(lit):
        lit_bad = pc.and_(lit, _has(cells, r'["\\]'))
        force = pc.or_(force, lit_bad)
        text = pc.if_else(pc.and_(lit, pc.invert(lit_bad)), pc.replace_substring(cells, "'", '"'), cells)
    blank = _has(text, r"^ *$")
    if _any(blank):
        text = pc.if_else(blank, arrow_string("[]"), text)
    is_list = _has(text, r"^ *\[")
    is_grades = _has(text, r"^ *\{")
    if graded and _any(is_grades):
        is_grades = pc.and_(is_grades, _has(text, _GRADES))
    elif not graded:
        is_grades = pc.and_(is_grades, arrow_false())
    force = pc.or_(force, pc.and_(cells.is_valid(), pc.invert(pc.or_(is_list, is_grades))))
    keep = pc.invert(force)
    lists = pc.if_else(pc.and_(keep, is_list), text, null)
    grades = pa.nulls(len(cells), pa.string())
    if graded and _any(pc.and_(keep, is_grades)):
        g = pc.if_else(pc.and_(keep, is_grades), text, null)
        g = pc.replace_substring_regex(pc.replace_substring_regex(g, r"^ *\{", "["), r"\} *$", "]")
        grades = pc.replace_substring_regex(g, rf'("[^"\\]*") *: *({_NUM})', r'{"k":\1,"v":"\2"}')
    return lists, grades, force


def _any(mask: Any) -> bool:
    import pyarrow.compute as pc

    return bool(pc.any(mask).as_py())


def _decode(ctx: Any, rel: Any, n: int) -> tuple[Any, Any, NDArray[np.bool_]] | None:
    """The ``contexts`` (list of ``{id, text, score}``) and ``relevant`` (list of ids, or a map id
    -> grade when a cell is a grade object) arrays of the cells, parsed as JSON lines by
    ``pyarrow.json``, and the rows forced to the Sample path; None when the parser refuses them."""
    import pyarrow as pa
    import pyarrow.compute as pc
    import pyarrow.json as pj

    null = pa.nulls(n, pa.string())
    forced = np.zeros(n, dtype=bool)
    c = r = g = null
    if ctx is not None:
        c, _, f = _classify(ctx, graded=False)
        forced |= _np_bool(f)
    if rel is not None:
        r, g, f = _classify(rel, graded=True)
        forced |= _np_bool(f)
    lit = arrow_string
    lines = pc.binary_join_element_wise(lit('{"c":'), c, lit(',"r":'), r, lit(',"g":'), g, lit("}\n"), lit(""),
                                        null_handling="replace", null_replacement="null")
    _, off_buf, data_buf = lines.buffers()
    offsets = np.frombuffer(off_buf, dtype=np.int32)[lines.offset:lines.offset + n + 1]
    data = data_buf.slice(int(offsets[0]), int(offsets[-1] - offsets[0]))
    types = kernel_types()
    schema = pa.schema([("c", types["contexts"]), ("r", types["relevant"]),
                        ("g", pa.list_(pa.struct([("k", pa.string()), ("v", pa.string())])))])
    try:
        table = pj.read_json(pa.BufferReader(data),
                             read_options=pj.ReadOptions(use_threads=False, block_size=max(len(data), 1) + 1),
                             parse_options=pj.ParseOptions(explicit_schema=schema, unexpected_field_behavior="error"))
    except (pa.ArrowException, ValueError):
        return None
    if table.num_rows != n:
        return None
    contexts = table.column("c").combine_chunks()
    labels = table.column("r").combine_chunks()
    grades = table.column("g").combine_chunks()
    if grades.null_count < n:
        try:
            labels = _as_map(labels, grades, n)
        except (pa.ArrowException, ValueError):
            return None
    return contexts, labels, forced


def _as_map(labels: Any, grades: Any, n: int) -> Any:
    """``relevant`` as a map id -> grade: a list row's ids with grade 1, a grade row's pairs (its
    grades read from their JSON text, as Python's ``float`` reads them)."""
    import pyarrow as pa
    import pyarrow.compute as pc

    flat_l = pc.list_flatten(labels)
    flat_g = pc.list_flatten(grades)
    parents = np.concatenate([np.asarray(pc.list_parent_indices(labels).to_numpy(), dtype=np.int64),
                              np.asarray(pc.list_parent_indices(grades).to_numpy(), dtype=np.int64)])
    keys = pa.concat_arrays([flat_l, flat_g.field("k")])
    values = pa.concat_arrays([arrow_numbers(np.ones(len(flat_l))), pc.cast(flat_g.field("v"), pa.float64())])
    order = arrow_numbers(np.argsort(parents, kind="stable"))
    offsets = np.zeros(n + 1, dtype=np.int32)
    np.cumsum(np.bincount(parents, minlength=n), out=offsets[1:])
    valid = pc.or_(labels.is_valid(), grades.is_valid())
    return pa.MapArray.from_arrays(arrow_numbers(offsets), keys.take(order), values.take(order),
                                   mask=pc.invert(valid))

