"""The faithfulness-by-kind labelled set (faithfulness_by_kind.jsonl): it parses, each kind and half is
balanced, labels follow the README's rules, summaries' documents are long, and judge-check reports
per kind end to end on loopback."""

from __future__ import annotations

import json
from collections import Counter

import pytest

from ragmeter.judges.check import _check_labels, bundled_path, judge_check, load_labelled

from .fake_server import Reply

DATA = bundled_path("faithfulness_by_kind.jsonl")
FIELDS = {"id", "kind", "split", "query", "contexts", "answer", "labels", "notes"}


def rows(path=DATA) -> list[dict]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


def assert_row_rules(r: dict) -> None:
    """The fields, the split rule (odd group: design) and the label rule (faithful iff k == n)."""
    assert set(r) == FIELDS, r["id"]
    assert r["query"].strip() and r["answer"].strip() and r["notes"].strip()
    group = int(r["id"][-3:-1])
    assert r["split"] == ("design" if group % 2 else "heldout"), r["id"]
    k, n = r["labels"]["claims_supported"].split("/")
    assert r["labels"]["faithful"] == (k == n), r["id"]


def test_rows_parse_and_follow_the_split_rule():
    data = rows()
    assert len(data) == 120 and len({r["id"] for r in data}) == 120
    for r in data:
        assert_row_rules(r)
    counts = Counter((r["kind"], r["split"], r["labels"]["faithful"]) for r in data)
    assert set(counts.values()) == {10} and len(counts) == 12  # 3 kinds x 2 halves x 2 labels


def test_summaries_are_of_long_documents():
    assert all(len(r["contexts"][0]) >= 2500 for r in rows() if r["kind"] == "summary")


def test_faithfulness_label_rule_accepts_the_file():
    samples, labels = load_labelled(DATA)
    assert {s.metadata["kind"] for s in samples} == {"short", "summary", "dialogue"}
    _check_labels("faithfulness", str(DATA), labels)


def test_judge_check_reports_per_kind(fake_llm, make_judge):
    """A loopback judge that says "yes" to the direct question for the faithful answers of the short and
    dialogue rows only, and "no" to every summary, is perfect on two kinds and at chance on the third."""
    faithful = [r["answer"] for r in rows() if r["labels"]["faithful"] and r["kind"] != "summary"]

    def rule(call):
        return Reply(content="yes" if any(a in call.user_text for a in faithful) else "no")
    fake_llm.rule = rule
    (rep,) = judge_check(make_judge(), metrics=["faithfulness(mode=direct)"], data=DATA).metrics
    kinds = rep["by_kind"]
    assert set(kinds) == {"short", "summary", "dialogue"}
    assert kinds["short"]["auroc"] == 1.0 and kinds["dialogue"]["auroc"] == 1.0
    assert kinds["summary"]["auroc"] == 0.5 and kinds["summary"]["verdict"] == "not usable"
    assert kinds["short"]["n_pos"] == 20 and kinds["short"]["n_neg"] == 20
    assert kinds["short"]["verdict"] == "usable"


MORE = {"short": bundled_path("faithfulness_short_more.jsonl"),
        "dialogue": bundled_path("faithfulness_dialogue_more.jsonl")}


@pytest.mark.parametrize("kind", sorted(MORE))
def test_more_rows_follow_the_same_rules(kind):
    path = MORE[kind]
    more = rows(path)
    assert len(more) == 40 and {r["kind"] for r in more} == {kind}
    ids = {r["id"] for r in more}
    others = {r["id"] for p in (DATA, *MORE.values()) if p != path for r in rows(p)}
    assert len(ids) == 40 and not ids & others
    for r in more:
        assert_row_rules(r)
    pairs = Counter((r["id"][:-1], r["labels"]["faithful"]) for r in more)
    assert len(pairs) == 40  # each context has one faithful and one unfaithful answer
    counts = Counter((r["split"], r["labels"]["faithful"]) for r in more)
    assert set(counts.values()) == {10} and len(counts) == 4
    _samples, labels = load_labelled(path)
    _check_labels("faithfulness", str(path), labels)
