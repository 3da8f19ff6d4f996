"""bench/chunk_scoring.py on a hand-made two-row results file (every number worked out by hand)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.bench.loader import load_bench

BENCH = Path(__file__).resolve().parents[2] / "bench" / "chunk_scoring.py"


def _load():
    return load_bench("chunk_scoring")


def _rec(rid: str, weighted: list[float], hard: list[float], cp_score: float) -> dict:
    pairs = enumerate(zip(weighted, hard, strict=True))
    chunks = [{"rank": i + 1, "rating": w, "hard_rating": h} for i, (w, h) in pairs]
    return {"id": rid, "metrics": {
        "context_relevancy": {"score": 0.0, "details": {"chunks": chunks}},
        "context_precision_llm": {"score": cp_score, "details": {"ratings": weighted, "hard_ratings": hard}}}}


def test_human_context_precision_is_ragas_formula_on_the_labels():
    cs = _load()
    assert cs.human_cp([1, 0]) == 1.0
    assert cs.human_cp([0, 1]) == 0.5
    assert cs.human_cp([0, 1, 1]) == pytest.approx((1 / 2 + 2 / 3) / 2)
    assert cs.human_cp([0, 0]) == 0.0


def test_tables_on_two_hand_made_rows(tmp_path):
    cs = _load()
    # row a: labels [1, 0], weighted [4, 1] (nothing >= 5: CP 0), hard [8, 2]
    # row b: labels [0, 1], weighted [6, 2] (chunk 1 >= 5: CP 1), hard [3, 9]
    results = tmp_path / "r.json"
    results.write_text(json.dumps({"records": [_rec("a", [4.0, 1.0], [8.0, 2.0], 0.0),
                                               _rec("b", [6.0, 2.0], [3.0, 9.0], 1.0)]}))
    data = tmp_path / "d.jsonl"
    data.write_text('{"id": "a", "labels": {"context_relevance": [1, 0]}}\n'
                    '{"id": "b", "labels": {"context_relevance": [0, 1]}}\n')
    out = tmp_path / "o.json"
    assert cs.main([str(results), "--data", str(data), "--ranges", "1-2,2-2", "--row-ranges", "1-2",
                    "--out", str(out)]) == 0
    t = json.loads(out.read_text())
    # per chunk, 1-2: positives weighted {4, 2} vs negatives {1, 6}: 4>1, 2>1 of 4 pairs = 0.5;
    # hard {8, 9} vs {2, 3}: every pair = 1.0
    assert t["chunk"]["1-2"]["weighted"]["auroc"] == 0.5 and t["chunk"]["1-2"]["hard"]["auroc"] == 1.0
    assert (t["chunk"]["1-2"]["hard"]["pos"], t["chunk"]["1-2"]["hard"]["neg"]) == (2, 2)
    # row b alone: weighted 2 (pos) vs 6 (neg) = 0; hard 9 vs 3 = 1
    assert t["chunk"]["2-2"]["weighted"]["auroc"] == 0.0 and t["chunk"]["2-2"]["hard"]["auroc"] == 1.0
    # per row: human CP a = 1 (positive), b = 0.5 (negative); weighted CP 0 vs 1 -> 0; hard CP 1 vs 0.5 -> 1
    assert t["row"]["1-2"]["weighted"]["auroc"] == 0.0 and t["row"]["1-2"]["hard"]["auroc"] == 1.0
