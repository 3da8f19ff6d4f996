"""bench/cloze_check.py: the blanks of a claim, the fill's comparison and the candidates' scores, by hand."""

from __future__ import annotations

import pytest

from .loader import load_bench

cc = load_bench("cloze_check")


@pytest.mark.parametrize(("claim", "blanked"), [
    # the first token joins a run only when the next one is a name too
    ("Karel Moor finished Tomas Reyl's Fourth Symphony in 1923",
     ["1923", "Karel Moor", "Tomas Reyl's Fourth Symphony"]),
    ("Cyclists must use the Nordvik shuttle", ["Nordvik"]),
    # a comma ends a run; numbers in words count
    ("It flew past Jupiter, Saturn and two moons", ["two", "Jupiter", "Saturn"]),
    # a repeated text is blanked once; thousands separators stay in the span
    ("Mars has 2 moons and Mars is 227,900,000 km out", ["2", "227,900,000", "Mars"]),
])
def test_spans(claim, blanked):
    assert [claim[a:b] for a, b, _ in cc.spans(claim)] == blanked


@pytest.mark.parametrize(("span", "kind", "fill", "expected"), [
    ("Karel Moor", "name", "his pupil Anna Dusek", False),
    ("Anna Dusek", "name", "Dusek", True),
    ("384,400", "number", "384400 kilometres", True),
    ("five", "number", "Five hours", True),
    ("35", "number", "36 of the 70 card points", False),
    ("3.5", "number", "about 3.49", True),   # 3.49 rounded to one decimal is 3.5
    # a blank holds digits only ("boils at -___ °C"): a fill's minus sign is not part of the match
    ("196", "number", "-196", True),
])
def test_matches(span, kind, fill, expected):
    assert cc.matches(span, kind, fill) is expected


@pytest.mark.parametrize(("fill", "expected"), [("none", True), ("None.", True), ("", True),
                                                 ("Anna Dusek", False), ("nonetheless 1923", False)])
def test_is_none(fill, expected):
    assert cc.is_none(fill) is expected


class CannedJudge:
    """Fills by the blanked sentence, as a judge would reply."""

    def __init__(self, fills: dict[str, str]) -> None:
        self.fills = fills

    def fill(self, context: str, cloze: str) -> str:
        return self.fills[cloze]


CONTEXT = "The Fourth was completed by his pupil Anna Dusek in 1923. The Harbour Cup began in 1977."


def test_row_scores_by_hand():
    details = {"claims": [
        {"claim": "Karel Moor finished the Fourth in 1923", "supported": True, "quote": "", "p_yes": 0.8},
        {"claim": "The Harbour Cup began in 1977", "supported": True, "quote": "", "p_yes": 0.6},
    ]}
    judge = CannedJudge({
        "Karel Moor finished the Fourth in ___": "1923",         # match
        "___ finished the Fourth in 1923": "Anna Dusek",          # mismatch
        "Karel Moor finished the ___ in 1923": "none",            # no evidence
        "The Harbour Cup began in ___": "1977",                  # match
        "The ___ began in 1977": "Harbour Cup",                  # match
    })
    scores, log = cc.row_scores(judge, details, [CONTEXT])
    # B: the mean of P(yes); the evidence veto strikes neither (1923 and 1977 agree with their sentences)
    assert scores["B"] == pytest.approx((0.8 + 0.6) / 2)
    # Z-strike: the first claim has a mismatched blank -> 0
    assert scores["Z-strike"] == pytest.approx((0.0 + 0.6) / 2)
    # Z-scale: the first claim's answered blanks match 1 of 2 -> 0.8 * 1/2
    assert scores["Z-scale"] == pytest.approx((0.4 + 0.6) / 2)
    assert [b["match"] for b in log[0]["blanks"]] == [True, False, None]


def test_records_of_reads_both_results_layouts_with_their_scores():
    # faithfulness_by_kind.py: rows per metric, filtered by kind; judge_quality.py: rows with metrics.
    # An error or an undefined score is left out of both.
    by_kind = {"records": {"faithfulness": [
        {"id": "qa01a", "kind": "short", "faithful": True, "score": 0.7, "error": None, "details": {}},
        {"id": "qa01b", "kind": "short", "faithful": False, "score": None, "error": None, "details": {}},
        {"id": "dlg01a", "kind": "dialogue", "faithful": True, "score": 0.9, "error": None, "details": {}}]}}
    quality = {"records": [
        {"id": "h01", "metrics": {"faithfulness": {"score": 0.25, "error": None, "details": {"c": 1}}}},
        {"id": "h02", "metrics": {"faithfulness": {"score": None, "error": "JudgeError: x"}}}]}
    assert [r["id"] for r in cc.records_of(by_kind, "short")] == ["qa01a"]
    assert [(r["id"], r["score"]) for r in cc.records_of(by_kind, None)] == [("qa01a", 0.7), ("dlg01a", 0.9)]
    assert cc.records_of(quality, None) == [{"id": "h01", "score": 0.25, "details": {"c": 1}}]
