"""One serialiser. The columnar engine's lines come from the same wording function as the
Sample path's (``RetrievalEvaluator.result_of``) and the same line format (``record_json``), so
rewording a reason or changing the line format changes every engine together."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from ragmeter import evaluate
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
    run = evaluate(parquet, METRICS, out_dir=tmp / f"columnar-{tag}")
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


@pytest.mark.parametrize("with_inf", [False, True])
def test_formatter_groups_rows_by_score_bits_and_escapes_ids(tmp_path: Path, with_inf: bool) -> None:
    # two metrics with their own patterns; 0.0 and -0.0 (json writes them apart), an infinite
    # score (Infinity: formatted row by row), undefined rows, ids that need escaping or hold a lone
    # surrogate: every line must be what RunWriter.add (json.dumps of the record) writes
    import numpy as np

    def result_a(key: Any, value: float) -> MetricResult:
        if value != value:
            return MetricResult(name="a", score=None, reason=f"none {key}", version="1")
        return MetricResult(name="a", score=value, reason=f"pattern {key}", details={"k": key}, version="1")

    def result_b(key: Any, value: float) -> MetricResult:
        return MetricResult(name="b", score=value, reason=f"b{key} «ü»", version="3")

    rng = np.random.default_rng(7)
    n = 3000
    values_a = rng.choice([0.0, -0.0, 0.5, 1 / 3, float("inf") if with_inf else 0.125, float("nan")], size=n)
    values_b = rng.choice([0.25, 0.75, -0.0], size=n)
    inv_a, inv_b = rng.integers(0, 3, size=n), rng.integers(0, 2, size=n)
    ids = [f"r{i}" for i in range(n)]
    ids[5], ids[17], ids[2999] = 'q"uote', "tab\there", "lone\ud800"
    one = RunWriter(["a", "b"], out_dir=tmp_path / "one", keep_records=False)
    for i in range(n):
        one.add(ids[i], {"a": result_a(int(inv_a[i]), float(values_a[i])),
                         "b": result_b(int(inv_b[i]), float(values_b[i]))})
    many = RunWriter(["a", "b"], out_dir=tmp_path / "many", keep_records=False)
    for s in (slice(0, 1000), slice(1000, n)):  # the memo carries patterns from chunk to chunk
        many.add_columns(ids[s], [PatternColumn("a", values_a[s], [0, 1, 2], inv_a[s], result_a),
                                  PatternColumn("b", values_b[s], [0, 1], inv_b[s], result_b)])
    one.flush()
    got = (tmp_path / "many" / "results.jsonl").read_bytes()
    assert got == (tmp_path / "one" / "results.jsonl").read_bytes()
    assert b'"score": -0.0' in got and b'"score": 0.0' in got and b"Infinity" not in got  # strict JSON
    assert (b"not a finite number (inf)" in got) == with_inf  # an infinite score is an error, not a number
    assert b'"id": "lone\\ud800"' in got and b'"id": "q\\"uote"' in got and got.count(b"\n") == n
    r1, r2 = one.finish({}), many.finish({})
    for m in ("a", "b"):
        assert np.array_equal(r1.scores[m], r2.scores[m], equal_nan=True)
        assert r1.status[m].tolist() == r2.status[m].tolist()
    assert r2.status["a"].tolist() == [1 if v != v else 2 if v == float("inf") else 0 for v in values_a.tolist()]


def test_lines_formatted_elsewhere_are_written_as_they_are(tmp_path: Path) -> None:
    # what the Ray engine does: a formatter in another process formats the chunk's rows, the
    # writer appends the bytes, drops the rows the driver re-routed (take) and mixes in others
    import pickle

    import numpy as np

    from ragmeter.results import LineFormatter

    def result(key: Any, value: float) -> MetricResult:
        return MetricResult(name="m", score=value, reason=f"p{key}", version="1")

    ids = ["a", "b", "c", "d"]
    values = np.array([0.5, 1.0, 0.5, 0.25])
    inv = np.array([0, 1, 0, 0])
    lines = pickle.loads(pickle.dumps(LineFormatter(["m"]).format(ids, [PatternColumn("m", values, [0, 1], inv,
                                                                                      result)])))
    assert lines.count == 4 and len(lines.split()) == 4
    kept = lines.take(np.array([True, False, True, True]))  # "b" went to the Sample path
    w = RunWriter(["m"], out_dir=tmp_path / "w", keep_records=True)
    w.add_lines(["a", "b", "c", "d"], kept, others={1: {"m": result(9, 0.0)}})
    ref = RunWriter(["m"], out_dir=tmp_path / "ref", keep_records=True)
    for sid, key, v in (("a", 0, 0.5), ("b", 9, 0.0), ("c", 0, 0.5), ("d", 0, 0.25)):
        ref.add(sid, {"m": result(key, v)})
    r, r_ref = w.finish({}), ref.finish({})
    assert (tmp_path / "w" / "results.jsonl").read_bytes() == (tmp_path / "ref" / "results.jsonl").read_bytes()
    assert r.records == r_ref.records and r.ids == ids
    assert r.scores["m"].tolist() == [0.5, 0.0, 0.5, 0.25]


@pytest.mark.parametrize("escaped", [False, True])
def test_lines_grouped_in_one_process_and_joined_in_another(tmp_path: Path, escaped: bool) -> None:
    # the Ray columnar path: a worker's formatter groups (a few distinct texts, not the lines), the
    # pickled groups go to the driver, whose own formatter joins them to the ids, in small pieces;
    # the lines must be RunWriter.add's, with ids that need escaping too
    import pickle

    import numpy as np

    from ragmeter.results import LineFormatter

    def result(key: Any, value: float) -> MetricResult:
        return MetricResult(name="m", score=value, reason=f"p{key}", version="1")

    n = 50
    ids = [f"r{i}" for i in range(n)]
    if escaped:
        ids[7] = 'say "hi"\n'
    values = np.array([0.5, 1.0, 0.25, -0.0, float("nan")] * 10)
    inv = np.array([0, 1] * 25)
    grouped = LineFormatter(["m"]).group(ids, [PatternColumn("m", values, [0, 1], inv, result)])
    assert grouped.plain is not escaped and len(grouped.texts) == 10  # 2 patterns x (4 score bits + undefined)
    shipped = pickle.loads(pickle.dumps(grouped))
    lines = LineFormatter(["m"]).join(ids, shipped, rows=7)  # another formatter, pieces of 7 lines
    assert len(lines.data) == 8 and lines.count == n
    w = RunWriter(["m"], out_dir=tmp_path / "w", keep_records=False)
    w.add_lines(ids, lines)
    ref = RunWriter(["m"], out_dir=tmp_path / "ref", keep_records=False)
    for i, sid in enumerate(ids):
        ref.add(sid, {"m": result(int(inv[i]), float(values[i]))})
    w.finish({}), ref.finish({})
    assert (tmp_path / "w" / "results.jsonl").read_bytes() == (tmp_path / "ref" / "results.jsonl").read_bytes()
