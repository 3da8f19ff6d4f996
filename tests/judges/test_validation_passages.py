"""Both passage-recall labelled sets (the 24 rows and the 14 held-out ones): they parse, their
labels follow the README's rules (one score per marked section, on its scale; ``complete``
exactly when every ESSENTIAL score is 5), and the held-out rows share no text with the 24."""

from __future__ import annotations

import json
import re
from collections import Counter

import pytest

from ragmeter.judges.check import bundled_path, load_labelled
from ragmeter.metrics.generation.passage_recall import split_sections

SETS = {"passage_recall_validation.jsonl": ("p", 24), "passage_recall_validation_hard.jsonl": ("ph", 14)}
FIELDS = {"id", "query", "reference", "answer", "labels", "notes"}


def rows(name: str) -> list[dict]:
    return [json.loads(line) for line in bundled_path(name).read_text(encoding="utf-8").splitlines() if line.strip()]


@pytest.mark.parametrize("name", list(SETS))
def test_rows_follow_the_readme_rules(name):
    prefix, n = SETS[name]
    data = rows(name)
    assert [r["id"] for r in data] == [f"{prefix}{i:02d}" for i in range(1, n + 1)]
    for r in data:
        lab, rid = r["labels"], r["id"]
        assert set(r) == FIELDS and all(str(r[k]).strip() for k in FIELDS), rid
        ess, bon = lab["essential_covered"], lab["bonus_covered"]
        assert len(re.findall(r"\[ESSENTIAL PASSAGE\]", r["reference"])) == len(ess) >= 1, rid
        assert len(re.findall(r"\[BONUS PASSAGE\]", r["reference"])) == len(bon), rid
        assert all(isinstance(x, int) and 1 <= x <= 5 for x in ess), rid
        assert all(isinstance(x, int) and 0 <= x <= 5 for x in bon), rid
        assert lab["complete"] == all(x == 5 for x in ess), rid
    # what the loader and the metric read: every row has its sections in the right counts
    samples, labels = load_labelled(bundled_path(name))
    for s, lab in zip(samples, labels, strict=True):
        ess_text, bon_text = split_sections(s)
        assert (len(ess_text), len(bon_text)) == (len(lab["essential_covered"]), len(lab["bonus_covered"]))


def test_held_out_balance_as_the_readme_states():
    data = rows("passage_recall_validation_hard.jsonl")
    assert Counter(r["labels"]["complete"] for r in data) == {True: 6, False: 8}
    assert Counter(x for r in data for x in r["labels"]["essential_covered"]) == {5: 17, 1: 6, 3: 3, 2: 2}
    assert Counter(x for r in data for x in r["labels"]["bonus_covered"]) == {5: 7, 0: 3, 3: 1, 1: 1}


def test_held_out_rows_share_no_text_with_the_24():
    def sentences(r: dict) -> set[str]:
        text = " ".join([r["query"], r["answer"], re.sub(r"\[(ESSENTIAL|BONUS) PASSAGE\]", " ", r["reference"])])
        return {s.strip().lower() for s in re.split(r"(?<=[.?!])\s+", text) if len(s.strip()) > 20}

    old = set().union(*(sentences(r) for r in rows("passage_recall_validation.jsonl")))
    for r in rows("passage_recall_validation_hard.jsonl"):
        assert not sentences(r) & old, r["id"]
