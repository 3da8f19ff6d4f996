"""Sample ids of a columnar run (local or Ray): the duplicate-id check by 64-bit hashes.

The reader's rule (:class:`~ragmeter.io.records.RowConverter`) is exact: a row whose id an
earlier row has is a bad row naming that earlier row. Each block of rows gets its ids
(:func:`block_ids`: the id column, a row without one numbered by its position; on the Ray
engine the workers compute them) and a 64-bit hash of each (:func:`id_hashes`, vectorised over the Arrow string column;
:func:`hash_id` is the same function for one string). The driver's :class:`HashedIds` keeps the
hashes of every id seen sorted, in a few runs of growing size, each with the row it came from,
so checking a chunk of rows is a few ``searchsorted`` calls and no Python per row; a bitmap of
at least :data:`BITS_PER_ID` bits per id seen, indexed by a hash's top bits, answers "never seen"
for most of a chunk's ids with one array lookup, so only the few it cannot rule out (about one in
:data:`BITS_PER_ID` when the ids are new) are looked up in the runs.

A hash match is never taken for a duplicate: the two ids are compared (two different ids with
one hash are both kept), so the check stays exact; the hash only makes "never seen" cheap to
prove.

The hash: ``h = sum((b[i] + 1) * P ** (n - 1 - i)) mod 2**64`` over the id's ``n`` UTF-8 bytes
``b`` (``P`` the 64-bit FNV prime), then ``splitmix64(h + n * C)``.
"""

from __future__ import annotations

import bisect
from collections.abc import Sequence
from typing import Any

import numpy as np
from numpy.typing import NDArray

MASK = (1 << 64) - 1
_P = 0x100000001B3
_C = 0x9E3779B97F4A7C15
_M1, _M2 = 0xBF58476D1CE4E5B9, 0x94D049BB133111EB
#: Bits of :class:`HashedIds`' bitmap per id seen (at least; the bitmap doubles as ids come).
BITS_PER_ID = 32
_MIN_BITS = 20  # log2 of the smallest bitmap (128 KiB)


def _mix(z: int) -> int:
    z = ((z ^ (z >> 30)) * _M1) & MASK
    z = ((z ^ (z >> 27)) * _M2) & MASK
    return z ^ (z >> 31)


def hash_id(sid: str) -> int:
    """The 64-bit hash of one id (what :func:`id_hashes` gives it)."""
    data = sid.encode("utf-8", "surrogatepass")
    h = 0
    for b in data:
        h = (h * _P + b + 1) & MASK
    return _mix((h + len(data) * _C) & MASK)


def id_hashes(arr: Any) -> NDArray[np.uint64]:
    """:func:`hash_id` of every string of the Arrow string array ``arr`` (no nulls), vectorised."""
    import pyarrow as pa

    if pa.types.is_large_string(arr.type):
        arr = arr.cast(pa.string())
    if isinstance(arr, pa.ChunkedArray):
        arr = arr.combine_chunks()
    _, off_buf, data_buf = arr.buffers()
    if off_buf is None:  # an empty array
        return np.zeros(0, dtype=np.uint64)
    offsets = np.frombuffer(off_buf, dtype=np.int32)[arr.offset:arr.offset + len(arr) + 1].astype(np.int64)
    data = np.frombuffer(data_buf, dtype=np.uint8) if data_buf is not None else np.zeros(0, np.uint8)
    return _hash_buffers(offsets, data)


def hash_strings(ids: Sequence[str]) -> NDArray[np.uint64]:
    """:func:`hash_id` of every string of ``ids``, vectorised (one join and one encode)."""
    joined = "".join(ids)
    if joined.isascii():  # a character is a byte: the offsets are the lengths' running sum
        lens = np.fromiter(map(len, ids), dtype=np.int64, count=len(ids))
    else:
        lens = np.fromiter((len(s.encode("utf-8", "surrogatepass")) for s in ids), dtype=np.int64, count=len(ids))
    offsets = np.zeros(len(ids) + 1, dtype=np.int64)
    np.cumsum(lens, out=offsets[1:])
    data = np.frombuffer(joined.encode("utf-8", "surrogatepass"), dtype=np.uint8)
    return _hash_buffers(offsets, data)


def _hash_buffers(offsets: NDArray[np.int64], data: NDArray[np.uint8]) -> NDArray[np.uint64]:
    """:func:`hash_id` of each string ``data[offsets[i]:offsets[i + 1]]``."""
    lo, hi = int(offsets[0]), int(offsets[-1])
    lens = np.diff(offsets)
    ends = offsets[1:] - lo
    row = np.repeat(np.arange(len(lens)), lens)
    power = np.ones(int(lens.max(initial=0)) + 1, dtype=np.uint64)
    if len(power) > 1:
        power[1:] = _P
        power = np.cumprod(power, dtype=np.uint64)  # P ** k mod 2**64 (uint64 wraps)
    terms = (data[lo:hi].astype(np.uint64) + np.uint64(1)) * power[ends[row] - 1 - np.arange(hi - lo)]
    csum = np.zeros(hi - lo + 1, dtype=np.uint64)
    np.cumsum(terms, dtype=np.uint64, out=csum[1:])
    z = csum[ends] - csum[offsets[:-1] - lo] + lens.astype(np.uint64) * np.uint64(_C)
    z = (z ^ (z >> np.uint64(30))) * np.uint64(_M1)
    z = (z ^ (z >> np.uint64(27))) * np.uint64(_M2)
    return z ^ (z >> np.uint64(31))  # type: ignore[no-any-return]


def block_ids(batch: Any, cols: Any, positions: Sequence[int]) -> tuple[list[str], NDArray[np.uint64]]:
    """The ids of a block of rows (a row without an id, or every row when ``batch`` is None or
    has no usable id column: its position, as :class:`~ragmeter.engines.columnar.ColumnarSink`
    numbers it) and their :func:`id_hashes` (what a Ray task returns with its rows' lines)."""
    import pyarrow as pa
    import pyarrow.compute as pc

    from .._arrowbuf import np_num
    from ._arrow import _is_str_or_int

    id_col = None if batch is None else cols.by_field.get("id")
    arr = None
    if id_col is not None and _is_str_or_int(batch.schema.field(id_col).type):
        arr = pc.cast(batch.column(batch.schema.get_field_index(id_col)), pa.string())
        if isinstance(arr, pa.ChunkedArray):
            arr = arr.combine_chunks()
    if arr is not None and arr.null_count == 0 and not (np_num(pc.utf8_length(arr)) == 0).any():
        return arr.to_pylist(), id_hashes(arr)
    raw = arr.to_pylist() if arr is not None else [None] * len(positions)
    ids = [sid if sid else str(pos) for sid, pos in zip(raw, positions, strict=True)]
    return ids, hash_strings(ids)


class HashedIds:
    """Every id seen so far and the position of the row that had it: the duplicate check of the
    reader's :class:`~ragmeter.io.records.RowConverter` (its ``seen``), exact, with a bulk path.

    :meth:`known` and :meth:`add_many` take a chunk's ids with their :func:`id_hashes`; ``get`` and
    item assignment (what ``RowConverter.convert`` calls) one id at a time.
    """

    def __init__(self) -> None:
        self._levels: list[tuple[NDArray[np.uint64], NDArray[np.int64]]] = []  # sorted hashes, entry
        self._ids: list[Sequence[str]] = []  # entries added in bulk, by block
        self._positions: list[NDArray[np.int64]] = []
        self._starts: list[int] = []
        self._count = 0
        self._single: dict[str, int] = {}  # ids added one at a time
        self._single_hashes: list[int] = []
        self._single_sorted: NDArray[np.uint64] | None = None
        self._log_bits = _MIN_BITS
        self._bits = np.zeros(1 << (_MIN_BITS - 3), dtype=np.uint8)  # bit (h >> (64 - log_bits)) set: maybe seen

    def __len__(self) -> int:
        return self._count + len(self._single)

    def get(self, sid: str, default: int | None = None) -> int | None:
        """The position of the row that had ``sid`` (``default`` when none had it)."""
        got = self._single.get(sid)
        if got is not None:
            return got
        got = self._find(sid, hash_id(sid))
        return default if got is None else got

    def __contains__(self, sid: object) -> bool:
        return isinstance(sid, str) and self.get(sid) is not None

    def __setitem__(self, sid: str, pos: int) -> None:
        self._single[sid] = pos
        h = hash_id(sid)
        self._single_hashes.append(h)
        self._single_sorted = None
        self._mark(np.array([h], dtype=np.uint64))

    def known(self, ids: Sequence[str], hashes: NDArray[np.uint64]) -> tuple[NDArray[np.bool_], NDArray[np.intp]]:
        """Per id of a chunk: True when an earlier chunk (or row added one at a time) had it, and
        the order that sorts ``hashes`` (for :meth:`add_many`). Exact: a hash match is checked
        against the id it matched."""
        order = np.argsort(hashes)
        ordered = hashes[order]
        # the bitmap rules most ids out; the runs are searched for the rest (sorted: each run walked once)
        at = np.flatnonzero(self._marked(ordered))
        candidates = ordered[at]
        maybe = np.zeros(len(at), dtype=bool)
        for keys, _ in self._levels:
            maybe |= _member(keys, candidates)
        if self._single:
            if self._single_sorted is None:
                self._single_sorted = np.sort(np.array(self._single_hashes, dtype=np.uint64))
            maybe |= _member(self._single_sorted, candidates)
        seen = np.zeros(len(hashes), dtype=bool)
        for i in order[at[maybe]].tolist():
            seen[i] = self.get(ids[i]) is not None
        return seen, order

    def _marked(self, hashes: NDArray[np.uint64]) -> NDArray[np.bool_]:
        """Per hash: is its bit set (False: no id seen has this hash)."""
        slot = hashes >> np.uint64(64 - self._log_bits)
        return ((self._bits[slot >> np.uint64(3)] >> (slot & np.uint64(7)).astype(np.uint8)) & 1).astype(bool)

    def _mark(self, hashes: NDArray[np.uint64]) -> None:
        """Set the bits of ``hashes``, the bitmap first grown (and refilled) to :data:`BITS_PER_ID`
        bits per id."""
        need = max(_MIN_BITS, int(len(self) * BITS_PER_ID - 1).bit_length())
        if need > self._log_bits:
            self._log_bits = need
            self._bits = np.zeros(1 << (need - 3), dtype=np.uint8)
            for keys, _ in self._levels:
                self._set_bits(keys)
            self._set_bits(np.array(self._single_hashes, dtype=np.uint64))
        self._set_bits(hashes)

    def _set_bits(self, hashes: NDArray[np.uint64]) -> None:
        slot = hashes >> np.uint64(64 - self._log_bits)
        np.bitwise_or.at(self._bits, slot >> np.uint64(3), np.left_shift(1, slot & np.uint64(7)).astype(np.uint8))

    def add_many(self, ids: Sequence[str], positions: NDArray[np.int64], hashes: NDArray[np.uint64],
                 order: NDArray[np.intp] | None = None) -> None:
        """Add a chunk of ids none of which was seen (:meth:`known`) and that repeat none of
        their own; ``positions`` are their rows' positions, ``order`` sorts ``hashes``."""
        if not len(ids):
            return
        if order is None:
            order = np.argsort(hashes)
        self._levels.append((hashes[order], order.astype(np.int64) + self._count))
        self._ids.append(ids)
        self._positions.append(np.asarray(positions, dtype=np.int64))
        self._starts.append(self._count)
        self._count += len(ids)
        self._mark(hashes)
        while len(self._levels) > 1 and len(self._levels[-2][0]) <= 2 * len(self._levels[-1][0]):
            (ka, ea), (kb, eb) = self._levels.pop(), self._levels.pop()
            self._levels.append(_merge(kb, eb, ka, ea))

    def _find(self, sid: str, h: int) -> int | None:
        key = np.uint64(h)
        for keys, entries in self._levels:
            lo, hi = np.searchsorted(keys, key, "left"), np.searchsorted(keys, key, "right")
            for e in entries[lo:hi].tolist():
                b = bisect.bisect_right(self._starts, e) - 1
                if self._ids[b][e - self._starts[b]] == sid:
                    return int(self._positions[b][e - self._starts[b]])
        return None


def _member(keys: NDArray[np.uint64], hashes: NDArray[np.uint64]) -> NDArray[np.bool_]:
    """Per hash: is it in the sorted ``keys``."""
    if not len(keys):
        return np.zeros(len(hashes), dtype=bool)
    j = np.minimum(np.searchsorted(keys, hashes), len(keys) - 1)
    return keys[j] == hashes  # type: ignore[no-any-return]


def _merge(ka: NDArray[np.uint64], ea: NDArray[np.int64], kb: NDArray[np.uint64],
           eb: NDArray[np.int64]) -> tuple[NDArray[np.uint64], NDArray[np.int64]]:
    """Two sorted runs (keys with their entries) as one sorted run (a key of ``a`` before an equal one
    of ``b``): a stable sort of the two runs end to end, which merges them in one pass."""
    keys = np.concatenate([ka, kb])
    order = np.argsort(keys, kind="stable")
    return keys[order], np.concatenate([ea, eb])[order]
