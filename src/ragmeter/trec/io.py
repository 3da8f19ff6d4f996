"""TREC qrels and runs as columnar numpy arrays, with symmetric I/O.

File formats (whitespace separated, one judgement or one retrieved document per line, ``.gz``
read and written transparently):

* **qrels**: ``qid iter docid rel`` (``iter`` is ignored, usually ``0``). ``rel`` is a number;
  fractional grades are kept as they are (trec_eval would truncate them with ``atol``), negative
  grades mean "judged non-relevant".
* **run**: ``qid Q0 docid rank score tag``. ``rank`` is ignored (the ranking is by score, as in
  trec_eval); fields after ``tag`` are ignored; the run's name is the tag of the last line.

Blank lines and lines starting with ``#`` are skipped, as trec_eval does. A bad line raises
:class:`~ragmeter.errors.InputError` naming the file, the 1-based line, the field and what was
expected.

:class:`Qrels` and :class:`Run` hold one row per line in four arrays: ``qid_codes`` (int64 index
into ``qids``, the distinct query ids in first-seen order), ``docids`` (object array of str; qrels
and runs keep them as an :class:`~ragmeter.trec.ids.ArrowIds` column when read by Arrow's CSV reader, as
:class:`~ragmeter.trec.ids.MappingIds` (made on first use) when built from a dict, as
:class:`~ragmeter.trec.ids.CategoricalIds` from a categorical column: each indexes like the array) and
``rels`` / ``scores`` (float64). They are built from files, from the dict-of-dicts form
(``{qid: {docid: value}}``), from pandas DataFrames or pyarrow Tables with columns ``qid``,
``docid`` and ``rel`` / ``score``; and written back to any of those forms.
"""

from __future__ import annotations

import gzip
import math
import mmap
import operator
import os
import re
import sys
from collections.abc import Callable, Mapping
from functools import partial
from itertools import chain, repeat
from pathlib import Path
from typing import Any, TypeVar

import numpy as np
from numpy.typing import NDArray

try:  # the arrow extra: Arrow's CSV reader parses TREC files (imported with this module, not by the first parse)
    import pyarrow as pa
    import pyarrow.compute as pc
    import pyarrow.csv as pa_csv
except ImportError:  # the line parser reads every file, into the same values
    pa = pc = pa_csv = None  # type: ignore[assignment]

from .._arrowbuf import arrow_numbers, np_bool, np_num
from .._optional import is_pandas_frame, require
from ..errors import EmptyInputError, InputError, InvalidParameterError
from ..types import finite_number
from .ids import ArrowIds, CategoricalIds, MappingIds
from .ranking import rank_rows

T = TypeVar("T")

PathLike = str | os.PathLike[str]
QRELS_FIELDS = ("qid", "iter", "docid", "rel")
RUN_FIELDS = ("qid", "Q0", "docid", "rank", "score", "tag")
DEFAULT_RUN_NAME = "ragmeter"
_values = operator.methodcaller("values")  # a C-level ``d.values()``, for any Mapping


# ---- helpers -------------------------------------------------------------------------------------
def _read_bytes(path: PathLike) -> bytes | mmap.mmap:
    """The file's bytes, decompressed when gzipped; a plain file is mapped read-only, not copied."""
    p = Path(path)
    if not p.exists():
        raise InputError(f"no such file; check the path (got {str(p)!r})", path=str(p))
    with open(p, "rb") as fh:
        gzipped = p.suffix == ".gz" or fh.read(2) == b"\x1f\x8b"
        if not gzipped and os.fstat(fh.fileno()).st_size:
            return mmap.mmap(fh.fileno(), 0, access=mmap.ACCESS_READ)
    data = p.read_bytes()
    if gzipped:
        try:
            data = gzip.decompress(data)
        except (OSError, EOFError) as exc:
            raise InputError(f"not a valid gzip file ({exc})", path=str(p)) from None
    return data


def _open_write(path: PathLike) -> Any:
    p = Path(path)
    p.parent.mkdir(parents=True, exist_ok=True)
    if p.suffix == ".gz":
        return gzip.open(p, "wt", encoding="utf-8", newline="\n", compresslevel=6)
    return open(p, "w", encoding="utf-8", newline="\n")


def _factorize_grouped(values: NDArray[Any]) -> tuple[NDArray[np.int64], NDArray[Any]]:
    """Factorize ``values`` cheaply when equal values come in runs (a sorted or grouped qid column).

    Only the first value of every run is hashed; the codes are repeated over the run. Correct for
    any order (a value in two separate runs gets one code).
    """
    n = len(values)
    if n == 0:
        return np.zeros(0, dtype=np.int64), np.asarray([], dtype=object)
    change = np.flatnonzero(values[1:] != values[:-1]) + 1
    starts = np.concatenate(([0], change))
    heads = values[starts]
    first_seen: dict[Any, int] = {}
    codes = np.fromiter((first_seen.setdefault(h, len(first_seen)) for h in heads.tolist()), dtype=np.int64,
                        count=len(heads))
    lengths = np.diff(np.concatenate((starts, [n])))
    return np.repeat(codes, lengths), np.asarray(list(first_seen), dtype=object)


def _as_str_array(values: Any, what: str) -> NDArray[Any]:
    """An object array of str; non-str ids (ints, numpy scalars) are converted with ``str``."""
    arr = np.asarray(values, dtype=object)
    if arr.ndim != 1:
        raise InvalidParameterError(f"{what}: expected a 1-d column, got shape {arr.shape}")
    if len(arr) and not _all_str(arr):
        arr = np.asarray([str(x) for x in arr.tolist()], dtype=object)
    return arr


def _all_str(arr: NDArray[Any]) -> bool:
    """Whether every item of the object array ``arr`` is a str: pandas' C scan when pandas is loaded
    already (a DataFrame was handed in; ~4x faster), else a Python one. Never imports pandas."""
    pd = sys.modules.get("pandas")
    if pd is not None:
        return bool(pd.api.types.infer_dtype(arr, skipna=False) == "string")
    return all(map(isinstance, arr.tolist(), repeat(str)))


def _fmt_number(v: float) -> str:
    return str(int(v)) if float(v).is_integer() and abs(v) < 2**53 else repr(float(v))


class _Table:
    """Shared columnar storage of :class:`Qrels` and :class:`Run` (see the module docstring)."""

    _value_name = "value"
    _docids_read_through_dicts = False  # built from a dict: docids kept as MappingIds, checked when read
    __slots__ = ("_index", "_plain", "docids", "qid_codes", "qids", "values")

    def __init__(self, qid_codes: NDArray[np.int64], qids: NDArray[Any], docids: NDArray[Any],
                 values: NDArray[np.float64]) -> None:
        self.qid_codes = np.asarray(qid_codes, dtype=np.int64)
        self.qids = np.asarray(qids, dtype=object)
        self.docids = docids if isinstance(docids, CategoricalIds | ArrowIds | MappingIds) else np.asarray(
            docids, dtype=object)
        self.values = np.asarray(values, dtype=np.float64)
        if not (len(self.qid_codes) == len(self.docids) == len(self.values)):
            raise InvalidParameterError(
                f"columns must have equal lengths, got qid={len(self.qid_codes)}, "
                f"docid={len(self.docids)}, {self._value_name}={len(self.values)}"
            )
        self._index: dict[str, Any] = {}
        self._plain = False  # built from a dict whose qids and docids were all str already

    def __len__(self) -> int:
        return len(self.values)

    @property
    def plain(self) -> bool:
        """True when built from a dict whose qids and docids were all ``str`` already, so that dict can
        be read directly in their place (``build_batch``'s ``sources``). A run's docids are not looked
        at when it is built (they stay a :class:`~ragmeter.trec.ids.MappingIds`): the engine checks them
        as it reads the dict, and reads them from ``docids`` should one not be a str."""
        return self._plain

    def derived(self, key: str, build: Callable[[], T]) -> T:
        """``build()``, computed on the first call for ``key`` and kept with this table (its columns are
        not changed after construction, so a value derived from them stays valid)."""
        if key not in self._index:
            self._index[key] = build()
        return self._index[key]

    @property
    def qid(self) -> NDArray[Any]:
        """The query id of every row (object array of str)."""
        return self.qids[self.qid_codes]

    @property
    def num_queries(self) -> int:
        """Number of distinct query ids."""
        return len(self.qids)

    # ---- constructors shared by both kinds ------------------------------------------------------
    @classmethod
    def _from_mapping(cls, data: Mapping[Any, Mapping[Any, Any]], **kw: Any) -> Any:
        if not isinstance(data, Mapping):
            raise InvalidParameterError(f"expected a dict {{qid: {{docid: value}}}}, got {type(data).__name__}")
        inner = list(data.values())
        for q, d in () if all(map(isinstance, inner, repeat(dict))) else zip(data, inner, strict=True):
            if type(d) is not dict and not isinstance(d, Mapping):
                raise InvalidParameterError(
                    f"query {q!r}: expected a dict {{docid: {cls._value_name}}}, got {type(d).__name__}"
                )
        lengths = np.fromiter(map(len, inner), dtype=np.int64, count=len(inner))
        total = int(lengths.sum())
        raw_qids = np.asarray(list(data), dtype=object)
        qids = _as_str_array(raw_qids, "qid")
        if qids is not raw_qids and len(set(qids.tolist())) < len(qids):  # e.g. 1 and "1": one TREC qid
            seen: set[str] = set()
            # set.add returns None: ``or seen.add(q)`` records q and leaves the test false
            twice = next(q for q in qids.tolist() if q in seen or seen.add(q))  # type: ignore[func-returns-value]
            raise InputError(f"query {twice!r} is given twice (keys {[k for k in data if str(k) == twice]!r}): "
                             "TREC qids are text, so each must be one key", field="qid")
        if cls._docids_read_through_dicts:
            docids: Any = MappingIds(inner, total, partial(_as_str_array, what="docid"))
        else:
            raw_docids = np.fromiter(chain.from_iterable(inner), dtype=object, count=total)
            docids = _as_str_array(raw_docids, "docid")
        try:
            values = np.fromiter(chain.from_iterable(map(_values, inner)), dtype=np.float64, count=total)
        except (TypeError, ValueError, OverflowError):
            bad = next((q, k, v) for q, d in data.items() for k, v in d.items() if not _is_number(v))
            raise InputError(f"query {bad[0]!r}, docid {bad[1]!r}: {_not_finite(cls, bad[2])}",
                             field=cls._value_name) from None
        bad_mask = ~np.isfinite(values)
        if bad_mask.any():  # as _from_frame and the file readers: a NaN or infinite grade made ndcg NaN
            i = int(np.flatnonzero(bad_mask)[0])
            q = int(np.searchsorted(np.cumsum(lengths), i, side="right"))
            d = list(inner[q])[i - int(lengths[:q].sum())]
            raise InputError(f"query {raw_qids[q]!r}, docid {d!r}: {_not_finite(cls, values[i])}",
                             field=cls._value_name)
        codes = np.repeat(np.arange(len(qids), dtype=np.int64), lengths)
        table = cls(codes, qids, docids, values, **kw)
        table._plain = qids is raw_qids and (isinstance(docids, MappingIds) or docids is raw_docids)
        return table

    @classmethod
    def _from_frame(cls, df: Any, **kw: Any) -> Any:
        value = cls._value_name
        if _is_arrow(df):
            names, column = df.column_names, _arrow_column
        elif is_pandas_frame(df):
            names, column = df.columns, _frame_column
        else:
            raise InvalidParameterError(f"expected a pandas DataFrame or pyarrow Table, got {type(df).__name__}")
        missing = [c for c in ("qid", "docid", value) if c not in names]
        if missing:
            raise InputError(f"expected columns qid, docid, {value}; missing {', '.join(missing)}", field=missing[0])
        qcol = column(df, "qid")
        if isinstance(qcol, tuple):
            codes, qids = qcol[0].astype(np.int64), _as_str_array(qcol[1], "qid")
        else:
            codes, qids = _factorize_grouped(_as_str_array(np.asarray(qcol), "qid"))
            qids = _as_str_array(qids, "qid")
        if (codes < 0).any():
            raise InputError("expected a query id on every row, got a missing value", field="qid")
        dcol = column(df, "docid")
        if isinstance(dcol, tuple):
            dcodes, cats = dcol[0], _as_str_array(dcol[1], "docid")
            if (dcodes < 0).any():
                raise InputError("expected a docid on every row, got a missing value", field="docid")
            docids: Any = CategoricalIds(dcodes, cats) if cls is Run else cats[dcodes]
        else:
            docids = _as_str_array(np.asarray(dcol, dtype=object), "docid")
        vcol = df.column(value).to_numpy() if _is_arrow(df) else df[value]
        try:
            values = np.asarray(vcol, dtype=np.float64)
        except (TypeError, ValueError):
            raise InputError(f"expected numbers in column {value!r}", field=value) from None
        if np.isnan(values).any():
            row = int(np.flatnonzero(np.isnan(values))[0]) + 1
            raise InputError("expected a number, got a missing value (NaN)", line=row, field=value)
        if np.isinf(values).any():
            row = int(np.flatnonzero(np.isinf(values))[0]) + 1
            raise InputError(_not_finite(cls, values[row - 1]), line=row, field=value)
        return cls(codes, qids, docids, values, **kw)

    def _frame(self) -> Any:
        pd = require("pandas", f"{type(self).__name__}.to_dataframe()")
        return pd.DataFrame({"qid": self.qid, "docid": np.asarray(self.docids), self._value_name: self.values})

    def _nested(self, cast: Any) -> dict[str, dict[str, Any]]:
        order = np.argsort(self.qid_codes, kind="stable")
        counts = np.bincount(self.qid_codes, minlength=len(self.qids))
        ends = np.cumsum(counts)
        docs = self.docids[order].tolist()
        vals = [cast(v) for v in self.values[order].tolist()]
        out: dict[str, dict[str, Any]] = {}
        start = 0
        for q, end in zip(self.qids.tolist(), ends.tolist(), strict=True):
            out[q] = dict(zip(docs[start:end], vals[start:end], strict=True))
            start = end
        return out


def _is_number(v: Any) -> bool:
    """Whether ``v`` reads as a finite float (a relevance grade or a score)."""
    try:
        return math.isfinite(float(v))
    except (TypeError, ValueError, OverflowError):
        return False


def _not_finite(cls: type, v: Any) -> str:
    """The message for a value ``cls`` (Qrels or Run) refuses: not a number, NaN or infinite (an
    integer beyond a float's range included: a float would hold it as infinity)."""
    what = "relevance grade" if cls is Qrels else "score"
    try:
        finite_number(v if isinstance(v, int | float) else float(v), what)
    except (TypeError, ValueError) as exc:  # float("x"), or finite_number's refusal
        return str(exc) if "finite" in str(exc) else f"expected a number, got {v!r}"
    return f"expected a finite {what}, got {v!r}"


def _is_arrow(obj: Any) -> bool:
    return type(obj).__module__.startswith("pyarrow") and hasattr(obj, "column_names")


def _arrow_column(df: Any, name: str) -> Any:
    """A Table's column as numpy; a ``dictionary`` column as ``(codes, categories)``, -1 for null."""
    col = df.column(name)
    if pa.types.is_dictionary(col.type):
        col = col.combine_chunks() if hasattr(col, "combine_chunks") else col
        return np_num(col.indices, fill=-1), np.asarray(col.dictionary.to_pylist(), dtype=object)
    return np.asarray(col.to_numpy(zero_copy_only=False))


def _frame_column(df: Any, name: str) -> Any:
    """A DataFrame's column (a Series); a ``category`` column as ``(codes, categories)``, -1 for missing."""
    col = df[name]
    if type(col.dtype).__name__ == "CategoricalDtype":
        return np.asarray(col.cat.codes), np.asarray(col.cat.categories, dtype=object)
    return col



# ---- file parsing ---------------------------------------------------------------------------------
#: The allocator of the columns a file is parsed into: the C library's. Arrow's default (mimalloc in the
#: wheels) took 0.5 s of system time more for a 3-million-line run (Run.from_file 0.87-0.99 s against
#: 0.57-0.61 s; 2 cores, transparent huge pages on madvise); the memory is one parse's, freed with it.
_PARSE_POOL = pa.system_memory_pool() if pa is not None else None

#: UTF-8 of the non-ASCII characters ``str.split()`` splits on (U+0085, U+00A0, U+1680, U+2000-U+200A,
#: U+2028, U+2029, U+202F, U+205F, U+3000)
_UNICODE_SPACE = re.compile(rb"\xc2[\x85\xa0]|\xe1\x9a\x80|\xe2\x80[\x80-\x8a\xa8\xa9\xaf]|\xe2\x81\x9f|\xe3\x80\x80")


def _split_like_str_split(column: pa.ChunkedArray) -> bool:
    """Whether every field of a string column Arrow split at single spaces is one ``str.split()`` field too:
    not empty, and no byte of it whitespace or control (tab, vertical tab, form feed, U+001C-U+001F...) or
    a Unicode space. Reads the column's data buffers, about half the file, not one string per row."""
    if pc.min(pc.binary_length(column)).as_py() == 0:
        return False
    for chunk in column.chunks:
        if not len(chunk):
            continue
        offsets = np.frombuffer(chunk.buffers()[1], dtype=np.int32)[chunk.offset:chunk.offset + len(chunk) + 1]
        text = np.frombuffer(chunk.buffers()[2], dtype=np.uint8)[int(offsets[0]):int(offsets[-1])]
        # text.data: the same bytes as a memoryview (numpy's stubs make an ndarray a Buffer on Python >= 3.12 only)
        if len(text) and (int(text.min()) <= 0x20 or (int(text.max()) >= 0x80 and _UNICODE_SPACE.search(text.data))):
            return False
    return True


def _fast_parse(data: bytes | mmap.mmap, names: tuple[str, ...], value: str) -> dict[str, Any] | None:
    """Parse with Arrow's CSV reader (one space between fields): ``{"qid": codes, "qids": distinct ids,
    "docid": ArrowIds, value: float64 array, "tag": last tag}``; None when the file needs the careful
    line-by-line parser (comments, carriage returns, any whitespace but single spaces between fields, a
    missing or extra field, a value that is not a number, bytes that are not UTF-8), which then reports
    the first bad line.

    Every field is read and none may be empty or hold another whitespace character, so the fields are
    those ``str.split()`` finds (a repeated space can never shift a line's fields). Arrow's number reader
    trims spaces and tabs around a value: they separate fields for ``str.split()`` as well. None, too,
    without pyarrow."""
    if not len(data) or data.find(b"\r") != -1:  # Arrow ends a line at a lone carriage return, str.split does not
        return None
    if pa_csv is None:
        return None
    try:
        table = pa_csv.read_csv(
            pa.py_buffer(data),
            read_options=pa_csv.ReadOptions(column_names=list(names)),
            parse_options=pa_csv.ParseOptions(delimiter=" ", quote_char=False, double_quote=False,
                                              escape_char=False, newlines_in_values=False),
            convert_options=pa_csv.ConvertOptions(
                column_types={n: (pa.float64() if n == value else pa.string()) for n in names},
                strings_can_be_null=False, quoted_strings_can_be_null=False),
            memory_pool=_PARSE_POOL,
        )
    except (pa.ArrowInvalid, pa.ArrowNotImplementedError):
        return None
    if not len(table) or table.column(value).null_count:
        return None
    if not all(_split_like_str_split(table.column(n)) for n in names if n != value):
        return None
    values = np_num(table.column(value))  # from the buffers: ChunkedArray.to_numpy() imports pandas (~0.4 s)
    if np.isnan(values).any():
        return None
    codes, qids = _arrow_qid_codes(table.column("qid"))
    if any(q.startswith("#") for q in qids.tolist()):  # a comment line with as many words as a line has fields
        return None
    docids = ArrowIds(table.column("docid"))
    tag = table.column("tag")[-1].as_py() if "tag" in names else None
    return {"qid": codes, "qids": qids, "docid": docids, value: values, "tag": tag}


def _arrow_qid_codes(column: pa.ChunkedArray) -> tuple[NDArray[np.int64], NDArray[Any]]:
    """``(codes, qids)`` of an Arrow string column: the distinct ids in first-seen order and each row's index
    into them. A file lists each query's lines together: the ids are compared with the next row's in Arrow
    and only the first of each block is read in Python (~4x faster than Arrow's dictionary_encode, which
    hashes every row); interleaved ids are dictionary-encoded."""
    n = len(column)
    starts = np.flatnonzero(np.concatenate(([True], np_bool(pc.not_equal(column.slice(1), column.slice(0, n - 1))))))
    if len(starts) > n // 4:
        encoded = pc.dictionary_encode(column.combine_chunks(memory_pool=_PARSE_POOL), memory_pool=_PARSE_POOL)
        return np_num(encoded.indices).astype(np.int64), np.asarray(encoded.dictionary.to_pylist(), dtype=object)
    heads = column.take(arrow_numbers(starts)).to_pylist()
    first_seen: dict[str, int] = {}
    block_codes = np.fromiter(map(first_seen.setdefault, heads, map(len, repeat(first_seen))), dtype=np.int64,
                              count=len(heads))
    return np.repeat(block_codes, np.diff(np.append(starts, n))), np.asarray(list(first_seen), dtype=object)


def _slow_parse(data: bytes, path: str, names: tuple[str, ...], value_field: str, exact: bool
                ) -> tuple[list[str], list[str], list[float], str | None]:
    """Line-by-line parser that reports the first bad line precisely."""
    qids: list[str] = []
    docids: list[str] = []
    values: list[float] = []
    last_tag: str | None = None
    n = len(names)
    value_pos = names.index(value_field)
    layout = " ".join(names)
    text = data.decode("utf-8", errors="strict")
    for lineno, line in enumerate(text.split("\n"), start=1):
        parts = line.split()
        if not parts or parts[0].startswith("#"):
            continue
        if len(parts) < n or (exact and len(parts) > n):
            raise InputError(
                f"expected {n} whitespace-separated fields ({layout}), got {len(parts)}: {line.strip()[:80]!r}",
                path=path, line=lineno, field=names[min(len(parts), n - 1)] if len(parts) < n else None,
            )
        try:
            v = float(parts[value_pos])
        except ValueError:
            raise InputError(f"expected a number, got {parts[value_pos]!r}", path=path, line=lineno,
                             field=value_field) from None
        if v != v:
            raise InputError(f"expected a number, got {parts[value_pos]!r}", path=path, line=lineno,
                             field=value_field)
        if not math.isfinite(v):  # "inf", or a number beyond a float's range such as 1e999
            what = "relevance grade" if value_field == "rel" else "score"
            raise InputError(f"expected a finite {what}, got {parts[value_pos]!r}", path=path, line=lineno,
                             field=value_field)
        qids.append(parts[0])
        docids.append(parts[2])
        values.append(v)
        if n == 6:
            last_tag = parts[5]
    return qids, docids, values, last_tag


def _parse_file(path: PathLike, names: tuple[str, ...], value: str, exact: bool
                ) -> tuple[NDArray[np.int64], NDArray[Any], Any, NDArray[np.float64], str | None]:
    data = _read_bytes(path)
    fast = _fast_parse(data, names, value)
    if fast is not None and not np.isfinite(fast[value]).all():
        fast = None  # the line parser names the line of the first infinite value
    tag: str | None
    if fast is not None:
        codes, uniques, dcol, vcol, tag = fast["qid"], fast["qids"], fast["docid"], fast[value], fast["tag"]
    else:
        data = data if isinstance(data, bytes) else data[:]
        try:
            data.decode("utf-8")
        except UnicodeDecodeError as exc:
            line = data[: exc.start].count(b"\n") + 1
            raise InputError(f"expected UTF-8 text, got byte 0x{data[exc.start]:02x}", path=str(path),
                             line=line) from None
        q, d, v, tag = _slow_parse(data, str(path), names, value, exact)
        qcol, dcol, vcol = np.asarray(q, dtype=object), np.asarray(d, dtype=object), np.asarray(v, dtype=np.float64)
        codes, uniques = _factorize_grouped(qcol)
    if len(vcol) == 0:
        raise EmptyInputError("the file holds no lines; expected " + " ".join(names), path=str(path))
    return codes, uniques, dcol, vcol, tag


# ---- public classes --------------------------------------------------------------------------------
class Qrels(_Table):
    """Relevance judgements: one row per ``(qid, docid, rel)``.

    Build with :meth:`from_file`, :meth:`from_dict`, :meth:`from_pandas` (also a pyarrow Table)
    or :func:`as_qrels`; write with :meth:`save`, :meth:`to_dataframe`, :meth:`to_dict`.
    """

    _value_name = "rel"
    __slots__ = ()

    @property
    def rels(self) -> NDArray[np.float64]:
        """The relevance grade of every row."""
        return self.values

    @classmethod
    def from_file(cls, path: PathLike) -> Qrels:
        """Read a TREC qrels file (``qid iter docid rel``; ``.gz`` allowed)."""
        codes, qids, docids, rels, _ = _parse_file(path, QRELS_FIELDS, "rel", exact=True)
        return cls(codes, qids, docids, rels)  # Arrow's reader: docids stay in Arrow (hashed from their bytes)

    @classmethod
    def from_dict(cls, qrels: Mapping[Any, Mapping[Any, Any]]) -> Qrels:
        """Build from ``{qid: {docid: rel}}``."""
        return cls._from_mapping(qrels)

    @classmethod
    def from_pandas(cls, df: Any) -> Qrels:
        """Build from a DataFrame (or pyarrow Table) with columns ``qid``, ``docid``, ``rel``."""
        return cls._from_frame(df)

    from_arrow = from_pandas

    def to_dataframe(self) -> Any:
        """Columns ``qid``, ``docid``, ``rel``, one row per judgement (needs pandas)."""
        return self._frame()

    def to_dict(self) -> dict[str, dict[str, float]]:
        """The ``{qid: {docid: rel}}`` form (integral grades as int)."""
        return self._nested(lambda v: int(v) if float(v).is_integer() else v)

    def save(self, path: PathLike) -> None:
        """Write a TREC qrels file (gzipped when ``path`` ends in ``.gz``)."""
        q, d = self.qid.tolist(), self.docids.tolist()
        r = [_fmt_number(v) for v in self.values.tolist()]
        with _open_write(path) as fh:
            fh.writelines(f"{a} 0 {b} {c}\n" for a, b, c in zip(q, d, r, strict=True))


class Run(_Table):
    """A ranked run: one row per ``(qid, docid, score)``, plus the run's ``name`` (TREC tag).

    ``unique`` is True when the builder guarantees no docid repeats within a query (the dict
    form), which lets the engine skip the duplicate check.
    """

    _value_name = "score"
    _docids_read_through_dicts = True
    __slots__ = ("name", "unique")

    def __init__(self, qid_codes: NDArray[np.int64], qids: NDArray[Any], docids: NDArray[Any],
                 values: NDArray[np.float64], *, name: str = DEFAULT_RUN_NAME, unique: bool = False) -> None:
        super().__init__(qid_codes, qids, docids, values)
        self.name = name
        self.unique = unique

    @property
    def scores(self) -> NDArray[np.float64]:
        """The score of every row."""
        return self.values

    @classmethod
    def from_file(cls, path: PathLike) -> Run:
        """Read a TREC run file (``qid Q0 docid rank score tag``; ``.gz`` allowed)."""
        codes, qids, docids, scores, tag = _parse_file(path, RUN_FIELDS, "score", exact=False)
        return cls(codes, qids, docids, scores, name=tag or DEFAULT_RUN_NAME)

    @classmethod
    def from_dict(cls, run: Mapping[Any, Mapping[Any, Any]], *, name: str = DEFAULT_RUN_NAME) -> Run:
        """Build from ``{qid: {docid: score}}``."""
        return cls._from_mapping(run, name=name, unique=True)

    @classmethod
    def from_pandas(cls, df: Any, *, name: str = DEFAULT_RUN_NAME) -> Run:
        """Build from a DataFrame (or pyarrow Table) with columns ``qid``, ``docid``, ``score``."""
        return cls._from_frame(df, name=name)

    from_arrow = from_pandas

    def to_dataframe(self) -> Any:
        """Columns ``qid``, ``docid``, ``score``, one row per retrieved document (needs pandas)."""
        return self._frame()

    def to_dict(self) -> dict[str, dict[str, float]]:
        """The ``{qid: {docid: score}}`` form."""
        return self._nested(float)

    def ranked_order(self) -> NDArray[np.int64]:
        """Row order of a TREC listing: qid as read, then trec_eval's ranking (score desc, docid desc)."""
        return rank_rows(self.qid_codes, self.values, self.docids)

    def save(self, path: PathLike) -> None:
        """Write a TREC run file, ranks numbered in trec_eval's order (gzipped for ``.gz``)."""
        order = self.ranked_order()
        codes = self.qid_codes[order]
        start = np.concatenate(([True], codes[1:] != codes[:-1]))
        first = np.maximum.accumulate(np.where(start, np.arange(len(codes)), 0))
        ranks = (np.arange(len(codes)) - first + 1).tolist()
        q, d = self.qids[codes].tolist(), self.docids[order].tolist()
        s = [repr(v) for v in self.values[order].tolist()]
        tag = self.name
        with _open_write(path) as fh:
            fh.writelines(f"{a} Q0 {b} {r} {c} {tag}\n" for a, b, r, c in zip(q, d, ranks, s, strict=True))


def _coerce(cls: Any, obj: Any, what: str, value: str) -> Any:
    """``obj`` as ``cls`` (Qrels or Run), from itself, a path, a dict or a DataFrame / pyarrow Table."""
    if isinstance(obj, cls):
        return obj
    if isinstance(obj, str | os.PathLike):
        return cls.from_file(obj)
    if isinstance(obj, Mapping):
        return cls.from_dict(obj)
    if is_pandas_frame(obj) or _is_arrow(obj):
        return cls.from_pandas(obj)
    raise InvalidParameterError(
        f"{what}: expected a dict {{qid: {{docid: {value}}}}}, a DataFrame, a pyarrow Table, a {cls.__name__} "
        f"or a path, got {type(obj).__name__}"
    )


def as_qrels(obj: Any) -> Qrels:
    """Coerce a :class:`Qrels`, a dict, a DataFrame / pyarrow Table or a path into :class:`Qrels`."""
    return _coerce(Qrels, obj, "qrels", "rel")


def as_run(obj: Any) -> Run:
    """Coerce a :class:`Run`, a dict, a DataFrame / pyarrow Table or a path into :class:`Run`."""
    return _coerce(Run, obj, "run", "score")
