"""The fresh labelled rows (faithfulness_fresh.jsonl, faithfulness_fresh_more.jsonl): they parse,
follow the split rule, are balanced per kind and half, pair each faithful answer with one
unfaithful twin on the same question and contexts, and the faithfulness label rule accepts them."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import pytest

from ragmeter.judges.check import _check_labels, bundled_path, load_labelled

FIELDS = {"id", "kind", "split", "query", "contexts", "answer", "labels", "notes"}
#: file -> (id prefix per kind, rows per kind, half and label)
FILES = {
    "faithfulness_fresh.jsonl": ({"short": "fs", "dialogue": "fd", "summary": "fm"},
                                 {"short": 10, "dialogue": 10, "summary": 5}),
    "faithfulness_fresh_more.jsonl": ({"short": "ns", "dialogue": "nd"}, {"short": 12, "dialogue": 12}),
}
#: the error tags an unfaithful twin of faithfulness_fresh_more.jsonl names first in its notes
TAGS = ("[num_out]", "[num_other]", "[entity]", "[addition]", "[negation]", "[relation]")


def rows(name: str) -> list[dict]:
    return [json.loads(line) for line in bundled_path(name).read_text(encoding="utf-8").splitlines() if line.strip()]


@pytest.mark.parametrize("name", FILES)
def test_rows_follow_the_split_and_pair_rules(name: str):
    prefix, per_cell = FILES[name]
    data = rows(name)
    assert len(data) == 4 * sum(per_cell.values()) and len({r["id"] for r in data}) == len(data)
    for r in data:
        assert set(r) == FIELDS and r["id"].startswith(prefix[r["kind"]]), r["id"]
        assert r["query"].strip() and r["answer"].strip() and r["notes"].strip()
        assert r["split"] == ("design" if int(r["id"][2:4]) % 2 else "heldout"), r["id"]
        assert r["labels"] == {"faithful": r["id"].endswith("a")}, r["id"]
    counts = Counter((r["kind"], r["split"], r["labels"]["faithful"]) for r in data)
    assert counts == {(k, s, f): per_cell[k] for k in prefix for s in ("design", "heldout") for f in (True, False)}
    by_group: dict[str, list[dict]] = {}
    for r in data:
        by_group.setdefault(r["id"][:-1], []).append(r)
    for a, b in by_group.values():  # a twin shares its question and contexts, and changes the answer
        assert (a["query"], a["contexts"]) == (b["query"], b["contexts"]) and a["answer"] != b["answer"]


def test_the_second_fresh_file_mixes_its_errors_evenly():
    """Each kind's unfaithful twins: every error type twice in each half."""
    for kind in ("short", "dialogue"):
        twins = [r for r in rows("faithfulness_fresh_more.jsonl") if r["kind"] == kind and not r["labels"]["faithful"]]
        tags = Counter((r["split"], next(t for t in TAGS if r["notes"].startswith(t))) for r in twins)
        assert tags == {(s, t): 2 for s in ("design", "heldout") for t in TAGS}, kind


def test_summaries_are_of_long_documents_and_ids_are_new():
    assert all(len(r["contexts"][0]) >= 2500 for r in rows("faithfulness_fresh.jsonl") if r["kind"] == "summary")
    folder: Path = bundled_path("faithfulness_fresh.jsonl").parent
    for name in FILES:
        others = {json.loads(line)["id"] for p in folder.glob("*.jsonl") if p.name != name
                  for line in p.read_text(encoding="utf-8").splitlines() if line.strip()}
        assert not {r["id"] for r in rows(name)} & others, name


@pytest.mark.parametrize("name", FILES)
def test_faithfulness_label_rule_accepts_the_file(name: str):
    samples, labels = load_labelled(bundled_path(name))
    assert {s.metadata["kind"] for s in samples} == set(FILES[name][0])
    _check_labels("faithfulness", str(bundled_path(name)), labels)
