"""Arrow arrays read from their buffers (``_np_bool``, ``_np_num``, ``_lengths``): the same values as
``to_pylist`` gives (nulls as False / the fill value), for sliced arrays at every bit offset, chunked
arrays and the null type, without importing pandas."""

from __future__ import annotations

import random
import subprocess
import sys

import numpy as np
import pytest

pa = pytest.importorskip("pyarrow")

from ragmeter._arrowbuf import arrow_false, arrow_numbers, arrow_string  # noqa: E402
from ragmeter._arrowbuf import np_bool as _np_bool  # noqa: E402
from ragmeter._arrowbuf import np_num as _np_num  # noqa: E402
from ragmeter.engines._arrow import _lengths  # noqa: E402


def _values(n: int, seed: int, make):
    rnd = random.Random(seed)
    return [None if rnd.random() < 0.3 else make(rnd) for _ in range(n)]


@pytest.mark.parametrize("n", [0, 1, 8, 9, 70])
def test_booleans_at_every_offset(n):
    vals = _values(n, n, lambda r: r.random() < 0.5)
    arr = pa.array(vals, pa.bool_())
    for off in range(min(n, 17) + 1):
        got = _np_bool(arr.slice(off))
        assert got.dtype == bool and got.tolist() == [bool(v) for v in vals[off:]]


@pytest.mark.parametrize("typ,fill", [(pa.int32(), 0), (pa.int64(), -1), (pa.float64(), 0.0)])
def test_numbers_at_every_offset_with_the_fill_value(typ, fill):
    vals = _values(40, 7, lambda r: r.randint(-5, 5))
    arr = pa.array(vals, typ)
    for off in range(0, 20):
        got = _np_num(arr.slice(off), fill)
        assert got.tolist() == [fill if v is None else v for v in vals[off:]]
    chunked = pa.chunked_array([arr.slice(3, 5), arr.slice(20)])
    assert _np_num(chunked, fill).tolist() == [fill if v is None else v for v in vals[3:8] + vals[20:]]


def test_null_type_and_list_lengths():
    assert _np_bool(pa.nulls(5)).tolist() == [False] * 5
    assert _np_num(pa.nulls(3), 7).tolist() == [7, 7, 7]
    lists = pa.array([[1, 2], None, [], [3]], pa.list_(pa.int64()))
    assert _lengths(lists).tolist() == [2, 0, 0, 1] and _lengths(lists.slice(1)).tolist() == [0, 0, 1]
    assert np.asarray(_lengths(lists)).dtype == np.int64


def test_constants_built_from_buffers():
    assert arrow_string("[]").as_py() == "[]" and arrow_string("é{").as_py() == "é{" and arrow_string("").as_py() == ""
    assert arrow_false().as_py() is False
    assert arrow_numbers(np.array([3, -1], dtype=np.int64)).to_pylist() == [3, -1]
    assert arrow_numbers(np.array([0.5, 2.0])).type == pa.float64()
    assert arrow_numbers(np.arange(10, dtype=np.int32)[::3]).to_pylist() == [0, 3, 6, 9]  # not contiguous


def test_reading_buffers_imports_no_pandas():
    code = ("import sys, numpy as np, pyarrow as pa, pyarrow.compute as pc\n"
            "from ragmeter._arrowbuf import arrow_false, arrow_numbers, arrow_string\n"
            "from ragmeter._arrowbuf import np_bool as _np_bool, np_num as _np_num\n"
            "a = pa.nulls(3, pa.string())\n"
            "_np_bool(a.is_valid()); _np_num(pc.utf8_length(a))\n"
            "pc.if_else(pc.is_null(a), arrow_string('[]'), a); pc.and_(pc.is_null(a), arrow_false())\n"
            "a.take(arrow_numbers(np.array([2, 0])))\n"
            "print('pandas' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"


def test_a_worker_scores_and_formats_a_batch_without_pandas(tmp_path):
    """What a Ray task runs (read a row group, score it, format its lines) in a fresh process:
    pandas is never imported (it cost each worker ~0.4 CPU-s)."""
    import pyarrow.parquet as pq

    rows = [{"id": f"q{i}", "contexts": [{"id": f"d{i % 3}"}, {"id": "d9"}], "relevant": ["d1", "d2"]}
            for i in range(50)]
    pq.write_table(pa.Table.from_pylist(rows), tmp_path / "d.parquet")
    code = ("import sys\n"
            "import pyarrow.parquet as pq\n"
            "from ragmeter.engines._arrow import resolve_columns\n"
            "from ragmeter.engines._ray_columnar import score_group_on_worker, warm_worker\n"
            f"path = {str(tmp_path / 'd.parquet')!r}\n"
            "cols = resolve_columns(pq.ParquetFile(path).schema_arrow, {})\n"
            "warm_worker(['mrr', 'ndcg@3'], [])\n"
            "out = score_group_on_worker(path, 0, cols, ['mrr', 'ndcg@3'], [], 0, 16)\n"
            "print(sum(len(r.ids) for r in out), 'pandas' in sys.modules)")
    got = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert got.stdout.split() == ["50", "False"], got.stderr[-2000:]
