"""bench/pool_records.py: AUROC pooled over results files, for one kind and half, by hand."""

from __future__ import annotations

import pytest

from tests.bench.loader import load_bench

pr = load_bench("pool_records")


def _by_kind(rows):
    return {"records": {"faithfulness": rows}}


def test_pooled_over_two_files_by_hand():
    # design rows (odd groups) of kind short: file 1 has qa01a (faithful, 0.9) and qa01b (0.2);
    # file 2 has qa21a (faithful, 0.4) and qa21b (0.6). Pairs (pos > neg): 0.9>0.2, 0.9>0.6,
    # 0.4>0.2, 0.4<0.6 -> 3 of 4 = 0.75. The held-out row qa02a and the dialogue row are left out.
    one = _by_kind([
        {"id": "qa01a", "kind": "short", "faithful": True, "score": 0.9},
        {"id": "qa01b", "kind": "short", "faithful": False, "score": 0.2},
        {"id": "qa02a", "kind": "short", "faithful": True, "score": 0.0},
        {"id": "dlg01a", "kind": "dialogue", "faithful": False, "score": 1.0},
    ])
    two = _by_kind([
        {"id": "qa21a", "kind": "short", "faithful": True, "score": 0.4},
        {"id": "qa21b", "kind": "short", "faithful": False, "score": 0.6},
    ])
    got = pr.pooled([one, two], "short", "design", {})["faithfulness"]
    assert got["auroc"] == pytest.approx(0.75)
    assert (got["rows"], got["scored"], got["n_pos"], got["n_neg"]) == (4, 4, 2, 2)


def test_vs_ragas_rows_take_their_labels_from_the_data_and_skip_undefined_scores():
    # held-out rows (even groups): qa22a faithful 0.7, qa22b 0.7 (a tie counts 1/2), qa24b no score
    saved = {"results": [{"tool": "ragas", "rows": [
        {"id": "qa22a", "score": 0.7, "error": None},
        {"id": "qa22b", "score": 0.7, "error": None},
        {"id": "qa24b", "score": None, "error": "parse"},
        {"id": "qa21a", "score": 0.1, "error": None},
    ]}]}
    labels = {"qa22a": ("short", True), "qa22b": ("short", False), "qa24b": ("short", False),
              "qa21a": ("short", True)}
    got = pr.pooled([saved], "short", "heldout", labels)["ragas"]
    assert got["auroc"] == pytest.approx(0.5)
    assert (got["rows"], got["scored"]) == (3, 2)


def test_the_split_rule():
    assert pr.in_half("qa21a", "design") and not pr.in_half("qa21a", "heldout")
    assert pr.in_half("dlg02b", "heldout") and pr.in_half("dlg02b", "all")
