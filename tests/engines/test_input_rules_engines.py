"""The input rules of docs/input-format.md give identical files on the columnar fast path and the
Sample path: absent fields, labels that can never match, infinite grades, texts over the limit and
rankings over the details budget."""

from __future__ import annotations

import csv
import json

import pytest

from ragmeter import evaluate
from ragmeter.errors import InputError
from ragmeter.io import read_samples
from ragmeter.types import MAX_STORED_ITEMS

from .test_columnar import CTX, METRICS, _assert_same_files, _both

pa = pytest.importorskip("pyarrow")
pq = pytest.importorskip("pyarrow.parquet")


def _lines(tmp_path, which="fast"):
    return [json.loads(x) for x in (tmp_path / which / "results.jsonl").read_text().splitlines()]


def test_absent_and_unmatchable_rows_equal_on_both_paths(tmp_path):
    big = [{"id": f"d{i}", "text": None, "score": None} for i in range(MAX_STORED_ITEMS + 5)]
    table = pa.table({
        "id": ["has", "no-ctx", "empty", "no-rel", "text-labels", "miss", "long-ranking"],
        "contexts": pa.array([
            [{"id": "x", "text": None, "score": None}],
            None,
            [],
            [{"id": "x", "text": None, "score": None}],
            [{"id": "d1", "text": None, "score": None}, {"id": "d2", "text": None, "score": None}],
            [{"id": "d1", "text": None, "score": None}],
            big,
        ], CTX),
        "relevant": pa.array([["x"], ["x"], ["x"], None, ["the capital of France"], ["d9"], ["d3"]],
                             pa.list_(pa.string())),
    })
    fast, slow, _ = _both(tmp_path, table, METRICS)
    _assert_same_files(tmp_path)
    rec = {r["id"]: r["metrics"] for r in _lines(tmp_path)}
    assert rec["has"]["mrr"]["score"] == 1.0
    assert rec["no-ctx"]["mrr"]["reason"] == "undefined: no contexts field"
    assert rec["empty"]["mrr"]["score"] == 0.0
    assert rec["no-rel"]["recall@3"]["reason"] == "undefined: no relevant field"
    assert rec["no-rel"]["mrr"]["reason"] == "undefined: no relevant field and no reference field"
    assert rec["text-labels"]["mrr"]["score"] is None
    assert rec["text-labels"]["mrr"]["details"]["labels_cannot_match"] is True
    assert rec["miss"]["mrr"]["score"] == 0.0  # id labels and id contexts that miss: a real 0
    assert rec["long-ranking"]["mrr"]["score"] == pytest.approx(1 / 4)
    assert len(rec["long-ranking"]["mrr"]["details"]["matched_by"]) == MAX_STORED_ITEMS
    assert fast.run["input_checks"] == slow.run["input_checks"]
    assert fast.run["input_checks"]["unmatchable_labels"] == 1


def test_relevant_absent_from_every_row_is_an_input_error_on_both_paths(tmp_path):
    table = pa.table({"id": ["a", "b"], "contexts": pa.array([[{"id": "x", "text": None, "score": None}]] * 2, CTX),
                      "qrels": pa.array([["x"], ["x"]], pa.list_(pa.string()))})
    path = tmp_path / "d.parquet"
    pq.write_table(table, path)
    with pytest.raises(InputError, match="did you mean 'qrels'\\? use --map qrels=relevant"):
        evaluate(path, ["recall"], out_dir=tmp_path / "fast", engine="local")

    with pytest.raises(InputError, match="did you mean 'qrels'"):
        evaluate(path, ["recall", "token_f1"], out_dir=tmp_path / "o", engine="local")  # not columnar: the Sample path
    assert len(_lines(tmp_path)) == 2


def test_infinite_grade_and_text_over_the_limit_are_row_errors_on_both_paths(tmp_path):
    table = pa.table({
        "id": ["inf", "long", "ok"],
        "contexts": pa.array([[{"id": "a", "text": None, "score": None}],
                              [{"id": "a", "text": "x" * 50, "score": None}],
                              [{"id": "a", "text": None, "score": None}]], CTX),
        "relevant": pa.array([[("a", float("inf"))], [("a", 1.0)], [("a", 2.0)]],
                             pa.map_(pa.string(), pa.float64())),
    })
    fast, _slow, bad = _both(tmp_path, table, ["ndcg@5"], on_error="skip", max_text_chars=40)
    _assert_same_files(tmp_path)
    assert [e.field for e in bad] == ["relevant", "contexts[0].text"]
    assert fast.status["ndcg@5"].tolist() == [2, 2, 0]


def test_ray_engine_applies_the_same_rules(ray_cluster, tmp_path):
    pytest.importorskip("ragmeter.engines.ray_engine")
    from ragmeter.io import read_samples

    rows = [{"id": "has", "contexts": [{"id": "x"}], "relevant": ["x"]},
            {"id": "no-ctx", "relevant": ["x"]},
            {"id": "empty", "contexts": [], "relevant": ["x"]},
            {"id": "ids-vs-texts", "contexts": ["a passage"], "relevant": ["doc1"]}]
    data = tmp_path / "d.jsonl"
    data.write_text("".join(json.dumps(r) + "\n" for r in rows))
    run = evaluate(data, ["mrr", "recall"], engine="ray", out_dir=tmp_path / "ray", chunk_size=2)
    evaluate(read_samples(data), ["mrr", "recall"], out_dir=str(tmp_path / "local"), keep_records=False, engine="local")
    assert (tmp_path / "ray" / "results.jsonl").read_text() == (tmp_path / "local" / "results.jsonl").read_text()
    assert run.status["mrr"].tolist() == [0, 1, 0, 1]
    assert run.run["input_checks"]["unmatchable_labels"] == 1
    renamed = tmp_path / "r.jsonl"
    renamed.write_text("".join(json.dumps({"id": r["id"], "docs": [{"id": "x"}], "relevant": ["x"]}) + "\n"
                               for r in rows))
    with pytest.raises(InputError, match="did you mean 'docs'"):
        evaluate(renamed, ["mrr"], engine="ray", out_dir=tmp_path / "ray2", chunk_size=2)


@pytest.mark.parametrize("suffix", [".jsonl", ".parquet"])
def test_ray_engine_takes_max_text_chars(ray_cluster, tmp_path, suffix):
    # the limit the CLI's --max-text-chars sets reaches the ray engine (it applied the default only),
    # on its Sample path (JSONL) and its columnar path (Parquet, retrieval metrics)

    rows = [{"id": "long", "contexts": [{"id": "a", "text": "x" * 50}], "relevant": ["a"]},
            {"id": "ok", "contexts": [{"id": "a", "text": "short"}], "relevant": ["a"]}]
    data = tmp_path / f"d{suffix}"
    if suffix == ".jsonl":
        data.write_text("".join(json.dumps(r) + "\n" for r in rows))
    else:
        pq.write_table(pa.Table.from_pylist(rows), data)
    bad: list[InputError] = []
    run = evaluate(data, ["mrr"], engine="ray", out_dir=tmp_path / "limited", on_error="skip",
                        on_bad_row=bad.append, max_text_chars=40)
    assert [(e.field, e.line) for e in bad] == [("contexts[0].text", 1)]
    assert "more than the limit of 40" in bad[0].message
    assert run.status["mrr"].tolist() == [2, 0]  # the long row is an input error, the other scored
    free = evaluate(data, ["mrr"], engine="ray", out_dir=tmp_path / "free", on_error="skip", max_text_chars=None)
    assert free.status["mrr"].tolist() == [0, 0]


def test_extra_keys_are_metadata_on_both_paths_in_every_format(tmp_path):
    """Keys ragmeter does not read (on a row, on a context) are kept as metadata on every path and
    written beside the results: the columnar engine gives the Sample path's files byte for byte."""
    rows = [{"id": f"r{i}", "contexts": [{"id": "x"}, {"id": f"y{i}"}], "relevant": ["x"]} for i in range(40)]
    rows[3]["category"] = "geo"
    rows[5]["contexts"][1]["source"] = "wiki"
    rows[7]["metadata"] = {"lang": "en"}
    rows[9]["category"] = None  # null: absent, nothing written
    plain = [dict(r) for r in rows]
    for r in plain:
        r.pop("category", None)
        r.pop("metadata", None)
    ctx_meta = pa.list_(pa.struct([("id", pa.string()), ("source", pa.string())]))
    table = pa.table({
        "id": [r["id"] for r in rows],
        "contexts": pa.array([[{"id": c["id"], "source": c.get("source")} for c in r["contexts"]] for r in rows],
                             ctx_meta),
        "relevant": pa.array([r["relevant"] for r in rows], pa.list_(pa.string())),
        "category": [r.get("category") for r in rows],
    })
    pq.write_table(table, tmp_path / "d.parquet")
    (tmp_path / "d.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    with open(tmp_path / "d.csv", "w", encoding="utf-8", newline="") as fh:
        w = csv.writer(fh)
        w.writerow(["id", "contexts", "relevant", "category"])
        for r in rows:
            w.writerow([r["id"], json.dumps(r["contexts"]), json.dumps(r["relevant"]), r.get("category") or ""])
    for fmt in ("parquet", "jsonl", "csv"):
        src = tmp_path / f"d.{fmt}"
        fast = evaluate(src, ["mrr", "ndcg@5"], format=fmt, out_dir=tmp_path / f"{fmt}-fast", engine="local")
        evaluate(read_samples(src), ["mrr", "ndcg@5"], out_dir=str(tmp_path / f"{fmt}-slow"), keep_records=False,
                 engine="local")
        a = (tmp_path / f"{fmt}-fast" / "results.jsonl").read_text(encoding="utf-8")
        b = (tmp_path / f"{fmt}-slow" / "results.jsonl").read_text(encoding="utf-8")
        assert a == b, fmt
        lines = [json.loads(x) for x in a.splitlines()]
        assert lines[3]["metadata"] == {"category": "geo"}, fmt
        assert lines[5]["context_metadata"] == [{}, {"source": "wiki"}], fmt
        assert "metadata" not in lines[9] and "context_metadata" not in lines[9], fmt
        assert [x["metrics"]["mrr"]["score"] for x in lines] == [1.0] * 40, fmt
        assert fast.run["engine"]["columnar_rows"] >= 36, fmt  # rows with nothing kept stay on the fast path
    jl = [json.loads(x) for x in (tmp_path / "jsonl-fast" / "results.jsonl").read_text().splitlines()]
    assert jl[7]["metadata"] == {"lang": "en"}
