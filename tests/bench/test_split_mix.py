"""bench/split_mix.py: the clauses' recorded score for answers of several check-worthy sentences, the
default's (from its recorded replies) for one, by hand."""

from __future__ import annotations

import json

from tests.bench.loader import load_bench

sm = load_bench("split_mix")

CONTEXT = ["The bridge is 142 metres long. It opened in 2019."]


def write(tmp_path, name, content):
    path = tmp_path / name
    path.write_text(content, encoding="utf-8")
    return str(path)


def test_the_mix_takes_the_clauses_score_for_answers_of_two_sentences_or_more(tmp_path, monkeypatch, capsys):
    rows = [{"id": "a", "split": "design", "query": "How long is it?", "answer": "It is 142 metres long.",
             "contexts": CONTEXT},
            {"id": "b", "split": "design", "query": "Tell me about it.",
             "answer": "It is 142 metres long. It opened in 2018.", "contexts": CONTEXT},
            {"id": "c", "split": "heldout", "query": "How long is it?", "answer": "It is 142 metres long.",
             "contexts": CONTEXT}]
    data = write(tmp_path, "rows.jsonl", "\n".join(json.dumps(r) for r in rows))

    def rec(i, faithful, claims):
        return {"id": i, "kind": "short", "faithful": faithful, "score": 0.5, "error": None,
                "details": {"claims": [{"claim": c, "supported": True, "p_yes": p, "quote": ""} for c, p in claims]}}

    default = write(tmp_path, "default.json", json.dumps({"data": data, "records": {"faithfulness": [
        rec("a", True, [("The bridge is 142 metres long.", 0.7)]),
        rec("b", False, [("The bridge is 142 metres long.", 0.9), ("The bridge opened in 2018.", 0.9)]),
        rec("c", True, [("The bridge is 142 metres long.", 0.7)])]}}))
    clauses = write(tmp_path, "clauses.json", json.dumps({"data": data, "records": {sm.CLAUSES: [
        {"id": "a", "kind": "short", "faithful": True, "score": 0.2, "error": None},
        {"id": "b", "kind": "short", "faithful": False, "score": 0.8, "error": None}]}}))
    monkeypatch.setattr("sys.argv", ["split_mix.py", "--default", default, "--clauses", clauses, "--split", "design",
                                     "--kind", "short", "--name", "bridge"])
    sm.main()
    out = capsys.readouterr().out.split()
    # the default from the replies: a 0.7 (its sentence agrees, 142 found); b: the 2018 claim struck by
    # its sentence's 2019, (0.9 + 0) / 2, times the share of its numbers found (142 yes, 2018 no):
    # 0.225 -> 0.7 against 0.225, AUROC 1. The mix: a keeps 0.7 (one sentence), b takes the clauses'
    # 0.8 (two) -> 0.7 against 0.8, AUROC 0. The held-out row c is left out.
    assert out == ["bridge", "rows", "2", "from", "clauses", "1", "default", "1.000", "(undefined", "0)", "mix",
                   "0.000", "(undefined", "0)"]


def test_a_row_without_a_clauses_score_stops_the_run(tmp_path, monkeypatch):
    import pytest
    rows = [{"id": "a", "split": "design", "query": "How long?", "answer": "It is 142 metres long.",
             "contexts": CONTEXT}]
    data = write(tmp_path, "rows.jsonl", json.dumps(rows[0]))
    default = write(tmp_path, "default.json", json.dumps({"data": data, "records": {"faithfulness": [
        {"id": "a", "kind": "short", "faithful": True, "score": 0.7, "error": None, "details": {"claims": []}}]}}))
    clauses = write(tmp_path, "clauses.json", json.dumps({"data": data, "records": {sm.CLAUSES: []}}))
    monkeypatch.setattr("sys.argv", ["split_mix.py", "--default", default, "--clauses", clauses])
    with pytest.raises(SystemExit, match="1 rows without a clauses score"):
        sm.main()
