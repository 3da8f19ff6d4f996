"""The Ray driver's duplicate-id check by hashes (engines/_ids.py) and the workers' streamed slices:
exact under hash collisions, and the same files as the columnar engine, without a Ray cluster (the
worker function runs in this process; the driver's sink takes its results as Ray hands them)."""

from __future__ import annotations

import asyncio
import random
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from ragmeter.engines import _ids
from ragmeter.engines._ids import HashedIds, hash_id, id_hashes

pa = pytest.importorskip("pyarrow")
pq = pytest.importorskip("pyarrow.parquet")

MASK = (1 << 64) - 1


def _by_formula(text: str) -> int:
    """The module docstring's formula, written out with pow (an independent reading of it)."""
    data = text.encode("utf-8")
    n = len(data)
    h = sum((b + 1) * pow(0x100000001B3, n - 1 - i, 1 << 64) for i, b in enumerate(data)) % (1 << 64)
    z = (h + n * 0x9E3779B97F4A7C15) % (1 << 64)
    z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) % (1 << 64)
    z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) % (1 << 64)
    return z ^ (z >> 31)


def test_hash_of_one_id_follows_the_formula() -> None:
    for text in ["", "a", "q0", "q10", "é漢😀", "\x00"]:
        assert hash_id(text) == _by_formula(text)
    assert hash_id("ab") != hash_id("ba") and hash_id("a") != hash_id("a\x00")


def test_vectorised_hashes_equal_one_by_one_on_sliced_and_large_arrays() -> None:
    rnd = random.Random(5)
    alphabet = "ab\x00é漢😀q0123"
    ids = ["".join(rnd.choice(alphabet) for _ in range(rnd.randint(0, 14))) for _ in range(3000)]
    expected = [hash_id(s) for s in ids]
    arr = pa.array(ids, pa.string())
    assert id_hashes(arr).tolist() == expected
    assert id_hashes(arr.slice(37, 500)).tolist() == expected[37:537]
    assert id_hashes(pa.array(ids, pa.large_string())).tolist() == expected
    assert id_hashes(pa.chunked_array([arr.slice(0, 10), arr.slice(10, 5)])).tolist() == expected[:15]
    assert len(set(expected)) == len(set(ids))  # no collision among these


def _chunk(ids: list[str], first_pos: int) -> tuple[list[str], np.ndarray, np.ndarray]:
    return ids, np.arange(first_pos, first_pos + len(ids)), id_hashes(pa.array(ids, pa.string()))


def test_bulk_chunks_find_every_earlier_id_with_its_position() -> None:
    seen = HashedIds()
    for k in range(40):  # 40 chunks of 100: the sorted runs are merged many times
        ids, pos, h = _chunk([f"q{k * 100 + i}" for i in range(100)], k * 100 + 1)
        known, order = seen.known(ids, h)
        assert not known.any()
        seen.add_many(ids, pos, h, order)
    assert len(seen) == 4000
    assert [seen.get(f"q{i}") for i in (0, 99, 1234, 3999)] == [1, 100, 1235, 4000]
    assert seen.get("q4000") is None and "q-1" not in seen and "q17" in seen
    ids, _, h = _chunk(["new", "q2500", "q3999", "also new"], 4001)
    assert seen.known(ids, h)[0].tolist() == [False, True, True, False]
    seen["one"] = 4100  # a row the Sample path took: RowConverter adds it one at a time
    ids, _, h = _chunk(["one", "two"], 4101)
    assert seen.known(ids, h)[0].tolist() == [True, False] and seen.get("one") == 4100


def test_bitmap_grown_many_times_still_finds_every_earlier_id(monkeypatch: pytest.MonkeyPatch) -> None:
    # a 2**10-bit bitmap at first, 4 bits per id: it is rebuilt at 256, 512, ... ids; against a set
    monkeypatch.setattr(_ids, "_MIN_BITS", 10)
    monkeypatch.setattr(_ids, "BITS_PER_ID", 4)
    rnd = random.Random(11)
    seen, truth = HashedIds(), set()
    for k in range(60):
        ids = [f"r{rnd.randrange(6000)}" for _ in range(50)]
        ids = list(dict.fromkeys(ids))  # a chunk repeats none of its own ids (add_many's contract)
        ids, pos, h = _chunk(ids, k * 50 + 1)
        known, _ = seen.known(ids, h)
        assert known.tolist() == [sid in truth for sid in ids]
        new = [i for i, sid in enumerate(ids) if sid not in truth]
        seen.add_many([ids[i] for i in new], pos[new], h[new])
        truth.update(ids)
        if k == 30:
            seen[f"single{k}"] = 99_999  # one added one at a time: in the bitmap too
            truth.add(f"single{k}")
    assert seen._bits.size * 8 >= 4 * len(truth) > 2**10  # grown
    assert seen.get("single30") == 99_999 and seen.known(["single30"], id_hashes(pa.array(["single30"])))[0][0]


def test_every_hash_colliding_still_tells_ids_apart(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(_ids, "hash_id", lambda sid: 7)
    seen = HashedIds()
    zeros = np.full(3, 7, dtype=np.uint64)
    seen.add_many(["a", "b", "c"], np.array([1, 2, 3]), zeros)
    seen.add_many(["d", "e", "f"], np.array([4, 5, 6]), zeros)
    known, _ = seen.known(["x", "e", "y"], zeros)
    assert known.tolist() == [False, True, False]  # same hash, different id: not a duplicate
    assert seen.get("f") == 6 and seen.get("z") is None and "a" in seen
    seen["z"] = 9
    assert seen.known(["z", "w", "b"], zeros)[0].tolist() == [True, False, True]


def _ray_sink_run(path: Path, metrics: list[str], out: Path, rows: int, collide: bool) -> Any:
    """The columnar Ray run's driver over ``path`` in slices of ``rows``, each scored by the
    worker's function here (what the task returns, as Ray hands it back); every hash 7 with
    ``collide``."""
    from ragmeter.engines import _ray_columnar, columnar
    from ragmeter.engines.driver import RunState
    from ragmeter.evaluator import plan
    from ragmeter.io import ReadOptions
    from ragmeter.io.records import RowConverter
    from ragmeter.results import RunWriter

    run = plan(metrics, evaluators=columnar.retrieval_evaluators(metrics))
    read = ReadOptions(on_error="skip")
    pf, cols, map_cols = columnar.open_columns(str(path), read)
    conv = RowConverter(str(path), read, unit="row", seen=HashedIds())
    state = RunState(run.names, run.versions, run.info, RunWriter(run.names, out_dir=out, keep_records=False))
    sink = _ray_columnar._RaySink(run, state, conv, cols)
    for row0, batch in columnar._record_batches(pf, rows, str(path)):
        result = _ray_columnar.score_batch_on_worker(batch, cols, metrics, [], row0)
        if collide:
            result.hashes = np.full(len(result.hashes), 7, dtype=np.uint64)
        asyncio.run(sink.write(columnar.ArrowRows(batch, row0, map_cols), result))
    result = state.finish(None)
    state.presence.check(path=str(path), keys=pf.schema_arrow.names)
    return result


@pytest.mark.parametrize("collide", [False, True])
def test_ray_driver_writes_what_the_columnar_engine_writes(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                         collide: bool) -> None:
    # duplicates across slices, within a slice, of a Sample-path row, rows without ids: with every
    # hash equal the check falls back to comparing ids and must decide each row the same way
    from ragmeter import evaluate

    if collide:
        monkeypatch.setattr(_ids, "hash_id", lambda sid: 7)
    rows = [{"id": f"q{i}", "contexts": [{"id": f"d{(i + j) % 9}"} for j in range(4)],
             "relevant": [f"d{i % 9}"]} for i in range(230)]
    rows[120]["id"] = "q10"  # an earlier slice's id
    rows[131]["id"] = "q125"  # an earlier row of its slice
    rows[60]["contexts"] = [{"id": "dx", "text": "some passage"}]  # a text: the Sample path
    rows[60]["relevant"] = ["d999"]
    rows[75]["id"] = "q60"  # the Sample-path row's id
    rows[90]["id"] = None  # numbered by its position
    rows[200]["id"] = "91"  # ... which a later row takes
    path = tmp_path / "d.parquet"
    pq.write_table(pa.Table.from_pylist(rows), path)
    metrics = ["mrr", "ndcg@3"]
    expected = evaluate(path, metrics, out_dir=tmp_path / "columnar", on_error="skip")
    got = _ray_sink_run(path, metrics, tmp_path / "ray", 50, collide)
    assert (tmp_path / "ray" / "results.jsonl").read_bytes() == (tmp_path / "columnar" / "results.jsonl").read_bytes()
    assert got.ids == expected.ids and got.ids[90] == "91" and got.ids[120] == f"{path}:121"
    assert got.summary() == expected.summary() and got.summary()["mrr"]["errors"] == 4
