"""Reading samples from JSONL, JSON, CSV and Parquet files: :func:`read_samples`.

Every reader streams (JSONL line by line, CSV record by record, Parquet record batch by record
batch), so memory stays bounded however many rows a file has; only a ``.json`` file (one JSON
document) is parsed whole. Positions in messages and default ids are 1-based: the physical
**line** for JSONL (blank lines are skipped but counted), the **row** for CSV (data records, the
header not counted; the message adds the file line the record starts on), Parquet (rows across
the whole file) and JSON (the object's position in the list). See ``docs/input-format.md``.
"""

from __future__ import annotations

import csv
import gzip
import io
import json
import os
import re
import sys
import zlib
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import IO, Any, Literal

from .._optional import require
from ..errors import EmptyInputError, InputError
from ..types import Sample
from .options import ReadOptions, check_format, read_options
from .otel import looks_like_spans, trace_rows
from .records import DEFAULT_MAX_TEXT_CHARS, RowConverter, check_columns

Format = Literal["jsonl", "json", "csv", "parquet", "otel"]
_SUFFIXES = {".jsonl": "jsonl", ".ndjson": "jsonl", ".json": "json", ".csv": "csv",
             ".parquet": "parquet", ".pq": "parquet"}
_GZIP_MAGIC = b"\x1f\x8b"
PARQUET_BATCH_ROWS = 1024

Row = tuple[int, Any, str]  # position, raw record (or an InputError), extra position detail

_SURROGATE_ESCAPE = re.compile(r"\\u[dD][89a-fA-F]")
_DECODED_BAD_BYTE = re.compile("[\udc80-\udcff]")


def _reject_constant(name: str) -> Any:
    raise ValueError(f"{name} is not valid JSON here: expected a finite number")


def parse_json_row(text: str) -> Any:
    """One JSON document, with the checks that keep a hostile row from crashing a run.

    Raises ``ValueError`` with a message for: malformed JSON, ``NaN`` / ``Infinity`` (not JSON, and
    not a number any metric accepts), nesting too deep for the parser, an integer longer than
    Python's 4,300-digit limit, and a lone UTF-16 surrogate escape (``\\ud800``), which no UTF-8
    file can hold.
    """
    try:
        value = json.loads(text, parse_constant=_reject_constant)
    except json.JSONDecodeError as exc:
        raise ValueError(f"malformed JSON: {exc.msg} at column {exc.colno}") from exc
    except RecursionError as exc:
        raise ValueError("malformed JSON: nested too deeply (more than ~1,000 levels)") from exc
    except ValueError as exc:
        if "integer string conversion" in str(exc):
            raise ValueError("malformed JSON: an integer with more than 4,300 digits; expected a "
                             "number of ordinary size (or write it as a string)") from exc
        raise
    if _SURROGATE_ESCAPE.search(text):
        where = _lone_surrogate(value, "")
        if where is not None:
            raise ValueError(f"a lone UTF-16 surrogate escape (e.g. \\ud800) in {where or 'the row'}: "
                             "expected valid Unicode text")
    return value


def _lone_surrogate(value: Any, path: str) -> str | None:
    """The field path of the first string holding a lone surrogate (None when none does)."""
    stack: list[tuple[Any, str]] = [(value, path)]
    while stack:
        v, p = stack.pop()
        if isinstance(v, str):
            try:
                v.encode("utf-8")
            except UnicodeEncodeError:
                return p
        elif isinstance(v, dict):
            for k, item in v.items():
                if _lone_surrogate(k, p) is not None:
                    return f"a key of {p}" if p else "a key"
                stack.append((item, f"{p}.{k}" if p else str(k)))
        elif isinstance(v, list):
            stack.extend((item, f"{p}[{i}]") for i, item in enumerate(v))
    return None


def detect_format(path: str | os.PathLike[str], format: str | None = None) -> str:
    """The format of ``path``: ``format`` when given, else from the extension (``.gz`` is looked through).

    Raises :class:`~ragmeter.errors.InvalidParameterError` for an unknown ``format`` and
    :class:`~ragmeter.errors.InputError` when the extension says nothing.
    """
    if format is not None:
        return check_format(format)
    suffixes = [s.lower() for s in Path(path).suffixes]
    if suffixes and suffixes[-1] == ".gz":
        suffixes.pop()
    detected = _SUFFIXES.get(suffixes[-1]) if suffixes else None
    if detected is None:
        raise InputError(
            "cannot tell the format from the file name: expected a .jsonl, .json, .csv or .parquet "
            "extension (optionally followed by .gz); pass format='jsonl' (CLI: --format jsonl) otherwise",
            path=str(path),
        )
    return detected


def input_format(path: str | os.PathLike[str], format: str | None = None) -> str:
    """The format :func:`read_samples` reads ``path`` in: :func:`detect_format`, except that a
    ``.json`` / ``.jsonl`` file of OpenTelemetry spans is ``otel`` (:mod:`ragmeter.io.otel`)."""
    fmt = detect_format(path, format)
    if format is None and fmt in ("json", "jsonl") and os.path.isfile(path) and looks_like_spans(os.fspath(path)):
        return "otel"
    return fmt


def read_samples(
    path: str | os.PathLike[str],
    *,
    on_error: Literal["raise", "skip"] = "raise",
    field_map: Mapping[str, str] | None = None,
    format: str | None = None,
    max_text_chars: int | None = DEFAULT_MAX_TEXT_CHARS,
    read: ReadOptions | None = None,
) -> Iterator[Sample | InputError]:
    """Read the samples of a JSONL, JSON, CSV or Parquet file, lazily.

    Parameters
    ----------
    path:
        The data file. Gzip-compressed JSONL, JSON and CSV are recognised by their content.
    on_error:
        ``"raise"`` (default) raises the first bad row's :class:`~ragmeter.errors.InputError`;
        ``"skip"`` yields it in place of the sample and goes on, so :func:`ragmeter.evaluate`
        records it as an errored sample. Problems with the file as a whole (unreadable, empty,
        not JSON/CSV/Parquet at all) always raise.
    field_map:
        Your column name -> ragmeter field (``{"question_text": "query"}``). RAGAS names
        (``user_input``, ``response``, ``retrieved_contexts``, ...) need no mapping.
    format:
        ``"jsonl"``, ``"json"``, ``"csv"``, ``"parquet"`` or ``"otel"`` (OpenTelemetry traces, one
        sample per trace: :mod:`ragmeter.io.otel`); default: from the extension, and ``"otel"``
        for a ``.json`` / ``.jsonl`` file whose first record is a span.
    max_text_chars:
        A row whose query, answer, reference or a context text is longer than this (characters)
        is a bad row (default 1,000,000; None or 0: no limit): what a run computes and stores
        stays bounded.
    read:
        The four options above as one :class:`~ragmeter.io.ReadOptions` (then leave the keywords
        at their defaults).

    Returns
    -------
    An iterator of :class:`~ragmeter.types.Sample` (and, with ``on_error="skip"``, of
    :class:`~ragmeter.errors.InputError` for bad rows). A row without an ``id`` gets its
    1-based line (JSONL) or row (other formats) number as id.

    Raises
    ------
    InputError
        The file cannot be read, or (``on_error="raise"``) a row is bad: the message names the
        file, the line or row, the field and what was expected.
    EmptyInputError
        The file holds no rows.

    Examples
    --------
    >>> import ragmeter
    >>> from ragmeter.io import read_samples
    >>> run = ragmeter.evaluate(read_samples("examples/rag_samples.jsonl"), ["mrr"])  # doctest: +SKIP
    """
    opts = read_options(read, on_error=on_error, field_map=field_map, format=format, max_text_chars=max_text_chars)
    spath = os.fspath(path)
    fmt = input_format(spath, opts.format)
    _check_readable(spath)
    if os.path.getsize(spath) == 0:
        raise EmptyInputError("the file is empty: expected at least one sample", path=spath)
    return _iterate(spath, fmt, opts)


def _check_readable(path: str) -> None:
    if not os.path.exists(path):
        raise InputError("no such file: check the path", path=path)
    if os.path.isdir(path):
        raise InputError("is a directory: expected a data file", path=path)
    try:
        with open(path, "rb") as fh:
            fh.read(1)
    except OSError as exc:
        raise InputError(f"cannot read the file: {exc.strerror or exc}", path=path) from exc


def _iterate(path: str, fmt: str, read: ReadOptions) -> Iterator[Sample | InputError]:
    unit = "line" if fmt in ("jsonl", "otel") else "row"
    conv = RowConverter(path, read, unit=unit)
    on_error = read.on_error
    rows: Iterator[Row] = {
        "jsonl": _jsonl_rows, "json": _json_rows, "csv": _csv_rows, "parquet": _parquet_rows,
        "otel": lambda p, _: trace_rows(p),
    }[fmt](path, dict(read.field_map))
    count = 0
    for pos, record, where in rows:
        count += 1
        item = record if isinstance(record, InputError) else conv.convert(record, pos, where)
        if isinstance(item, InputError) and on_error == "raise":
            raise item
        yield item
    if count == 0:
        raise EmptyInputError(f"the file holds no samples: expected at least one {unit}", path=path)


def _is_gzip(path: str) -> bool:
    with open(path, "rb") as fh:
        return fh.read(2) == _GZIP_MAGIC


def open_binary(path: str | os.PathLike[str]) -> io.BufferedIOBase:
    """Open ``path`` for reading bytes, decompressing it when it is gzip (told by its first two
    bytes, not its name, so a compressed file named ``.jsonl`` reads too). The caller closes it."""
    path = os.fspath(path)
    if _is_gzip(path):
        return gzip.open(path, "rb")
    return open(path, "rb")




def _open_text(path: str, errors: str = "strict") -> IO[str]:
    if _is_gzip(path):
        return gzip.open(path, "rt", encoding="utf-8-sig", newline="", errors=errors)
    return open(path, encoding="utf-8-sig", newline="", errors=errors)


def _bad_byte(cells: list[str], header: list[str] | None) -> str | None:
    """Where a cell holds a byte that is not UTF-8 (decoded with ``surrogateescape``), or None."""
    for j, cell in enumerate(cells):
        m = _DECODED_BAD_BYTE.search(cell)
        if m is not None:
            byte = ord(m.group()) - 0xDC00
            col = f"column {header[j]!r}" if header and j < len(header) else f"cell {j + 1}"
            return (f"not UTF-8 text: byte 0x{byte:02X} in {col} (a Latin-1 / Windows-1252 file?); "
                    "expected a UTF-8 CSV: re-save it as UTF-8 (pandas: to_csv(..., encoding='utf-8'))")
    return None


DECOMPRESS_ERRORS = (EOFError, zlib.error, gzip.BadGzipFile)


def _jsonl_rows(path: str, fmap: dict[str, str]) -> Iterator[Row]:
    lineno = 0
    with open_binary(path) as fh:
        try:
            for lineno, raw in enumerate(fh, start=1):
                if lineno == 1:
                    raw = raw.removeprefix(b"\xef\xbb\xbf")
                if not raw.strip():
                    continue
                yield lineno, jsonl_record(raw, lineno, path), ""
        except DECOMPRESS_ERRORS as exc:
            raise InputError(f"cannot decompress the gzip file after this line: {exc}",
                             path=path, line=lineno) from exc


def jsonl_record(raw: bytes, lineno: int, path: str) -> Any:
    """The record of one non-blank JSONL line (UTF-8 JSON), or the InputError naming the line."""
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        return InputError(f"not UTF-8 text (byte {exc.start + 1} of the line): expected UTF-8 encoded JSON",
                          path=path, line=lineno)
    try:
        return parse_json_row(text)
    except ValueError as exc:
        return InputError(f"{exc}; expected one JSON object per line", path=path, line=lineno)


def _json_rows(path: str, fmap: dict[str, str]) -> Iterator[Row]:
    try:
        with _open_text(path) as fh:
            text = fh.read()
        doc = parse_json_row(text)
    except UnicodeDecodeError as exc:
        raise InputError("not UTF-8 text: expected a UTF-8 encoded JSON file", path=path) from exc
    except DECOMPRESS_ERRORS as exc:
        raise InputError(f"cannot decompress the gzip file: {exc}", path=path) from exc
    except ValueError as exc:
        cause = exc.__cause__
        line = cause.lineno if isinstance(cause, json.JSONDecodeError) else None
        raise InputError(f"{exc}; expected a JSON list of sample objects (for one object per line, name "
                         "the file .jsonl)", path=path, line=line) from exc
    if isinstance(doc, dict) and isinstance(doc.get("samples"), list):
        doc = doc["samples"]
    if not isinstance(doc, list):
        got = f"an object with keys {sorted(doc)[:8]}" if isinstance(doc, dict) else type(doc).__name__
        raise InputError(
            f'expected a list of sample objects or {{"samples": [...]}}, got {got}', path=path
        )
    for i, record in enumerate(doc, start=1):
        yield i, record, ""


def _csv_rows(path: str, fmap: dict[str, str]) -> Iterator[Row]:
    raise_csv_field_limit()
    # bytes that are not UTF-8 decode to lone surrogates and are reported per row (a Latin-1 file
    # names the line of its first accented character; with on_error="skip" only that row is lost)
    with _open_text(path, errors="surrogateescape") as fh:
        reader = csv.reader(fh)
        try:
            header = next(reader)
        except StopIteration:
            return
        except (csv.Error, UnicodeDecodeError, *DECOMPRESS_ERRORS) as exc:
            raise csv_error(exc, path, reader.line_num) from exc
        yield from csv_records(reader, csv_header(header, fmap, path), path)


def csv_header(cells: list[str], fmap: dict[str, str], path: str) -> list[str]:
    """The CSV header's column names (stripped), after the file-level checks (UTF-8, unique and
    non-empty names, :func:`~ragmeter.io.records.check_columns`); an InputError names line 1."""
    bad = _bad_byte(cells, None)
    if bad:
        raise InputError(f"the header is {bad}", path=path, line=1)
    header = [h.strip() for h in cells]
    dup = sorted({h for h in header if header.count(h) > 1})
    if dup or "" in header:
        what = f"duplicated column(s) {', '.join(map(repr, dup))}" if dup else "an empty column name"
        raise InputError(f"the header has {what}: expected unique, non-empty column names",
                         path=path, line=1)
    check_columns(header, fmap, path=path)
    return header


def csv_records(reader: Any, header: list[str], path: str, *, row: int = 0, line0: int = 0) -> Iterator[Row]:
    """The rows of a ``csv.reader`` positioned after the header: ``(row, record or InputError,
    where)``. ``row`` rows and ``line0`` file lines come before the reader's first line (a reader
    over part of the file); blank lines are skipped and not counted."""
    prev_line = reader.line_num
    try:
        for cells in reader:
            start, prev_line = line0 + prev_line + 1, reader.line_num
            if not cells or (len(cells) == 1 and not cells[0].strip() and len(header) > 1):
                continue  # a blank line
            row += 1
            where = f" (CSV row {row} starts on file line {start})"
            if len(cells) != len(header):
                yield row, InputError(
                    f"expected {len(header)} cells (one per header column), got {len(cells)}{where}",
                    path=path, line=row), where
                continue
            bad = _bad_byte(cells, header)
            if bad:
                yield row, InputError(bad + where, path=path, line=row), where
                continue
            yield row, {h: (c if c != "" else None) for h, c in zip(header, cells, strict=True)}, where
    except (csv.Error, UnicodeDecodeError, *DECOMPRESS_ERRORS) as exc:
        raise csv_error(exc, path, line0 + reader.line_num) from exc


def csv_error(exc: Exception, path: str, line: int) -> InputError:
    """The InputError for a CSV file that cannot be read on (parser, encoding, gzip)."""
    if isinstance(exc, csv.Error):
        return InputError(f"cannot parse the CSV: {exc} (file line {line})", path=path, line=line)
    if isinstance(exc, UnicodeDecodeError):
        return InputError(f"not UTF-8 text after file line {line}: expected a UTF-8 CSV", path=path)
    return InputError(f"cannot decompress the gzip file: {exc}", path=path)


def raise_csv_field_limit() -> None:
    # contexts cells easily pass csv's default 128 KiB field limit (a process-wide setting)
    limit = min(sys.maxsize, 2**31 - 1)
    if csv.field_size_limit() < limit:
        csv.field_size_limit(limit)


def open_parquet(path: str) -> Any:
    """``pyarrow.parquet.ParquetFile(path)``; a file that is not Parquet (or cannot be read) is an
    :class:`~ragmeter.errors.InputError` naming it, never an internal error; without pyarrow a
    :class:`~ragmeter.errors.MissingBackendError` that says how to install it."""
    pq = require("pyarrow.parquet", f"reading the Parquet file {path}")
    import pyarrow as pa

    try:
        return pq.ParquetFile(path)
    except (pa.ArrowException, OSError) as exc:
        raise InputError(f"cannot read the Parquet file: {exc}; expected an Apache Parquet file",
                         path=path) from exc


def _parquet_rows(path: str, fmap: dict[str, str]) -> Iterator[Row]:
    pf = open_parquet(path)
    import pyarrow as pa

    schema = pf.schema_arrow
    check_columns(list(schema.names), fmap, path=path)
    row = 0
    try:
        for batch in pf.iter_batches(batch_size=PARQUET_BATCH_ROWS):
            for record in arrow_records(batch):
                row += 1
                yield row, record, ""
    except (pa.ArrowException, OSError) as exc:
        raise InputError(f"cannot read the Parquet file after row {row}: {exc}", path=path,
                         line=row + 1) from exc


def arrow_records(batch: Any) -> list[dict[str, Any]]:
    """The rows of an Arrow record batch (or table) as the readers give them: Arrow map columns
    (lists of (key, value) pairs in ``to_pylist``) as dicts. Every Parquet path converts here."""
    import pyarrow as pa

    records: list[dict[str, Any]] = batch.to_pylist()
    for c in [f.name for f in batch.schema if pa.types.is_map(f.type)]:
        for record in records:
            value = record.get(c)
            if value is not None:
                record[c] = dict(value)
    return records
