"""#13: progress on every engine. The local engine reports each sample as it is finished (judged
runs move from their first sample); the columnar engine reports each record batch as it is
written (its rows finish together); Ray each chunk as the driver writes it. On every engine the
counts add up to the rows, bad rows included."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from ragmeter import evaluate
from ragmeter.engines.columnar import evaluate_parquet
from ragmeter.engines.local import evaluate_file
from ragmeter.io import read_samples
from tests.engines.test_engines_identical import _generated, _write

pytest.importorskip("pyarrow")
METRICS = ["mrr", "ndcg@10"]


def _data(tmp: Path, n: int = 500) -> tuple[Path, Path]:
    jsonl, parquet = _write(_generated(n), tmp, "p")
    with jsonl.open("a", encoding="utf-8") as fh:
        fh.write("{not json\n")  # a bad row counts too
    return jsonl, parquet


def test_local_engine_reports_every_sample(tmp_path: Path) -> None:
    jsonl, _ = _data(tmp_path)
    calls: list[int] = []
    evaluate(read_samples(jsonl, on_error="skip"), METRICS, out_dir=str(tmp_path / "o"), progress=calls.append,
             keep_records=False)
    assert calls == [1] * 501


def test_columnar_engines_report_every_batch(tmp_path: Path) -> None:
    jsonl, parquet = _data(tmp_path)
    calls: list[int] = []
    evaluate_parquet(parquet, METRICS, out_dir=tmp_path / "pq", progress=calls.append, batch_rows=128)
    assert calls == [128, 128, 128, 116]
    calls = []
    run = evaluate_file(jsonl, METRICS, out_dir=tmp_path / "jl", on_error="skip", progress=calls.append)
    assert run.run["engine"]["path"] == "columnar" and sum(calls) == 501 and len(calls) >= 1


def test_ray_engine_reports_every_chunk(ray_cluster, tmp_path: Path) -> None:
    ray_engine = pytest.importorskip("ragmeter.engines.ray_engine")
    jsonl, parquet = _data(tmp_path)
    calls: list[int] = []
    ray_engine.evaluate_ray(jsonl, METRICS, out_dir=tmp_path / "r1", on_error="skip", batch_size=100,
                            progress=calls.append)
    assert calls == [100] * 5 + [1]
    calls = []
    run = ray_engine.evaluate_ray(parquet, METRICS, out_dir=tmp_path / "r2", progress=calls.append)
    assert sum(calls) == 500 and run.run["engine"]["path"] == "columnar"
    assert json.loads((tmp_path / "r2" / "summary.json").read_text())["metrics"]["mrr"]["n"] > 0
