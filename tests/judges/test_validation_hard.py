"""The held-out hard labelled set (judge_validation_hard.jsonl): it parses, is balanced, its labels follow
the README's rules, it shares no text with the 72-row set, and judge-check reads it end to end on loopback."""

from __future__ import annotations

import json
import re
from collections import Counter

import pytest

from ragmeter.io import read_samples
from ragmeter.judges.check import _check_labels, bundled_path, judge_check, labelled_metrics, load_labelled

from .fake_server import Reply

HARD = bundled_path("judge_validation_hard.jsonl")
MAIN = bundled_path("judge_validation.jsonl")
FIELDS = {"id", "case", "query", "contexts", "answer", "reference", "labels", "notes"}
LABELS = {"faithful", "relevant", "correct", "context_relevance", "claims_supported"}


def rows(path=HARD) -> list[dict]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


def test_rows_parse_with_every_field():
    data = rows()
    assert len(data) == 32
    assert [r["id"] for r in data] == [f"h{i:02d}" for i in range(1, 33)]
    for r in data:
        assert set(r) == FIELDS, r["id"]
        assert set(r["labels"]) == LABELS, r["id"]
        assert r["query"].strip() and r["answer"].strip() and r["reference"].strip() and r["notes"].strip()
        assert 1 <= len(r["contexts"]) <= 4 and all(isinstance(c, str) and c.strip() for c in r["contexts"])
    assert len({r["case"] for r in data}) == 32


def test_balanced_faithful_label():
    counts = Counter(r["labels"]["faithful"] for r in rows())
    assert counts == {True: 16, False: 16}


def test_labels_follow_the_readme_rules():
    for r in rows():
        lab, rid = r["labels"], r["id"]
        assert isinstance(lab["faithful"], bool) and isinstance(lab["relevant"], bool), rid
        assert isinstance(lab["correct"], int) and 1 <= lab["correct"] <= 5, rid
        assert len(lab["context_relevance"]) == len(r["contexts"]), rid
        assert set(lab["context_relevance"]) <= {0, 1}, rid
        m = re.fullmatch(r"(\d+)/(\d+)", lab["claims_supported"])
        assert m, rid
        k, n = int(m.group(1)), int(m.group(2))
        assert 0 <= k <= n, rid
        # faithful exactly when every claim is supported (0/0: no checkable claim)
        assert lab["faithful"] == (k == n), rid
        if not lab["relevant"]:
            assert lab["correct"] <= 2, rid  # every not-relevant row is graded <= 2


def test_no_text_reused_from_the_72_row_set():
    def texts(data):
        out = set()
        for r in data:
            out |= {r["query"], r["answer"], r["reference"], *r["contexts"]}
        return {t.strip().lower() for t in out}
    def sentences(data):
        return {s.strip().lower() for t in texts(data) for s in re.split(r"(?<=[.!?])\s+", t) if len(s) > 25}
    hard, main = rows(HARD), rows(MAIN)
    assert not texts(hard) & texts(main)
    assert not sentences(hard) & sentences(main)


def test_every_metric_label_rule_accepts_the_file():
    samples, labels = load_labelled(HARD)
    assert len(samples) == 32 and len(list(read_samples(HARD))) == 32
    for name in [m for m in labelled_metrics() if m != "passage_recall"]:
        _check_labels(name, str(HARD), labels)  # raises InputError naming row and field when one is missing


@pytest.mark.parametrize("oracle, expected", [(True, 1.0), (False, 0.5)])
def test_judge_check_reads_the_file_end_to_end(fake_llm, make_judge, oracle, expected):
    """A loopback judge that says "yes" to the direct question exactly for the labelled-faithful answers gets
    AUROC 1 on the 16 + 16 rows; one that says "no" to everything gets 1/2."""
    faithful = [r["answer"] for r in rows() if r["labels"]["faithful"]] if oracle else []

    def rule(call):
        return Reply(content="yes" if any(a in call.user_text for a in faithful) else "no")
    fake_llm.rule = rule
    (rep,) = judge_check(make_judge(), metrics=["faithfulness(mode=direct)"], data=HARD).metrics
    assert rep["n_pos"] == 16 and rep["n_neg"] == 16 and rep["errors"] == 0
    assert rep["auroc"] == expected
    assert fake_llm.kinds()["ok"] == 32
