"""The batch entry point and the results format: failures are recorded, never 0, never dropped."""

from __future__ import annotations

import json
import math

import pytest

from ragmeter import InputError, MetricResult, RunResult, Sample, evaluate, list_metrics, registry
from ragmeter.registry import MetricSpec, register

ROWS = [
    {"id": "a", "query": "q", "contexts": [{"id": "d1"}, {"id": "d2"}], "relevant": ["d2"]},
    {"id": "b", "query": "q", "contexts": [{"id": "d1"}], "relevant": ["d1"]},
    {"id": "c", "query": "q", "contexts": ["just text"]},  # no labels, no reference: undefined
]


class _Boom:
    def __init__(self, spec, name):
        self.spec, self.name, self.version = spec, str(name), "7"

    def evaluate(self, sample):
        if sample.id == "b":
            raise RuntimeError("judge exploded")
        return MetricResult(name=self.name, score=0.25, version=self.version)

    async def aevaluate(self, sample):
        return self.evaluate(sample)


@pytest.fixture
def boom(monkeypatch):
    list_metrics()
    monkeypatch.setattr(registry, "_REGISTRY", dict(registry._REGISTRY))
    monkeypatch.setattr(registry, "_ALIASES", dict(registry._ALIASES))
    box = []
    spec = MetricSpec(name="boom", summary="", formula="", edge_cases=(), category="generation",
                      factory=lambda n, j, e: _Boom(box[0], n), requires=("query",))
    box.append(spec)
    register(spec)


def counts(entry):
    """The four count keys of a summary entry (the summary also carries a CI, tested in tests/stats)."""
    return {k: entry[k] for k in ("mean", "n", "undefined", "errors")}


def test_summary_counts_scored_undefined_errors(boom):
    res = evaluate(ROWS, ["mrr", "boom"])
    s = res.summary()
    # mrr: a -> 1/2, b -> 1, c -> undefined; mean over scored = 0.75
    assert counts(s["mrr"]) == {"mean": 0.75, "n": 2, "undefined": 1, "errors": 0}
    # boom: a and c scored 0.25, b errored -> never a 0 in the mean
    assert counts(s["boom"]) == {"mean": 0.25, "n": 2, "undefined": 0, "errors": 1}
    rec_b = res.records[1]["metrics"]["boom"]
    assert rec_b["score"] is None
    assert rec_b["error"]["type"] == "RuntimeError" and "exploded" in rec_b["error"]["message"]
    assert math.isnan(res.scores["boom"][1])
    assert res.run["metrics"]["boom"]["version"] == "7"


def test_input_errors_become_errored_samples():
    bad = InputError("expected a list", path="data.jsonl", line=2, field="contexts")
    samples = [Sample.from_record(ROWS[0]), bad, Sample.from_record(ROWS[1])]
    res = evaluate(samples, ["mrr"])
    assert res.ids == ["a", "data.jsonl:2", "b"]
    assert counts(res.summary()["mrr"]) == {"mean": 0.75, "n": 2, "undefined": 0, "errors": 1}
    err = res.records[1]["metrics"]["mrr"]["error"]
    assert err["type"] == "InputError" and err["line"] == 2 and err["field"] == "contexts"


def test_streamed_output_format_and_reload(tmp_path):
    res = evaluate(ROWS, ["mrr", "recall@1"], out_dir=tmp_path, keep_records=False, chunk_size=2)
    lines = (tmp_path / "results.jsonl").read_text().splitlines()
    assert len(lines) == 3
    first = json.loads(lines[0])
    assert first["id"] == "a"
    assert set(first["metrics"]["mrr"]) == {"score", "reason", "error", "details", "version"}
    assert first["metrics"]["recall@1"]["score"] == 0.0  # d2 is at rank 2
    summary = json.loads((tmp_path / "summary.json").read_text())
    assert summary["format"] == 1
    assert counts(summary["metrics"]["recall@1"]) == {"mean": 0.5, "n": 2, "undefined": 1, "errors": 0}
    assert summary["run"]["metrics"] == {"mrr": {"version": "1"}, "recall@1": {"version": "1"}}
    loaded = RunResult.load(tmp_path)
    assert loaded.ids == res.ids
    assert loaded.summary() == res.summary()


def test_default_metrics_follow_the_data():
    res = evaluate(ROWS)
    assert "context_recall" in res.metrics and "mrr" in res.metrics


def test_to_pandas_and_jsonl():
    res = evaluate(ROWS, ["mrr"])
    df = res.to_pandas()
    assert list(df.index) == ["a", "b", "c"]
    assert df.loc["a", "mrr"] == 0.5 and math.isnan(df.loc["c", "mrr"])
    assert res.to_jsonl().count("\n") == 3


def test_works_inside_a_running_event_loop():
    import asyncio

    async def inner():
        return evaluate(ROWS, ["mrr"])

    assert asyncio.run(inner()).summary()["mrr"]["n"] == 2


def test_same_metric_twice_is_refused():
    with pytest.raises(ValueError, match="twice"):
        evaluate(ROWS, ["mrr", "recip_rank"])


def test_a_fatal_input_error_keeps_what_was_computed(tmp_path):
    def rows():
        yield Sample.from_record(ROWS[0])
        yield Sample.from_record(ROWS[1])
        raise InputError("expected JSON", path="d.jsonl", line=3)

    with pytest.raises(InputError):
        evaluate(rows(), ["mrr"], out_dir=tmp_path, chunk_size=1)
    lines = (tmp_path / "results.jsonl").read_text().splitlines()
    assert [json.loads(x)["id"] for x in lines] == ["a", "b"]
    summary = json.loads((tmp_path / "summary.json").read_text())
    assert summary["run"]["aborted"]["type"] == "InputError"
    assert summary["metrics"]["mrr"]["n"] == 2


def test_input_error_count_in_run_info():
    bad = InputError("x", path="d.jsonl", line=1)
    res = evaluate([bad, Sample.from_record(ROWS[0])], ["mrr"])
    assert res.run["input_errors"] == 1


def test_dicts_without_id_are_numbered_from_1():
    res = evaluate([{"query": "q", "contexts": [{"id": "d"}], "relevant": ["d"]}], ["mrr"])
    assert res.ids == ["1"]
