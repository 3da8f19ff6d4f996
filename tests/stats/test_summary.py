"""RunResult.summary() carries a 95% CI per metric, and summary.json round-trips it."""

from __future__ import annotations

import json

import pytest

import ragmeter
from ragmeter.results import RunResult
from ragmeter.stats import metric_ci, wilson_interval

ROWS = [
    {"id": "a", "contexts": [{"id": "d1"}, {"id": "d2"}], "relevant": ["d2"]},
    {"id": "b", "contexts": [{"id": "d1"}, {"id": "d2"}], "relevant": ["d1"]},
    {"id": "c", "contexts": [{"id": "d3"}], "relevant": ["d1"]},
    {"id": "d", "contexts": [{"id": "d1"}]},
]


def test_summary_has_ci_and_keeps_the_old_keys(tmp_path):
    res = ragmeter.evaluate(ROWS, ["mrr", "recall@1"], out_dir=str(tmp_path / "out"))
    s = res.summary()
    # mrr: a .5, b 1, c 0 (d undefined) -> mean .5, non-binary -> BCa bootstrap
    assert {k: s["mrr"][k] for k in ("mean", "n", "undefined", "errors")} == {
        "mean": 0.5, "n": 3, "undefined": 1, "errors": 0}
    assert s["mrr"]["ci_method"] == "bootstrap-bca"
    assert s["mrr"]["ci"] == pytest.approx(metric_ci([0.5, 1.0, 0.0]).ci)
    # recall@1: a 0, b 1, c 0 -> binary -> Wilson(1, 3)
    assert s["recall@1"]["ci_method"] == "wilson"
    assert s["recall@1"]["ci"] == pytest.approx(wilson_interval(1, 3).ci)
    on_disk = json.loads((tmp_path / "out" / "summary.json").read_text())
    assert on_disk["metrics"] == json.loads(json.dumps(s))
    assert RunResult.load(tmp_path / "out").summary() == s  # seeded: identical after reload


def test_summary_edge_cases():
    # the only sample has no labels and a blank reference: undefined, n = 0 (with no relevant and no
    # reference field in any row at all, the run would be an InputError: docs/input-format.md)
    res = ragmeter.evaluate([{**ROWS[3], "reference": ""}], ["mrr"])
    assert res.summary()["mrr"]["ci"] is None and res.summary()["mrr"]["ci_method"] == "none"
    one = ragmeter.evaluate(ROWS[:1], ["mrr"])  # n = 1, score .5
    assert one.summary()["mrr"]["ci"] == [0.5, 0.5] and one.summary()["mrr"]["ci_method"] == "degenerate"
