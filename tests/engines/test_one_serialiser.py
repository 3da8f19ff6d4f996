"""#13: one serialiser. The columnar engine's lines come from the same wording function as the
Sample path's (``RetrievalEvaluator.result_of``) and the same line format (``record_json``), so
rewording a reason or changing the line format changes every engine together."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from ragmeter import evaluate
from ragmeter.engines.columnar import evaluate_parquet
from ragmeter.io import read_samples
from ragmeter.metrics.retrieval.base import RetrievalEvaluator
from ragmeter.results import PatternColumn, RunWriter
from ragmeter.types import MetricResult

pa = pytest.importorskip("pyarrow")
pq = pytest.importorskip("pyarrow.parquet")

METRICS = ["mrr", "ndcg@10", "recall@5", "map(rel_level=2)"]
ROWS: list[dict[str, Any]] = [
    {"id": "a", "contexts": [{"id": "d1"}, {"id": "d2"}, {"id": "d3"}], "relevant": {"d2": 1, "d9": 2}},
    {"id": "b", "contexts": [{"id": "d1"}, {"id": "d2"}], "relevant": {"d1": 3, "d2": 2}},
    {"id": "c", "contexts": [], "relevant": {"d1": 1}},
    {"id": "d", "contexts": [{"id": "d4"}]},  # no labels: undefined (field absent)
    {"id": "e", "contexts": [{"id": "d5"}, {"id": "d6"}], "relevant": {"d7": 1}},
    {"id": "f", "contexts": [{"id": "d1"}, {"id": "d2"}, {"id": "d3"}], "relevant": {"d2": 1, "d8": 3}},
]


def _files(tmp: Path) -> tuple[Path, Path]:
    jsonl = tmp / "rows.jsonl"
    jsonl.write_text("".join(json.dumps(r) + "\n" for r in ROWS), encoding="utf-8")
    table = pa.table({
        "id": pa.array([r["id"] for r in ROWS], pa.string()),
        "contexts": pa.array([r["contexts"] for r in ROWS], pa.list_(pa.struct([("id", pa.string())]))),
        "relevant": pa.array([list(r["relevant"].items()) if "relevant" in r else None for r in ROWS],
                             pa.map_(pa.string(), pa.int64())),
    })
    parquet = tmp / "rows.parquet"
    pq.write_table(table, parquet)
    return jsonl, parquet


def _both(tmp: Path, tag: str) -> tuple[bytes, bytes, Any]:
    jsonl, parquet = _files(tmp)
    evaluate(read_samples(jsonl), METRICS, out_dir=str(tmp / f"local-{tag}"), keep_records=False)
    run = evaluate_parquet(parquet, METRICS, out_dir=tmp / f"columnar-{tag}")
    return ((tmp / f"local-{tag}" / "results.jsonl").read_bytes(),
            (tmp / f"columnar-{tag}" / "results.jsonl").read_bytes(), run)


def test_rewording_a_reason_changes_both_engines(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    local, columnar, run = _both(tmp_path, "before")
    assert local == columnar and run.run["engine"]["columnar_rows"] == len(ROWS)
    assert b"labelled relevant" in local and b"REWORDED" not in local
    original = RetrievalEvaluator.result_of

    def reworded(self: RetrievalEvaluator, rel: Any, value: float, cannot: str | None = None) -> MetricResult:
        r = original(self, rel, value, cannot)
        hits = r.details.get("relevant_ranks") if r.details else None
        return r.model_copy(update={"reason": f"REWORDED {self.name} hits={hits}: {r.reason}",
                                    "details": {**(r.details or {}), "extra": [1, "x"]}})

    monkeypatch.setattr(RetrievalEvaluator, "result_of", reworded)
    local2, columnar2, run2 = _both(tmp_path, "after")
    assert run2.run["engine"]["columnar_rows"] == len(ROWS)  # still the vectorised path
    assert local2 == columnar2
    lines = [json.loads(line) for line in columnar2.decode().splitlines()]
    assert lines[0]["metrics"]["mrr"]["reason"].startswith("REWORDED mrr hits=[2]: relevant at rank(s) [2]")
    assert lines[1]["metrics"]["mrr"]["details"]["extra"] == [1, "x"]
    assert lines[0]["metrics"]["mrr"]["score"] == 0.5 and lines[1]["metrics"]["mrr"]["score"] == 1.0


def test_a_reason_that_quotes_the_score_is_formatted_row_by_row(tmp_path: Path,
                                                                monkeypatch: pytest.MonkeyPatch) -> None:
    # rows "a" and "f" share a pattern but not their nDCG: a reason quoting the score must not be
    # shared between them (the writer detects it and formats such a pattern row by row)
    original = RetrievalEvaluator.result_of

    def quoting(self: RetrievalEvaluator, rel: Any, value: float, cannot: str | None = None) -> MetricResult:
        r = original(self, rel, value, cannot)
        return r if r.score is None else r.model_copy(update={"reason": f"scored {value:.4f}"})

    monkeypatch.setattr(RetrievalEvaluator, "result_of", quoting)
    local, columnar, _ = _both(tmp_path, "quoting")
    assert local == columnar
    lines = [json.loads(line) for line in columnar.decode().splitlines()]
    a, f = lines[0]["metrics"]["ndcg@10"], lines[5]["metrics"]["ndcg@10"]
    assert a["reason"] == f"scored {a['score']:.4f}" and f["reason"] == f"scored {f['score']:.4f}"
    assert a["score"] != f["score"]


def test_add_columns_writes_what_add_writes(tmp_path: Path) -> None:
    def result(key: Any, value: float) -> MetricResult:
        if value != value:
            return MetricResult(name="m", score=None, reason=f"undefined {key}", version="2")
        return MetricResult(name="m", score=value, reason=f"pattern {key} «ü»", details={"k": [key]}, version="2")

    import numpy as np

    ids = ["x1", 'quote"id', "x3", "x4"]
    values = np.array([0.25, float("nan"), 1.0, 0.25])
    inv = np.array([0, 1, 0, 1])
    one = RunWriter(["m"], out_dir=tmp_path / "one", keep_records=True)
    for sid, v, p in zip(ids, values.tolist(), inv.tolist(), strict=True):
        one.add(sid, {"m": result(("a", "b")[p], v)})
    many = RunWriter(["m"], out_dir=tmp_path / "many", keep_records=True)
    many.add_columns(ids[:2], [PatternColumn("m", values[:2], ["a", "b"], inv[:2], result)])
    # a chunk mixing pattern rows and a row scored elsewhere (others)
    many.add_columns(ids[2:], [PatternColumn("m", values[3:], ["b"], np.array([0]), result)],
                     others={0: {"m": result("a", 1.0)}})
    r1, r2 = one.finish({}), many.finish({})
    assert (tmp_path / "one" / "results.jsonl").read_bytes() == (tmp_path / "many" / "results.jsonl").read_bytes()
    assert r1.records == r2.records and r1.ids == r2.ids == ids
    assert np.array_equal(r1.scores["m"], r2.scores["m"], equal_nan=True)
    assert r2.status["m"].tolist() == [0, 1, 0, 0]
