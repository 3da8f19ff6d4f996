"""The columnar fast path equals the Sample path line for line (``results.jsonl``) and number for
number (``summary.json``), on hand-checked and on random data."""

from __future__ import annotations

import json
import random
from pathlib import Path

import numpy as np
import pytest

from ragmeter import evaluate
from ragmeter.engines._arrow import IdLabels, id_relevance
from ragmeter.engines.columnar import columnar_supported, run_columnar
from ragmeter.errors import InputError, InvalidParameterError
from ragmeter.io import ReadOptions, read_samples

pa = pytest.importorskip("pyarrow")
pq = pytest.importorskip("pyarrow.parquet")

METRICS = ["mrr", "ndcg@5", "map", "recall@3", "precision@2", "hit_rate", "r_precision", "context_precision",
           "context_recall", "ndcg(rel_level=2)@3", "ndcg(gain='linear')"]
CTX = pa.list_(pa.struct([("id", pa.string()), ("text", pa.string()), ("score", pa.float64())]))


def _both(tmp_path: Path, table, metrics=METRICS, on_error="raise", batch_rows=64, **kw):
    path = tmp_path / "d.parquet"
    pq.write_table(table, path)
    bad_fast: list[InputError] = []
    fast = run_columnar(path, metrics, read=ReadOptions(on_error=on_error, **kw), out_dir=tmp_path / "fast",
                        batch_rows=batch_rows, on_bad_row=bad_fast.append)
    slow = evaluate(read_samples(path, on_error=on_error, **kw), metrics, out_dir=str(tmp_path / "slow"),
                    keep_records=False)
    return fast, slow, bad_fast


def _assert_same_files(tmp_path: Path) -> None:
    a = (tmp_path / "fast" / "results.jsonl").read_text(encoding="utf-8").splitlines()
    b = (tmp_path / "slow" / "results.jsonl").read_text(encoding="utf-8").splitlines()
    assert len(a) == len(b)
    for x, y in zip(a, b, strict=True):
        assert x == y
    sa = json.loads((tmp_path / "fast" / "summary.json").read_text())
    sb = json.loads((tmp_path / "slow" / "summary.json").read_text())
    assert sa["metrics"] == sb["metrics"]


def test_hand_checked_scores(tmp_path):
    table = pa.table({
        "id": ["a", "b", "c", "d"],
        "contexts": pa.array([[{"id": "x"}, {"id": "y"}, {"id": "y"}], [], [{"id": "z"}], [{"id": "x"}]],
                             pa.list_(pa.struct([("id", pa.string())]))),
        "relevant": pa.array([["y", "w"], ["x"], None, []], pa.list_(pa.string())),
    })
    fast, _, _ = _both(tmp_path, table, ["mrr", "recall", "hit_rate"])
    # a: first relevant at rank 2 (the duplicate y counts once); 1 of 2 labels found
    # b: nothing retrieved -> 0; c: no labels -> undefined; d: no labelled relevant -> mrr 0, recall 0
    assert fast.scores["mrr"][[0, 1, 3]].tolist() == [0.5, 0.0, 0.0]
    assert fast.scores["recall"][[0, 1, 3]].tolist() == [0.5, 0.0, 0.0]
    assert np.isnan(fast.scores["mrr"][2]) and fast.status["mrr"].tolist() == [0, 0, 1, 0]
    line = json.loads((tmp_path / "fast" / "results.jsonl").read_text().splitlines()[0])
    assert line["metrics"]["mrr"]["details"]["matched_by"] == [None, "id", None]
    assert fast.run["engine"]["columnar_rows"] == 4
    _assert_same_files(tmp_path)


def _random_table(seed: int, n: int = 700, with_text: bool = False, graded: bool = False):
    rng = random.Random(seed)
    ids, ctxs, rels, refs = [], [], [], []
    for i in range(n):
        k = rng.choice([0, 0, 1, 3, 5, 8])
        ctx = []
        for _ in range(k):
            cid = f"d{rng.randint(0, 9)}" if rng.random() > 0.05 else None
            text = None
            if with_text and rng.random() < 0.3:
                text = f"passage about d{rng.randint(0, 9)}"
            if cid is None and text is None:
                text = "" if rng.random() < 0.5 else None  # None/None: a bad row
            ctx.append({"id": cid, "text": text, "score": rng.random()})
        r = rng.random()
        if r < 0.1:
            rel = None
        elif graded:
            rel = [(f"d{rng.randint(0, 12)}", float(rng.choice([-1, 0, 1, 2, 3, 0.5])))
                   for _ in range(rng.randint(0, 4))]
            if rng.random() < 0.03:
                rel.append((rel[0][0] if rel else "d1", float("nan")))  # NaN grade: a bad row
        else:
            rel = [f"d{rng.randint(0, 12)}" for _ in range(rng.randint(0, 4))]  # duplicates included
            if with_text and rel and rng.random() < 0.2:
                rel.append("passage about d3")
        ids.append(None if rng.random() < 0.05 else (f"q{i}" if rng.random() > 0.01 else "q0"))
        ctxs.append(None if rng.random() < 0.03 else ctx)
        rels.append(rel)
        refs.append("passage about d2" if (rel is None and rng.random() < 0.5) else None)
    rel_type = pa.map_(pa.string(), pa.float64()) if graded else pa.list_(pa.string())
    return pa.table({"id": pa.array(ids, pa.string()), "contexts": pa.array(ctxs, CTX),
                     "relevant": pa.array(rels, rel_type), "reference": pa.array(refs, pa.string())})


@pytest.mark.parametrize(("seed", "with_text", "graded"), [(1, False, False), (2, True, False), (3, False, True),
                                                           (4, True, True)])
def test_random_data_equals_the_sample_path(tmp_path, seed, with_text, graded):
    table = _random_table(seed, with_text=with_text, graded=graded)
    fast, slow, bad = _both(tmp_path, table, on_error="skip", batch_rows=97)
    assert fast.ids == slow.ids
    for m in slow.metrics:
        np.testing.assert_array_equal(fast.status[m], slow.status[m])
        np.testing.assert_array_equal(fast.scores[m], slow.scores[m])  # NaN == NaN, else bit-for-bit
    assert bad and all(isinstance(e, InputError) for e in bad)  # duplicate ids, empty contexts...
    assert fast.run["engine"]["columnar_rows"] > len(fast) // 2  # most rows really took the fast path
    _assert_same_files(tmp_path)


def test_int_ids_field_map_and_map_with_a_repeated_key(tmp_path):
    table = pa.table({
        "qid": pa.array([7, 8, 9], pa.int64()),
        "docs": pa.array([[{"id": 1}, {"id": 2}], [{"id": 2}], [{"id": 3}]],
                         pa.list_(pa.struct([("id", pa.int64())]))),
        "labels": pa.array([[(2, 3.0)], [(2, 1.0), (2, 0.0)], [(3, 2.0)]], pa.map_(pa.int64(), pa.float64())),
    })
    fmap = {"qid": "id", "docs": "contexts", "labels": "relevant"}
    fast, _, _ = _both(tmp_path, table, ["ndcg", "mrr"], field_map=fmap)
    assert fast.ids == ["7", "8", "9"]
    assert fast.scores["mrr"].tolist() == [0.5, 0.0, 1.0]  # row 8: the last grade of d2 (0) wins
    _assert_same_files(tmp_path)


def test_bad_row_raises_like_the_reader(tmp_path):
    table = pa.table({"id": ["a", "a"], "contexts": pa.array([[{"id": "x"}], [{"id": "x"}]],
                                                             pa.list_(pa.struct([("id", pa.string())]))),
                      "relevant": pa.array([["x"], ["x"]])})
    pq.write_table(table, tmp_path / "d.parquet")
    with pytest.raises(InputError, match="duplicate sample id 'a'"):
        evaluate(tmp_path / "d.parquet", ["mrr"], out_dir=tmp_path / "o")


@pytest.mark.parametrize("dense", [True, False, None])
def test_id_relevance_on_arrays(dense):
    # row 0: contexts [5, 7, 5, -] labels {7: 2, 5: 0, 9: 1}; row 1: no contexts, labels {5: 1}
    x = IdLabels(ctx_len=np.array([4, 0]), ctx_code=np.array([5, 7, 5, -1]), lab_len=np.array([3, 1]),
                 lab_code=np.array([7, 5, 9, 5]), lab_grade=np.array([2.0, 0.0, 1.0, 1.0]),
                 rel_none=np.array([False, False]))
    r = id_relevance(x, 1.0, dense=dense)
    assert r.gain.tolist() == [0.0, 2.0, 0.0, 0.0]
    assert r.rel.tolist() == [False, True, False, False] and r.covered.tolist() == [0.0, 1.0, 0.0, 0.0]
    assert r.num_rel.tolist() == [2.0, 1.0] and r.label_found.tolist() == [True, True, False, False]
    assert r.ideal_row.tolist() == [0, 0, 1] and r.ideal.tolist() == [2.0, 1.0, 1.0]


def _first_match_by_loops(x):
    """Per label: the flat position of the first context of its row with the label's id (None:
    not there), by plain loops (the reference for both vectorised matches)."""
    out, c0, l0 = [], 0, 0
    for clen, llen in zip(x.ctx_len.tolist(), x.lab_len.tolist(), strict=True):
        ids = x.ctx_code[c0:c0 + clen].tolist()
        for code in x.lab_code[l0:l0 + llen].tolist():
            out.append(next((c0 + k for k, c in enumerate(ids) if c >= 0 and c == code), None))
        c0, l0 = c0 + clen, l0 + llen
    return out


@pytest.mark.parametrize("seed", range(6))
def test_dense_and_sorted_matches_equal_plain_loops(seed):
    rng = np.random.default_rng(seed)
    n = 200
    ctx_len = rng.integers(0, 12, n) if seed % 2 else np.full(n, 10)
    lab_len = rng.integers(0, 5, n)
    # few distinct ids, so rows repeat an id; -1: a context without id / a null label
    ctx_code = rng.integers(-1, 15, int(ctx_len.sum()))
    lab_code = rng.integers(-1, 15, int(lab_len.sum()))
    x = IdLabels(ctx_len=ctx_len, ctx_code=ctx_code, lab_len=lab_len, lab_code=lab_code,
                 lab_grade=rng.integers(-1, 4, len(lab_code)).astype(float), rel_none=np.zeros(n, bool))
    want = _first_match_by_loops(x)
    assert any(w is None for w in want) and any(w is not None for w in want)
    dense, sorted_ = id_relevance(x, 1.0, dense=True), id_relevance(x, 1.0, dense=False)
    assert dense.label_found.tolist() == [w is not None for w in want]
    for field in ("rel", "gain", "covered", "num_rel", "nonrel", "num_nonrel", "label_found", "ideal_row", "ideal"):
        assert getattr(dense, field).tolist() == getattr(sorted_, field).tolist(), field
    # the gain at a position is the best grade (> 0) of the labels first found there
    gain = [0.0] * len(ctx_code)
    for g, w in zip(x.lab_grade.tolist(), want, strict=True):
        if w is not None:
            gain[w] = max(gain[w], g)
    assert dense.gain.tolist() == gain


def test_dense_match_is_chosen_for_short_even_rankings_only():
    from ragmeter.engines._arrow import _dense_fits

    def labels(ctx_len):
        ctx_len = np.array(ctx_len)
        n = len(ctx_len)
        return IdLabels(ctx_len=ctx_len, ctx_code=np.zeros(int(ctx_len.sum()), np.int64),
                        lab_len=np.ones(n, np.int64), lab_code=np.zeros(n, np.int64), lab_grade=np.ones(n),
                        rel_none=np.zeros(n, bool))

    assert _dense_fits(labels([10] * 100))
    assert not _dense_fits(labels([65] * 10))  # longer than DENSE_MAX_WIDTH
    assert not _dense_fits(labels([60] + [0] * 99))  # one long row among empty ones: padding x20
    assert not _dense_fits(labels([0] * 5))


def test_only_retrieval_metrics_take_the_fast_path(tmp_path):
    assert columnar_supported(["mrr", "ndcg@10"])
    assert not columnar_supported(["mrr", "faithfulness"]) and not columnar_supported(None)
    assert not columnar_supported(["no_such_metric"])
    with pytest.raises(InvalidParameterError):
        run_columnar(tmp_path / "x.parquet", ["rouge_l"], read=ReadOptions(), out_dir=tmp_path / "o")


def test_cli_takes_the_fast_path_for_parquet_and_retrieval_metrics(tmp_path):
    from click.testing import CliRunner

    from ragmeter.cli import main

    pq.write_table(_random_table(5, n=300), tmp_path / "d.parquet")
    res = CliRunner().invoke(main, ["eval", str(tmp_path / "d.parquet"), "-m", "mrr", "-m", "ndcg@5", "-o",
                                    str(tmp_path / "fast"), "-q", "--no-report", "--on-error", "skip"],
                             catch_exceptions=False)
    assert res.exit_code == 0, res.output
    assert "bad row(s)" in res.output  # the bad rows are counted as on the Sample path
    summary = json.loads((tmp_path / "fast" / "summary.json").read_text())
    assert summary["run"]["engine"]["path"] == "columnar"
    evaluate(read_samples(tmp_path / "d.parquet", on_error="skip"), ["mrr", "ndcg@5"],
             out_dir=str(tmp_path / "slow"), keep_records=False)
    _assert_same_files(tmp_path)


def test_the_columnar_path_builds_each_evaluator_once_and_takes_it_by_its_kernel(tmp_path, monkeypatch):
    # before: evaluate_file built every evaluator twice (once to decide the path, once to run it)
    # and took only subclasses of RetrievalEvaluator
    import json as _json

    from ragmeter.contract import KernelEvaluator
    from ragmeter.engines import columnar as columnar_module

    built: list[str] = []
    real = columnar_module.get_evaluator

    def counting(name, **kw):  # type: ignore[no-untyped-def]
        built.append(name)
        return real(name, **kw)

    monkeypatch.setattr(columnar_module, "get_evaluator", counting)
    path = tmp_path / "d.jsonl"
    path.write_text(_json.dumps({"id": "a", "contexts": [{"id": "x"}, {"id": "y"}], "relevant": ["y"]}) + "\n")
    run = evaluate(path, ["mrr", "ndcg@3"], out_dir=tmp_path / "o")
    assert built == ["mrr", "ndcg@3"] and run.scores["mrr"].tolist() == [0.5]
    assert all(isinstance(ev, KernelEvaluator) for ev in columnar_module.kernel_evaluators(["mrr"]) or [None])
