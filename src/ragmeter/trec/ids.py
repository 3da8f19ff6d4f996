"""Docid columns the engine reads without one Python string per row, and the 64-bit hashes it joins on.

A :class:`~ragmeter.trec.io.Run` (or :class:`~ragmeter.trec.io.Qrels`) holds its docids as one of:

* an object array of ``str`` (dicts, pandas object columns, the line-by-line file reader);
* :class:`CategoricalIds` -- codes into distinct categories (pandas ``category``, Arrow ``dictionary``);
* :class:`ArrowIds` -- an Arrow string column (TREC files read by Arrow's CSV reader): a string object is
  made only for the rows asked for (tied scores, a duplicate, a join to confirm);
* :class:`MappingIds` -- the keys of a run's ``{qid: {docid: score}}`` dict, made into an array on first use.

The engine keys rows by a 64-bit hash of their docid. :func:`id_hashes` computes it with one of two
functions: ``"python"``, Python's ``hash`` (cached inside each ``str``, so free to read again), or
``"utf8"``, :func:`utf8_hashes` over the UTF-8 bytes of an Arrow column, eight bytes at a time in numpy.
:func:`hash_kind` picks the one that suits a run's column; the qrels are hashed with the same one. A hash
only proposes a match: every match is confirmed on the strings, so the function is free to collide.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from copy import copy as shallow_copy
from itertools import chain, repeat
from typing import TYPE_CHECKING, Any, Literal

import numpy as np
from numpy.typing import NDArray

from .._arrowbuf import arrow_numbers

if TYPE_CHECKING:  # an ArrowIds column exists only where pyarrow made it: imported where one is read
    import pyarrow as pa

HashKind = Literal["python", "utf8"]

_P1 = np.uint64(0x9E3779B97F4A7C15)
_M1, _M2 = np.uint64(0xBF58476D1CE4E5B9), np.uint64(0x94D049BB133111EB)
#: ``_TAIL[r]`` keeps the first ``r`` bytes (little-endian) of a 64-bit word; ``_TAIL[8]`` all of it.
_TAIL = np.array([(1 << (8 * r)) - 1 for r in range(8)] + [(1 << 64) - 1], dtype=np.uint64)


class CategoricalIds:
    """A dictionary-encoded id column: ``codes`` (int) into ``categories`` (object array of str).

    Indexes like an object array (``ids[rows]`` gives the strings) without holding one string
    reference per row; the engine hashes the categories once and gathers by code, so a categorical
    docid column (pandas ``category``, Arrow ``dictionary``) costs no per-row string work.
    """

    __slots__ = ("categories", "codes")

    def __init__(self, codes: NDArray[np.integer], categories: NDArray[Any]) -> None:
        self.codes = np.asarray(codes)
        self.categories = np.asarray(categories, dtype=object)

    def __len__(self) -> int:
        return len(self.codes)

    def __getitem__(self, idx: Any) -> Any:
        return self.categories[self.codes[idx]]

    def __array__(self, dtype: Any = None, copy: Any = None) -> NDArray[Any]:
        return self.categories[self.codes]

    def take(self, rows: NDArray[np.integer]) -> CategoricalIds:
        """The ids of ``rows``, still encoded."""
        return CategoricalIds(self.codes[rows], self.categories)

    def tolist(self) -> list[str]:
        """Every id, as a list of str."""
        return self.categories[self.codes].tolist()  # type: ignore[no-any-return]


class ArrowIds:
    """An Arrow string column (``string`` or ``large_string``, chunked or not, no nulls).

    Indexes like an object array: ``ids[i]`` is a str, ``ids[rows]`` an object array of the strings of
    ``rows`` (only those are made), ``np.asarray(ids)`` all of them.
    """

    __slots__ = ("column",)

    def __init__(self, column: pa.Array | pa.ChunkedArray) -> None:
        self.column = column

    def __len__(self) -> int:
        return len(self.column)

    def __getitem__(self, idx: Any) -> Any:
        if isinstance(idx, int | np.integer):
            return self.column[int(idx)].as_py()
        rows = np.arange(len(self.column))[idx] if isinstance(idx, slice) else np.asarray(idx)
        if rows.dtype == bool:
            rows = np.flatnonzero(rows)
        if not len(rows):
            return np.zeros(0, dtype=object)
        return _strings(self.column.take(arrow_numbers(rows.astype(np.int64, copy=False))))

    def __array__(self, dtype: Any = None, copy: Any = None) -> NDArray[Any]:
        return _strings(self.column)

    def take(self, rows: NDArray[np.integer]) -> ArrowIds:
        """The ids of ``rows``, still in Arrow."""
        return ArrowIds(self.column.take(arrow_numbers(np.asarray(rows, dtype=np.int64))))

    def tolist(self) -> list[str]:
        """Every id, as a list of str."""
        return self.column.to_pylist()  # type: ignore[no-any-return]


def _strings(column: pa.Array | pa.ChunkedArray) -> NDArray[Any]:
    """An Arrow string column as an object array of str (``to_numpy(zero_copy_only=False)`` would import
    pandas, ~0.4 s, through pyarrow's pandas shim)."""
    return np.array(column.to_pylist(), dtype=object)


class MappingIds:
    """The docids of a ``{qid: {docid: value}}`` dict, in its order, made into an object array of str (by
    ``make``, from the raw keys) on first use only: a run given as dicts is judged through the dicts, so
    only tied scores, or a run joined on keys, make them.

    Indexes like an object array; :meth:`take` shares the one array the column makes.
    :attr:`converted` says whether a key was not a str (two keys such as ``1`` and ``"1"`` are then
    one docid: the dict no longer rules out a docid listed twice in a query).
    """

    __slots__ = ("_inner", "_made", "_make", "_rows", "_total")

    def __init__(self, inner: Sequence[Mapping[Any, Any]], total: int,
                 make: Callable[[NDArray[Any]], NDArray[Any]]) -> None:
        self._inner, self._total, self._make = inner, total, make
        self._made: list[tuple[NDArray[Any], bool]] = []  # (strings, converted), shared with take()'s columns
        self._rows: NDArray[np.integer] | None = None

    def _strings(self) -> NDArray[Any]:
        if not self._made:
            raw = np.fromiter(chain.from_iterable(self._inner), dtype=object, count=self._total)
            made = self._make(raw)
            self._made.append((made, made is not raw))
        return self._made[0][0]

    @property
    def converted(self) -> bool:
        """Whether a key of the dicts was not a str (made into one with ``str``); makes the ids."""
        self._strings()
        return self._made[0][1]

    def __len__(self) -> int:
        return self._total if self._rows is None else len(self._rows)

    def __getitem__(self, idx: Any) -> Any:
        return self._strings()[idx if self._rows is None else self._rows[idx]]

    def __array__(self, dtype: Any = None, copy: Any = None) -> NDArray[Any]:
        return self._strings() if self._rows is None else self._strings()[self._rows]

    def take(self, rows: NDArray[np.integer]) -> MappingIds:
        """The ids of ``rows``, still unmade."""
        taken = shallow_copy(self)
        taken._rows = rows if self._rows is None else self._rows[rows]
        return taken

    def tolist(self) -> list[str]:
        """Every id, as a list of str."""
        return np.asarray(self).tolist()  # type: ignore[no-any-return]


def compact_strings(strings: list[str]) -> list[str]:
    """Fresh copies of ``strings``, allocated one after another in this order (equal strings, so the same
    dict keys). Ids taken from a caller's dicts are spread over its memory (a run's qids sit between its
    docids), and every dict key read or compared there is a cache miss (~0.5 us on 2 cores, against ~0.05 us
    for the copies): sorting the qids, indexing them, and the per-query dicts of the result read them often."""
    return [s.encode("utf-8", "surrogatepass").decode("utf-8", "surrogatepass") for s in strings]


def take_ids(ids: Any, rows: NDArray[np.integer]) -> Any:
    """The ids of ``rows``, in the same kind of column as ``ids``."""
    return ids.take(rows) if isinstance(ids, CategoricalIds | ArrowIds | MappingIds) else ids[rows]


def hash_kind(ids: Any) -> HashKind:
    """The hash function that suits the id column ``ids``: ``"utf8"`` for :class:`ArrowIds`, else ``"python"``."""
    return "utf8" if isinstance(ids, ArrowIds) else "python"


def id_hashes(ids: Any, kind: HashKind) -> NDArray[np.uint64]:
    """The 64-bit hash of every id of ``ids`` (any id column) with the function ``kind`` (a fresh array)."""
    if isinstance(ids, CategoricalIds):
        return id_hashes(ids.categories, kind)[ids.codes]
    if kind == "utf8":
        return utf8_hashes(ids.column if isinstance(ids, ArrowIds) else _utf8_column(np.asarray(ids, dtype=object)))
    return np.fromiter(map(hash, np.asarray(ids)), dtype=np.int64, count=len(ids)).view(np.uint64)


def _utf8_column(strings: NDArray[Any]) -> pa.Array:
    """The UTF-8 bytes of ``strings`` as an Arrow binary column, built from buffers (``pa.array`` would
    import pandas through pyarrow's pandas shim); a lone surrogate (which no UTF-8 file holds) is
    encoded as such (``surrogatepass``)."""
    import pyarrow as pa

    items = strings.tolist()
    text = "".join(items)
    if text.isascii():  # one byte per character: encoded at once
        parts, data = items, text.encode("ascii")
    else:
        parts = list(map(str.encode, items, repeat("utf-8"), repeat("surrogatepass")))
        data = b"".join(parts)
    offsets = np.zeros(len(items) + 1, dtype=np.int64)
    np.cumsum(np.fromiter(map(len, parts), dtype=np.int64, count=len(items)), out=offsets[1:])
    return pa.LargeBinaryArray.from_buffers(pa.large_binary(), len(items),
                                            [None, pa.py_buffer(offsets), pa.py_buffer(data)])


def utf8_hashes(column: pa.Array | pa.ChunkedArray) -> NDArray[np.uint64]:
    """A 64-bit hash of the UTF-8 bytes of every string of an Arrow string column (no nulls).

    Each string is read as little-endian 64-bit words straight from the column's data buffer (the last
    word of a string masked to its length); ``h = (h ^ word) * P`` folds them in, starting from the
    length, and splitmix64's finaliser mixes the result. The loop runs once per eight bytes of the
    longest string, over all strings at once.
    """
    import pyarrow as pa

    chunks = column.chunks if isinstance(column, pa.ChunkedArray) else [column]
    parts = [_chunk_hashes(c) for c in chunks]
    return np.concatenate(parts) if len(parts) != 1 else parts[0]


def _chunk_hashes(arr: pa.Array) -> NDArray[np.uint64]:
    import pyarrow as pa

    offset_type = np.int64 if pa.types.is_large_string(arr.type) or pa.types.is_large_binary(arr.type) else np.int32
    _, off_buf, data_buf = arr.buffers()
    if not len(arr):
        return np.zeros(0, dtype=np.uint64)
    offsets = np.frombuffer(off_buf, dtype=offset_type)[arr.offset:arr.offset + len(arr) + 1]
    data = np.frombuffer(data_buf, dtype=np.uint8) if data_buf is not None else np.zeros(0, np.uint8)
    starts, lengths = offsets[:-1], np.diff(offsets)
    end = int(offsets[-1])
    if end < 8:  # too short for one word: read from a padded copy
        data = np.concatenate((data[:end], np.zeros(8, np.uint8)))
        end = len(data)
    last = end - 8  # the last position a whole word can be read from
    words = np.ndarray((last + 1,), dtype="<u8", buffer=data, strides=(1,))  # unaligned 8-byte reads
    h = lengths.astype(np.uint64)
    h *= _P1
    longest, shortest = int(lengths.max()), int(lengths.min())
    for k in range(0, longest, 8):
        pos = starts + k
        if int(pos[-1]) <= last:  # offsets ascend: the last string's word is the furthest read
            w = words[pos]
        else:  # a word would run past the buffer: read the last whole word and shift its bytes down
            over = np.maximum(pos - last, 0).astype(np.uint64)
            w = words[np.minimum(pos, last)] >> (over * np.uint64(8))
        if shortest < k + 8:
            w &= _TAIL[np.clip(lengths - k, 0, 8)]
        mixed = h ^ w
        mixed *= _P1
        mixed ^= mixed >> np.uint64(29)
        h = mixed if shortest > k else np.where(lengths > k, mixed, h)  # a string ended: its hash stays
    h ^= h >> np.uint64(30)
    h *= _M1
    h ^= h >> np.uint64(27)
    h *= _M2
    h ^= h >> np.uint64(31)
    return h
