"""Numpy <-> Arrow through buffers, without pyarrow's pandas shim, and grouping by hashing.

``to_numpy(zero_copy_only=False)`` on a boolean or nullable array, ``fill_null``, ``pa.scalar``,
``pa.array`` and any Python value handed to a compute function go through pyarrow's pandas shim,
which imports pandas (~0.4 CPU-s per process); the columnar engine reads and builds its arrays
from their buffers instead. :func:`factorize` groups equal integers with Arrow's hash
``dictionary_encode`` (``np.unique(..., return_inverse=True)`` sorts; ~5x slower on 65k values).
"""

from __future__ import annotations

from typing import Any

import numpy as np
from numpy.typing import NDArray


def _bitmap(buf: Any, offset: int, n: int) -> NDArray[np.bool_]:
    """``n`` bits of an Arrow bitmap buffer from bit ``offset``, as bools."""
    bits = np.frombuffer(buf, dtype=np.uint8)[offset // 8:(offset + n + 7) // 8 + 1]
    return np.unpackbits(bits, bitorder="little")[offset % 8:offset % 8 + n].view(bool)


def _valid(arr: Any) -> NDArray[np.bool_]:
    """Per value of an Arrow array: not null."""
    n = len(arr)
    if not arr.null_count:
        return np.ones(n, dtype=bool)
    if arr.buffers()[0] is None:  # the null type: every value is null
        return np.zeros(n, dtype=bool)
    return _bitmap(arr.buffers()[0], arr.offset, n)


def np_bool(arr: Any) -> NDArray[np.bool_]:
    """An Arrow boolean array as a numpy bool array, a null read as False.

    Read from the buffers: ``to_numpy(zero_copy_only=False)``, ``fill_null`` and ``pa.scalar``
    go through pyarrow's pandas shim, which imports pandas (~0.4 CPU-s per process)."""
    if hasattr(arr, "combine_chunks"):
        arr = arr.combine_chunks()
    n, bufs = len(arr), arr.buffers()
    if n == 0 or len(bufs) < 2 or bufs[1] is None:  # empty, or the null type: no values
        return np.zeros(n, dtype=bool)
    out = _bitmap(bufs[1], arr.offset, n)
    return out & _valid(arr) if arr.null_count else out


def np_num(arr: Any, fill: float = 0) -> NDArray[Any]:
    """A fixed-width numeric Arrow array as numpy (a copy), each null replaced by ``fill`` (read
    from the buffers, for the reason :func:`np_bool` gives)."""
    if hasattr(arr, "combine_chunks"):
        arr = arr.combine_chunks()
    n, bufs = len(arr), arr.buffers()
    if n == 0 or len(bufs) < 2 or bufs[1] is None:  # empty, or the null type: no values
        return np.full(n, fill, dtype=np.float64 if len(bufs) < 2 else np.dtype(arr.type.to_pandas_dtype()))
    dtype = np.dtype(arr.type.to_pandas_dtype())
    out = np.frombuffer(bufs[1], dtype=dtype)[arr.offset:arr.offset + n].copy()
    if arr.null_count:
        out[~_valid(arr)] = fill
    return out


def arrow_string(text: str) -> Any:
    """``text`` as an Arrow string scalar, built from buffers (``pa.scalar`` and a Python value
    passed to a compute function go through pyarrow's pandas shim: see :func:`np_bool`)."""
    import pyarrow as pa

    data = text.encode("utf-8")
    offsets = np.array([0, len(data)], dtype=np.int32)
    return pa.StringArray.from_buffers(1, pa.py_buffer(offsets), pa.py_buffer(data))[0]


def arrow_false() -> Any:
    """An Arrow boolean scalar False, built from buffers (see :func:`arrow_string`)."""
    import pyarrow as pa

    return pa.BooleanArray.from_buffers(pa.bool_(), 1, [None, pa.py_buffer(b"\x00")])[0]


def arrow_numbers(values: NDArray[Any]) -> Any:
    """A 1-D numeric numpy array as an Arrow array over its buffer (see :func:`arrow_string`)."""
    import pyarrow as pa

    values = np.ascontiguousarray(values)
    return pa.Array.from_buffers(pa.from_numpy_dtype(values.dtype), len(values), [None, pa.py_buffer(values)])


def take_rows(table: Any, rows: list[int]) -> Any:
    """Rows ``rows`` of an Arrow table or record batch, in that order (the index array built from
    a buffer: ``pa.array(list)`` would go through the pandas shim, see :func:`np_bool`)."""
    return table.take(arrow_numbers(np.asarray(rows, dtype=np.int64)))


def factorize(values: NDArray[np.int64]) -> tuple[NDArray[np.int64], NDArray[np.int64]]:
    """``(codes, first)`` of a 1-D int64 array: ``codes[i]`` numbers ``values[i]``'s distinct value
    in order of first appearance (0, 1, ...), ``first[c]`` is the first index holding value ``c``.

    ``values[first][codes] == values``; an empty array gives two empty arrays.
    """
    n = len(values)
    if n == 0:
        return np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int64)
    indices = arrow_numbers(np.asarray(values, dtype=np.int64)).dictionary_encode().indices  # first appearance
    codes = np_num(indices).astype(np.int64)
    # code c first appears where the running maximum of the codes first reaches c
    new = np.empty(n, dtype=bool)
    new[0] = True
    np.greater(codes[1:], np.maximum.accumulate(codes)[:-1], out=new[1:])
    return codes, np.flatnonzero(new).astype(np.int64)
