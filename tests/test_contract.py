"""The evaluator contract (:mod:`ragmeter.contract`) and :meth:`MetricResult.from_error`."""

from __future__ import annotations

from ragmeter.contract import AsyncBatchEvaluator, BatchEvaluator, Evaluator, KernelEvaluator
from ragmeter.errors import InputError
from ragmeter.registry import get_evaluator
from ragmeter.types import MetricResult


def test_capabilities_are_found_by_protocol() -> None:
    mrr = get_evaluator("mrr")
    assert isinstance(mrr, Evaluator)
    assert isinstance(mrr, BatchEvaluator) and isinstance(mrr, KernelEvaluator)
    assert not isinstance(mrr, AsyncBatchEvaluator)

    class Plain:
        name, version, spec = "p", "1", None

        def evaluate(self, sample):
            return None

        async def aevaluate(self, sample):
            return None

    assert isinstance(Plain(), Evaluator)
    assert not isinstance(Plain(), BatchEvaluator) and not isinstance(Plain(), KernelEvaluator)


def test_from_error_records_the_error_not_a_score() -> None:
    r = MetricResult.from_error("faithfulness", "2", InputError("bad row", path="a.jsonl", line=3))
    assert r.score is None and r.status == "error" and r.version == "2" and r.name == "faithfulness"
    assert r.reason.startswith("error: ") and "bad row" in r.reason
    assert r.error is not None and r.error.type == "InputError"
    r2 = MetricResult.from_error("m", "1", ValueError("x"))
    assert r2.reason == "error: x" and r2.error is not None and r2.error.type == "ValueError"
