"""The fresh labelled rows (faithfulness_fresh.jsonl): they parse, follow the split rule, are balanced
per kind and half, pair each faithful answer with one unfaithful twin on the same question and
contexts, and the faithfulness label rule accepts them."""

from __future__ import annotations

import json
from collections import Counter

from ragmeter.judges.check import _check_labels, bundled_path, load_labelled

DATA = bundled_path("faithfulness_fresh.jsonl")
FIELDS = {"id", "kind", "split", "query", "contexts", "answer", "labels", "notes"}
PREFIX = {"short": "fs", "dialogue": "fd", "summary": "fm"}


def rows() -> list[dict]:
    return [json.loads(line) for line in DATA.read_text(encoding="utf-8").splitlines() if line.strip()]


def test_rows_follow_the_split_and_pair_rules():
    data = rows()
    assert len(data) == 100 and len({r["id"] for r in data}) == 100
    for r in data:
        assert set(r) == FIELDS and r["id"].startswith(PREFIX[r["kind"]]), r["id"]
        assert r["query"].strip() and r["answer"].strip() and r["notes"].strip()
        assert r["split"] == ("design" if int(r["id"][2:4]) % 2 else "heldout"), r["id"]
        assert r["labels"] == {"faithful": r["id"].endswith("a")}, r["id"]
    counts = Counter((r["kind"], r["split"], r["labels"]["faithful"]) for r in data)
    assert counts == {(k, s, f): (5 if k == "summary" else 10)
                      for k in PREFIX for s in ("design", "heldout") for f in (True, False)}
    by_group: dict[str, list[dict]] = {}
    for r in data:
        by_group.setdefault(r["id"][:-1], []).append(r)
    for a, b in by_group.values():  # a twin shares its question and contexts, and changes the answer
        assert (a["query"], a["contexts"]) == (b["query"], b["contexts"]) and a["answer"] != b["answer"]


def test_summaries_are_of_long_documents_and_ids_are_new():
    assert all(len(r["contexts"][0]) >= 2500 for r in rows() if r["kind"] == "summary")
    others = {json.loads(line)["id"] for p in DATA.parent.glob("*.jsonl") if p != DATA
              for line in p.read_text(encoding="utf-8").splitlines() if line.strip()}
    assert not {r["id"] for r in rows()} & others


def test_faithfulness_label_rule_accepts_the_file():
    samples, labels = load_labelled(DATA)
    assert {s.metadata["kind"] for s in samples} == set(PREFIX)
    _check_labels("faithfulness", str(DATA), labels)
