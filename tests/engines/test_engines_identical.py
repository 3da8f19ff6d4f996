"""The local (Sample path), columnar and Ray engines write byte-identical
``results.jsonl`` and ``summary.json``, ids included.

``summary.json`` differs only in the run's timing and engine fields, which are removed before the
comparison: ``run.started``, ``run.seconds`` (timing) and ``run.engine`` (which engine ran). Every
other byte, key order included, must match.
"""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from ragmeter import evaluate
from ragmeter.io import read_samples
from ragmeter.registry import list_metrics, resolve_name

pa = pytest.importorskip("pyarrow")
pq = pytest.importorskip("pyarrow.parquet")
ray_engine = pytest.importorskip("ragmeter.engines.ray_engine")

ROOT = Path(__file__).resolve().parents[2]
#: Every retrieval metric, with and without a cutoff and at a graded relevance level; the registry adds
#: any retrieval metric not named here, so a new one is compared across engines too.
_NAMED = ["mrr", "ndcg@10", "ndcg(gain=linear)@3", "recall@5", "recall", "precision@3", "map", "hit_rate@5",
          "r_precision", "context_precision", "context_recall", "mrr(rel_level=2)@10"]
RETRIEVAL = _NAMED + [s.name + ("@5" if s.cutoff == "required" else "") for s in list_metrics()
                      if s.role == "retrieval" and s.name not in {resolve_name(n)[0].name for n in _NAMED}]
#: Fields that name the time or the engine of a run: the only ones allowed to differ.
VOLATILE = ("started", "seconds", "engine")


def _summary(out: Path) -> str:
    data = json.loads((out / "summary.json").read_text(encoding="utf-8"))
    for key in VOLATILE:
        data["run"].pop(key, None)
    return json.dumps(data, indent=2)


def _assert_same(a: Path, b: Path) -> None:
    assert (a / "results.jsonl").read_bytes() == (b / "results.jsonl").read_bytes()
    assert _summary(a) == _summary(b)


def _local(data: Path, metrics: list[str] | None, out: Path, **kw: Any) -> Any:
    return evaluate(read_samples(data, **kw), metrics, out_dir=str(out), keep_records=False, embedder=None,
                    engine="local")


def _to_parquet(rows: list[dict[str, Any]], path: Path, group_rows: int | None = None) -> Path:
    """``rows`` as Parquet (row groups of ``group_rows`` rows, None: pyarrow's default): a text
    context becomes ``{"text": ...}``, a label list a map of grade 1 (what the Sample model makes of both)."""
    out = []
    for r in rows:
        r = dict(r)
        r["contexts"] = [c if isinstance(c, dict) else {"text": c} for c in r["contexts"]]
        rel = r.get("relevant")
        r["relevant"] = None if rel is None else list((rel if isinstance(rel, dict) else dict.fromkeys(rel, 1)).items())
        out.append(r)
    ctx = pa.list_(pa.struct([("id", pa.string()), ("text", pa.string()), ("score", pa.float64())]))
    schema = pa.schema([("id", pa.string()), ("query", pa.string()), ("answer", pa.string()), ("contexts", ctx),
                        ("reference", pa.string()), ("relevant", pa.map_(pa.string(), pa.int64())),
                        ("retriever", pa.string()), ("latency_ms", pa.int64())])
    pq.write_table(pa.Table.from_pylist(out, schema=schema), path, row_group_size=group_rows)
    return path


def test_bundled_examples_identical_on_three_engines(ray_cluster, tmp_path: Path) -> None:
    src = ROOT / "examples" / "rag_samples.jsonl"
    rows = [json.loads(line) for line in src.read_text(encoding="utf-8").splitlines() if line.strip()]
    parquet = _to_parquet(rows, tmp_path / "rag.parquet")
    local = _local(src, RETRIEVAL, tmp_path / "local")
    columnar = evaluate(parquet, RETRIEVAL, out_dir=tmp_path / "columnar", engine="local")
    ray = evaluate(src, RETRIEVAL, engine="ray", out_dir=tmp_path / "ray", chunk_size=7)
    ray_pq = evaluate(parquet, RETRIEVAL, engine="ray", out_dir=tmp_path / "ray_pq", chunk_size=7)
    _assert_same(tmp_path / "local", tmp_path / "columnar")
    _assert_same(tmp_path / "local", tmp_path / "ray")
    _assert_same(tmp_path / "local", tmp_path / "ray_pq")
    assert local.ids == columnar.ids == ray.ids == ray_pq.ids == [r["id"] for r in rows]
    assert len(local) == 20 and np.nansum(local.scores["mrr"]) > 0  # the data is really scored


def test_bundled_examples_default_metrics_identical_local_and_ray(ray_cluster, tmp_path: Path) -> None:
    # no judge, no embedder: the retrieval and lexical defaults; the CSV in RAGAS column names too
    for name in ("rag_samples.jsonl", "rag_samples_ragas.csv"):
        src = ROOT / "examples" / name
        local = _local(src, None, tmp_path / f"local-{name}")
        ray = evaluate(src, None, engine="ray", embedder=None, out_dir=tmp_path / f"ray-{name}", chunk_size=8)
        _assert_same(tmp_path / f"local-{name}", tmp_path / f"ray-{name}")
        assert local.ids == ray.ids and len(local.scores) >= 5


def _generated(n: int, seed: int = 13) -> list[dict[str, Any]]:
    """``n`` seeded retrieval rows: 0-10 id-only contexts of 300 documents, 0-3 graded labels (half
    of them retrieved), some rows without labels, some without ids."""
    rng = np.random.default_rng(seed)
    k = rng.integers(0, 11, size=n)
    nlab = rng.integers(0, 4, size=n)
    docs = rng.integers(0, 300, size=int(k.sum()))
    starts = np.concatenate(([0], np.cumsum(k)))
    rows: list[dict[str, Any]] = []
    for i in range(n):
        ctx = docs[starts[i]:starts[i + 1]]
        row: dict[str, Any] = {"contexts": [{"id": f"d{d}"} for d in ctx.tolist()]}
        if i % 10 != 3:
            row["id"] = f"q{i}"
        if i % 17 != 5:
            labels = {}
            for _ in range(int(nlab[i])):
                d = int(ctx[rng.integers(0, len(ctx))]) if len(ctx) and rng.random() < 0.5 else int(rng.integers(300))
                labels[f"d{d}"] = int(rng.integers(1, 4))
            row["relevant"] = labels
        rows.append(row)
    return rows


def _write(rows: list[dict[str, Any]], tmp: Path, stem: str) -> tuple[Path, Path]:
    jsonl = tmp / f"{stem}.jsonl"
    jsonl.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    # relevant as a map column (id -> grade): the shape the columnar engine joins in Arrow
    table = pa.table({
        "id": pa.array([r.get("id") for r in rows], pa.string()),
        "contexts": pa.array([r["contexts"] for r in rows], pa.list_(pa.struct([("id", pa.string())]))),
        "relevant": pa.array([list(r["relevant"].items()) if "relevant" in r else None for r in rows],
                             pa.map_(pa.string(), pa.int64())),
    })
    parquet = tmp / f"{stem}.parquet"
    pq.write_table(table, parquet)
    return jsonl, parquet


@pytest.mark.slow
def test_generated_20k_rows_identical_local_and_columnar(tmp_path: Path) -> None:
    rows = _generated(20_000)
    jsonl, parquet = _write(rows, tmp_path, "gen")
    metrics = ["mrr", "ndcg@10", "recall@5", "map", "precision@3"]
    local = _local(jsonl, metrics, tmp_path / "local")
    columnar = evaluate(parquet, metrics, out_dir=tmp_path / "columnar", engine="local")
    _assert_same(tmp_path / "local", tmp_path / "columnar")
    assert local.ids[:4] == ["q0", "q1", "q2", "4"] and len(columnar) == 20_000
    assert columnar.run["engine"]["columnar_rows"] == 20_000  # every row took the vectorised path


@pytest.mark.slow
def test_generated_20k_rows_identical_on_ray(ray_cluster, tmp_path: Path) -> None:
    # retrieval-only Parquet: the columnar kernels run on the workers, the driver writes
    rows = _generated(20_000, seed=7)
    _, parquet = _write(rows, tmp_path, "gen")
    metrics = ["mrr", "ndcg@10", "recall@5", "map(rel_level=2)"]
    columnar = evaluate(parquet, metrics, out_dir=tmp_path / "columnar", engine="local")
    t0 = time.perf_counter()
    run = evaluate(parquet, metrics, engine="ray", out_dir=tmp_path / "ray", num_workers=2, keep_records=False)
    print(f"ray: {len(run) / (time.perf_counter() - t0):,.0f} rows/s")
    _assert_same(tmp_path / "columnar", tmp_path / "ray")
    assert run.ids == columnar.ids and run.ids[3] == "4"
    assert run.run["engine"]["path"] == "columnar" and run.run["engine"]["columnar_rows"] == 20_000
    assert sorted(p.name for p in (tmp_path / "ray").iterdir()) == ["results.jsonl", "summary.json"]


def test_judged_run_identical_and_judge_counters_match(ray_cluster, fake_llm, tmp_path: Path) -> None:
    from ragmeter.backend_config import JudgeConfig
    from tests.metrics.generation.rules import judge_rule

    fake_llm.rule = judge_rule
    src = ROOT / "examples" / "rag_samples.jsonl"
    config = JudgeConfig(f"openai:fake-model@{fake_llm.url}", cache=False, timeout=5.0, concurrency=4)
    metrics = ["context_relevancy", "mrr"]
    judge = config.build()
    local = evaluate(read_samples(src), metrics, judge=judge, out_dir=str(tmp_path / "local"), keep_records=False,
                     engine="local")
    judge.close()
    served = len(fake_llm.log)
    seen: list[dict[str, Any]] = []
    ray = evaluate(src, metrics, engine="ray", judge=config, out_dir=tmp_path / "ray", chunk_size=6,
                                  on_judge_stats=seen.append)
    assert len(fake_llm.log) == 2 * served > 0  # no cache: Ray's workers asked the server again
    _assert_same(tmp_path / "local", tmp_path / "ray")  # the judge counters in summary.json included
    assert ray.run["judge"]["calls"] == local.run["judge"]["calls"] == served
    assert seen and seen[-1]["calls"] == served  # the progress line's counters are the workers'


@pytest.mark.parametrize("read", ["one group", "large groups", "driver", "groups"])
def test_ray_columnar_with_odd_rows_and_duplicate_ids_identical(ray_cluster, tmp_path: Path,
                                                                monkeypatch: pytest.MonkeyPatch,
                                                                read: str) -> None:
    # the workers format the fast rows' lines; the driver must still send to the Sample path the
    # rows its duplicate-id check catches (a fast row on the worker: its line is dropped there),
    # mix in text rows and bad rows, and count and report every row: small batches, so the rows
    # that matter fall in several of them. With as many row groups as workers (one machine) a
    # task per row group reads it; the driver reads and ships the rows of one group (fewer groups
    # than workers), of groups over WORKER_READ_ROWS, or of any group when the workers do not
    # share the driver's files
    rows: list[dict[str, Any]] = [dict(r) for r in _generated(600, seed=3)]
    rows[120]["id"] = "q10"  # a duplicate of a row of an earlier batch
    rows[131]["id"] = "q125"  # a duplicate within its batch
    rows[200]["contexts"] = [{"id": "dx", "text": "some passage"}]  # a text, its label not found by id
    rows[200]["relevant"] = {"d999": 1}
    rows[260] = {"id": "q260", "contexts": [{}], "relevant": {"d1": 1}}  # a context with neither id nor text
    path = _to_parquet(rows, tmp_path / "odd.parquet", None if read == "one group" else 100)  # 1 group or 6
    metrics = ["mrr", "ndcg@10", "recall@5", "map(rel_level=2)"]
    local = _local(path, metrics, tmp_path / "local", on_error="skip")
    columnar = evaluate(path, metrics, out_dir=tmp_path / "columnar", on_error="skip", engine="local")
    from ragmeter.engines import _ray_columnar

    monkeypatch.setattr(_ray_columnar, "COLUMNAR_BATCH_ROWS", 50)
    monkeypatch.setattr(_ray_columnar, "WORKER_READ_ROWS", 99 if read == "large groups" else 10**6)
    if read == "driver":
        monkeypatch.setattr(_ray_columnar, "_workers_share_files", lambda ray: False)
    submitted: list[str] = []
    remote = ray_engine.RayOptions.remote
    monkeypatch.setattr(ray_engine.RayOptions, "remote",
                        lambda self, ray, fn: (submitted.append(fn.__name__), remote(self, ray, fn))[1])
    calls: list[int] = []
    bad: list[str] = []
    run = evaluate(path, metrics, engine="ray", out_dir=tmp_path / "ray", on_error="skip", num_workers=2,
                                  progress=calls.append, on_bad_row=lambda e: bad.append(str(e)))
    _assert_same(tmp_path / "local", tmp_path / "ray")
    assert run.ids == local.ids == columnar.ids and run.ids[120] == f"{path}:121" and run.ids[3] == "4"
    assert calls == [50] * 12 and len(bad) == 3  # two duplicate ids and the empty context
    assert "duplicate sample id 'q10'" in bad[0] and "duplicate sample id 'q125'" in bad[1]
    assert run.run["engine"]["path"] == "columnar"
    assert run.run["engine"]["columnar_rows"] == columnar.run["engine"]["columnar_rows"] == 600 - 4
    assert run.summary()["mrr"]["errors"] == 3
    by_group = read in ("groups", "large groups")
    assert submitted == ["warm_task", "score_batch_on_worker", *(["score_group_on_worker"] if by_group else [])]
