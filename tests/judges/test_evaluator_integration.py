"""The judge inside ``ragmeter.evaluate``: stats in run info, errors recorded per sample, and every
metric x sample of a chunk awaited together."""

from __future__ import annotations

import asyncio

import pytest
from pydantic import BaseModel

from ragmeter import MetricResult, Sample, evaluate, list_metrics, registry
from ragmeter.evaluator import score_chunk
from ragmeter.judges import PromptTemplate
from ragmeter.registry import MetricSpec, register

from .fake_server import ChatCall, Reply


class Verdict(BaseModel):
    score: int


PROMPT = PromptTemplate("test_judged", "1", system="Grade.", user="$answer")


class _Judged:
    """A minimal judged metric, written the way generation metrics use the judge."""

    def __init__(self, spec, name, judge):
        self.spec, self.name, self.version, self.judge = spec, str(name), "1", judge

    def evaluate(self, sample):  # pragma: no cover - the runner uses aevaluate
        raise NotImplementedError

    async def aevaluate(self, sample: Sample) -> MetricResult:
        r = await self.judge.judge(PROMPT.messages(answer=sample.answer or ""), Verdict, tag=self.name,
                                   template_version=PROMPT.cache_version)
        return MetricResult(name=self.name, score=r.value.score / 5, version=self.version,
                            details={"raw": r.raw, "cached": r.cached})


@pytest.fixture
def judged_metric(monkeypatch):
    list_metrics()
    monkeypatch.setattr(registry, "_REGISTRY", dict(registry._REGISTRY))
    monkeypatch.setattr(registry, "_ALIASES", dict(registry._ALIASES))
    box = []
    spec = MetricSpec(name="judged_test", summary="", formula="", edge_cases=(), category="generation",
                      factory=lambda n, j, e: _Judged(box[0], n, j), requires=("answer",), needs_judge=True)
    box.append(spec)
    register(spec)


def test_evaluate_with_a_judge(judged_metric, fake_llm, make_judge):
    def rule(call: ChatCall) -> Reply:
        if "unreadable" in call.all_text:
            return Reply.malformed("no idea")
        return Reply.json({"score": 4})

    fake_llm.rule = rule
    judge = make_judge(cache=True)
    rows = [
        {"id": "a", "query": "q", "answer": "fine", "contexts": [{"id": "d1"}], "relevant": ["d1"]},
        {"id": "b", "query": "q", "answer": "unreadable", "contexts": [{"id": "d1"}], "relevant": ["d2"]},
    ]
    res = evaluate(rows, ["judged_test", "mrr"], judge=judge)
    assert res.scores["judged_test"][0] == pytest.approx(0.8)
    rec = res.records[1]["metrics"]["judged_test"]
    assert rec["score"] is None and rec["error"]["type"] == "JudgeParseError"  # never a 0
    stats = res.run["judge"]
    assert stats["calls"] == 2 and stats["errors"] == {"JudgeParseError": 1}
    assert stats["by_tag"]["judged_test"]["calls"] == 2
    # a second evaluate() (a new event loop) reuses the judge and its cache
    again = evaluate(rows[:1], ["judged_test"], judge=judge)
    assert again.records[0]["metrics"]["judged_test"]["details"]["cached"] is True
    # ... and its run info counts that run only: one call, a cache hit, no request, no error
    s2 = again.run["judge"]
    assert (s2["calls"], s2["cache_hits"], s2["requests"], s2["errors"]) == (1, 1, 0, {})
    assert s2["by_tag"]["judged_test"]["calls"] == 1 and s2["model"] == stats["model"]
    assert judge.stats()["calls"] == 3  # the judge itself keeps its lifetime totals


def test_stats_delta_by_hand():
    from ragmeter.judges.counters import stats_delta

    before = {"model": "m", "calls": 5, "cost": 0.5, "errors": {"JudgeParseError": 1},
              "by_tag": {"a": {"calls": 5, "errors": {}}}}
    now = {"model": "m", "calls": 8, "cost": 0.75, "errors": {"JudgeParseError": 1, "JudgeTimeoutError": 2},
           "by_tag": {"a": {"calls": 5, "errors": {}}, "b": {"calls": 3, "errors": {"JudgeTimeoutError": 2}}}}
    assert stats_delta(now, before) == {"model": "m", "calls": 3, "cost": 0.25,
                                        "errors": {"JudgeTimeoutError": 2},
                                        "by_tag": {"b": {"calls": 3, "errors": {"JudgeTimeoutError": 2}}}}
    assert stats_delta({"cost": None, "calls": 2}, {"cost": None, "calls": 1}) == {"cost": None, "calls": 1}
    assert stats_delta(now, None) is now


class _Barrier:
    """An evaluator whose calls all wait until ``expected`` of them (all metrics together) are in flight."""

    spec = None
    version = "1"

    def __init__(self, name, state):
        self.name, self.state = name, state

    def evaluate(self, sample):  # pragma: no cover
        raise NotImplementedError

    async def aevaluate(self, sample):
        self.state["in"] += 1
        if self.state["in"] == self.state["expected"]:
            self.state["event"].set()
        await asyncio.wait_for(self.state["event"].wait(), 5)
        return MetricResult(name=self.name, score=1.0)


def test_all_metrics_of_a_chunk_run_together():
    async def go():
        state = {"in": 0, "expected": 6, "event": asyncio.Event()}
        evs = [_Barrier("m1", state), _Barrier("m2", state), _Barrier("m3", state)]
        samples = [Sample(id="x"), Sample(id="y")]
        out = await score_chunk(evs, samples)
        return out

    out = asyncio.run(go())  # would time out if metrics were awaited one after another
    assert list(out) == ["m1", "m2", "m3"] and all(len(v) == 2 for v in out.values())
    assert MetricResult.from_error("m", "1", RuntimeError("x")).status == "error"


def test_evaluate_with_a_judge_inside_a_running_loop(judged_metric, fake_llm, make_judge):
    """As in Jupyter: evaluate() is called while an event loop is running."""
    fake_llm.rule = lambda call: Reply.json({"score": 5})
    judge = make_judge()

    async def notebook_cell():
        return evaluate([{"id": "a", "query": "q", "answer": "fine"}], ["judged_test"], judge=judge)

    res = asyncio.run(notebook_cell())
    assert res.scores["judged_test"][0] == pytest.approx(1.0)
    assert res.run["judge"]["requests"] == 1
