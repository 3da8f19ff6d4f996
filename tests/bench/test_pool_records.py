"""bench/pool_records.py: AUROC pooled over results files, for one kind and half, by hand."""

from __future__ import annotations

import json

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


def _twins(scores_a, scores_b):
    """Rows of groups qa01, qa03, ... (design half): each a faithful answer (a) and its twin (b)."""
    a, b = [], []
    for g, ((fa, ua), (fb, ub)) in enumerate(zip(scores_a, scores_b, strict=True)):
        rid = f"qa{2 * g + 1:02d}"
        a += [{"id": rid + "a", "kind": "short", "faithful": True, "score": fa},
              {"id": rid + "b", "kind": "short", "faithful": False, "score": ua}]
        b += [{"id": rid + "a", "kind": "short", "faithful": True, "score": fb},
              {"id": rid + "b", "kind": "short", "faithful": False, "score": ub}]
    return a, b


def test_paired_difference_by_hand():
    # reading A: faithful 0.9, 0.8, 0.3 against unfaithful 0.1, 0.2, 0.7: 0.9 and 0.8 beat all
    # three, 0.3 beats 0.1 and 0.2 -> 8 of 9; reading B separates every pair -> 1. B - A = 1/9.
    a, b = _twins([(0.9, 0.1), (0.8, 0.2), (0.3, 0.7)], [(0.9, 0.1), (0.8, 0.2), (0.7, 0.3)])
    d = pr.paired_difference(a, b, resamples=500)
    assert d["diff"] == pytest.approx(1 / 9) and d["groups"] == 3
    # B is 1 on every draw and A at most 1 (0 on a draw of the third group alone: 0.3 against
    # 0.7), so every difference lies in [0, 1]
    assert 0.0 <= d["low"] <= d["diff"] <= d["high"] <= 1.0
    # the same reading twice: no difference on any draw
    same = pr.paired_difference(a, a, resamples=200)
    assert (same["diff"], same["low"], same["high"]) == (0.0, 0.0, 0.0)


def test_paired_difference_keeps_the_rows_both_scored():
    a, b = _twins([(0.9, 0.1), (0.8, 0.2), (0.3, 0.7)], [(0.9, 0.1), (0.8, 0.2), (0.7, 0.3)])
    b[5]["score"] = None  # B failed qa05b: A's qa05b is left out too -> A: 0.9, 0.8, 0.3 vs 0.1, 0.2 = 6/6
    d = pr.paired_difference(a, b, resamples=200)
    assert d["diff"] == pytest.approx(0.0)


def test_paired_difference_without_both_labels_is_an_error_not_a_search_without_end():
    a, b = _twins([(0.9, 0.1)], [(0.8, 0.2)])
    a, b = a[:1], b[:1]  # the faithful answer alone: no AUROC on any draw
    with pytest.raises(ValueError, match="faithful and an unfaithful"):
        pr.paired_difference(a, b, resamples=10)
    with pytest.raises(ValueError, match="faithful and an unfaithful"):
        pr.paired_difference([], [], resamples=10)


def test_paired_names_a_metric_missing_from_the_files(tmp_path, monkeypatch, capsys):
    a, _ = _twins([(0.9, 0.1)], [(0.8, 0.2)])
    f = tmp_path / "r.json"
    f.write_text(json.dumps(_by_kind(a)), encoding="utf-8")
    monkeypatch.setattr("sys.argv", ["pool_records.py", "--kind", "short", "--half", "design",
                                     "--paired", "faithfulness", "faithfulness(x=y)", str(f)])
    with pytest.raises(SystemExit) as e:
        pr.main()
    assert e.value.code == 2
    assert "'faithfulness(x=y)' is in none of the files (they hold: faithfulness)" in capsys.readouterr().err
