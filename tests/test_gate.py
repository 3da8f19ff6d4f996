"""The CI gate: thresholds on mean or CI lower end, error ceiling, baseline regressions, outputs."""

from __future__ import annotations

import xml.etree.ElementTree as ET

import pytest

from ragmeter import InvalidParameterError
from ragmeter.gate import check_gate, junit_xml, markdown, parse_threshold

SUMMARY = {
    "mrr": {"mean": 0.8, "n": 90, "undefined": 5, "errors": 5, "ci": [0.72, 0.87]},
    "ndcg@5": {"mean": 0.55, "n": 100, "undefined": 0, "errors": 0, "ci": [0.5, 0.6]},
}


def test_thresholds_on_mean():
    g = check_gate(SUMMARY, {"mrr": 0.75, "ndcg@5": 0.6}, max_error_rate=0.1)
    by = {c.name: c for c in g.checks}
    assert by["mrr"].passed and not by["ndcg@5"].passed
    assert g.exit_code == 1


def test_thresholds_on_ci_low_are_stricter():
    g = check_gate(SUMMARY, {"mrr": 0.75}, on="ci_low", max_error_rate=0.1)
    assert not g.passed and "0.7200" in g.checks[0].message


def test_aliases_are_canonicalised():
    g = check_gate(SUMMARY, {"recip_rank": 0.5, "nDCG@5": 0.5}, max_error_rate=0.1)
    assert g.passed


def test_missing_metric_fails():
    g = check_gate(SUMMARY, {"map": 0.1}, max_error_rate=0.1)
    assert not g.passed and "not in this run" in g.checks[0].message


def test_error_ceiling_gives_exit_3():
    # mrr: 5 errors of 100 samples = 5% > 4%
    g = check_gate(SUMMARY, {"mrr": 0.1}, max_error_rate=0.04)
    assert g.exit_code == 3
    assert check_gate(SUMMARY, {"mrr": 0.1}, max_error_rate=0.05).exit_code == 0


def test_only_significant_regressions_fail():
    comp = {"metrics": {"mrr": {"diff": -0.02, "p_adjusted": 0.3}, "ndcg@5": {"diff": -0.1, "p_adjusted": 0.001}}}
    g = check_gate(SUMMARY, {}, comparison=comp, max_error_rate=0.1)
    by = {c.name: c for c in g.checks}
    assert by["mrr"].passed and not by["ndcg@5"].passed and g.exit_code == 1
    # compare()'s own form: a list of rows
    improved = {"metrics": [{"metric": "ndcg@5", "diff": 0.1, "p_adjusted": 0.001}]}
    assert check_gate(SUMMARY, {}, comparison=improved, max_error_rate=0.1).passed


@pytest.mark.parametrize("bad", ["mrr", "mrr=", "=0.5", "mrr=high", "mrr=1.5"])
def test_parse_threshold_rejects(bad):
    with pytest.raises(InvalidParameterError):
        parse_threshold(bad)


def test_parse_threshold():
    assert parse_threshold("ndcg(gain=linear)@5=0.7") == ("ndcg(gain=linear)@5", 0.7)


def test_junit_xml_is_valid_and_counts_failures():
    g = check_gate(SUMMARY, {"mrr": 0.75, "ndcg@5": 0.6}, max_error_rate=0.1)
    root = ET.fromstring(junit_xml(g))
    assert root.get("tests") == "2" and root.get("failures") == "1"
    failed = [tc for tc in root.iter("testcase") if tc.find("failure") is not None]
    assert [tc.get("name") for tc in failed] == ["ndcg@5"]


def test_markdown_has_table_and_verdict():
    g = check_gate(SUMMARY, {"ndcg@5": 0.6}, max_error_rate=0.1)
    md = markdown(SUMMARY, g)
    assert "| `mrr` | 0.8000 | [0.7200, 0.8700] | 90 | 5 | 5 |" in md
    assert "FAILED (exit 1)" in md and "❌" in md


def test_a_lower_is_better_metric_passes_below_its_threshold():
    # hallucination_rate: lower is better, so a threshold is a ceiling (with parameters too)
    summary = {"hallucination_rate": {"mean": 0.12, "n": 10, "undefined": 0, "errors": 0, "ci": [0.05, 0.2]},
               "hallucination_rate(mode=inline)": {"mean": 0.3, "n": 10, "undefined": 0, "errors": 0,
                                                   "ci": [0.2, 0.4]}}
    g = check_gate(summary, {"hallucination_rate": 0.15, "hallucination_rate(mode=inline)": 0.25},
                   max_error_rate=0.1)
    by = {c.name: c for c in g.checks}
    assert by["hallucination_rate"].passed and "<= 0.15" in by["hallucination_rate"].message
    assert not by["hallucination_rate(mode=inline)"].passed
    # a rise in hallucination_rate against the baseline is the regression, a fall is not
    worse = check_gate(summary, {}, max_error_rate=0.1,
                       comparison={"metrics": {"hallucination_rate": {"diff": 0.1, "p_adjusted": 0.01}}})
    better = check_gate(summary, {}, max_error_rate=0.1,
                        comparison={"metrics": {"hallucination_rate": {"diff": -0.1, "p_adjusted": 0.01}}})
    assert not worse.passed and better.passed
