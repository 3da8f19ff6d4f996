"""bench/combine_modes.py: mode=claims and mode=sentences scored together, by hand."""

from __future__ import annotations

import json

import pytest

from .loader import load_bench

cm = load_bench("combine_modes")

SUMMITS = "Mount Everest was first climbed on 29 May 1953. K2 was first climbed on 31 July 1954."


def claims_result(claim: str, p: float) -> dict:
    return {"score": p, "error": None, "details": {"claims": [{"claim": claim, "supported": True, "evidence": "",
                                                               "p_yes": p}]}}


def test_pairs_and_auroc_of_each_combination_by_hand(tmp_path, capsys):
    rows = [{"id": i, "query": "q", "answer": "a", "contexts": [SUMMITS], "kind": "short",
             "labels": {"faithful": f}} for i, f in (("a", True), ("b", True), ("c", False))]
    data = tmp_path / "rows.jsonl"
    data.write_text("\n".join(json.dumps(r) for r in rows), encoding="utf-8")
    # claims: a 0.9, b 0.6, c: 1956 conflicts with the K2 sentence, struck by the evidence veto -> 0.0
    claims = {"data": str(data), "records": [
        {"id": "a", "metrics": {"faithfulness": claims_result("Everest was first climbed on 29 May 1953.", 0.9)}},
        {"id": "b", "metrics": {"faithfulness": claims_result("K2 was first climbed on 31 July 1954.", 0.6)}},
        {"id": "c", "metrics": {"faithfulness": claims_result("K2 was first climbed in 1956.", 0.95)}}]}
    sentences = {"records": [{"id": i, "metrics": {"faithfulness(mode=sentences)": {"score": s, "error": None}}}
                             for i, s in (("a", 0.2), ("b", 0.9), ("c", 0.5))]}
    found = cm.pairs(claims, sentences, None)
    assert found == [("a", "short", True, 0.9, 0.2), ("b", "short", True, 0.6, 0.9), ("c", "short", False, 0.0, 0.5)]
    cm.report(found)
    got = {" ".join(x.split()[1:-8]): float(x.split()[-7]) for x in capsys.readouterr().out.splitlines()}
    # sentences: a 0.2 < c 0.5 < b 0.9 -> 1 of 2 pairs; mean: a 0.55, b 0.75, c 0.25 -> 1.0;
    # min: a 0.2, b 0.6, c 0.0 -> 1.0
    assert got == {"claims (veto=evidence)": 1.0, "sentences": pytest.approx(0.5), "B-mean": 1.0, "B-min": 1.0}


def test_another_second_metric_and_the_claims_score_as_recorded(tmp_path):
    rows = [{"id": i, "query": "q", "answer": "a", "contexts": [SUMMITS], "kind": "short",
             "labels": {"faithful": f}} for i, f in (("a", True), ("c", False))]
    data = tmp_path / "rows.jsonl"
    data.write_text("\n".join(json.dumps(r) for r in rows), encoding="utf-8")
    claims = {"data": str(data), "records": [
        {"id": "a", "metrics": {"faithfulness": claims_result("Everest was first climbed on 29 May 1953.", 0.9)}},
        {"id": "c", "metrics": {"faithfulness": claims_result("K2 was first climbed in 1956.", 0.95)}}]}
    direct = {"records": [{"id": i, "metrics": {"faithfulness(mode=direct)": {"score": s, "error": None}}}
                          for i, s in (("a", 0.7), ("c", 0.4))]}
    # as recorded, c keeps its 0.95 (re-scored under the evidence veto it would be 0.0)
    assert cm.pairs(claims, direct, None, "faithfulness(mode=direct)", as_recorded=True) == [
        ("a", "short", True, 0.9, 0.7), ("c", "short", False, 0.95, 0.4)]
    assert cm.pairs(claims, direct, None, "faithfulness(mode=direct)")[1][3] == 0.0
    assert cm.pairs(claims, direct, None) == []  # the default second metric is not in that file
