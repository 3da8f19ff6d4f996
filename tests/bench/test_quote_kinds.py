"""bench/quote_kinds.py: each claim's quote classed (none, the claim copied back, another sentence)
and the mean P(yes) of both readings per class, by hand."""

from __future__ import annotations

import pytest

from tests.bench.loader import load_bench

qk = load_bench("quote_kinds")
OTHER = "faithfulness(verdicts=given_quotes)"


def test_quote_kind_by_hand():
    assert qk.quote_kind("", "The bridge opened in 2019.") == "none"
    assert qk.quote_kind("none", "The bridge opened in 2019.") == "none"
    # {the, bridge, opened, in, 2019}: the same set, case and punctuation aside
    assert qk.quote_kind("the bridge opened in 2019", "The bridge opened in 2019.") == "claim copied"
    # {it, opened, in, 2019} against {the, bridge, opened, in, 2019}: 3 of 6 words, 0.5 < 0.8
    assert qk.quote_kind("It opened in 2019.", "The bridge opened in 2019.") == "other sentence"
    # 4 of 5: 0.8, the bound itself
    assert qk.quote_kind("The bridge opened in", "The bridge opened in 2019.") == "claim copied"


def test_tally_pairs_the_two_readings_claim_by_claim():
    def rec(i, faithful, claims):
        return {"id": i, "faithful": faithful, "details": {"claims": [
            {"claim": c, "quote": q, "p_yes": p} for c, q, p in claims]}}

    saved = {"records": {
        "faithfulness": [
            rec("a", True, [("The bridge opened in 2019.", "It opened in 2019.", 0.9),
                            ("It is 142 metres long.", "It is 142 metres long.", 0.8)]),
            rec("b", False, [("It is 150 metres long.", "", 0.1),
                             ("The bridge opened in 2019.", "It opened in 2019.", None)])],  # no P(yes): left out
        OTHER: [
            rec("a", True, [("The bridge opened in 2019.", "x", 0.7), ("It is 142 metres long.", "x", 0.6)]),
            rec("b", False, [("It is 150 metres long.", "x", 0.5), ("The bridge opened in 2019.", "x", 0.9)])]}}
    cells = qk.tally([saved], OTHER)
    assert cells == {("other sentence", True): pytest.approx([1, 0.9, 0.7]),
                     ("claim copied", True): pytest.approx([1, 0.8, 0.6]),
                     ("none", False): pytest.approx([1, 0.1, 0.5])}
