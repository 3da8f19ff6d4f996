"""diagnose(): a metric is low only against a gate, its spec's reference level or a baseline run."""

from __future__ import annotations

from importlib import resources

import numpy as np
import pytest

from ragmeter import evaluate
from ragmeter.registry import get_spec
from ragmeter.stats import diagnose
from ragmeter.stats.diagnose import no_finding_sentence, tentative_sentence

#: The offline metrics of the bundled 72-row validation file (no judge, no embedder).
OFFLINE = ["rouge_l", "token_f1", "hit_rate@5", "mrr", "ndcg@5", "precision@5", "lexical_faithfulness"]


@pytest.fixture(scope="module")
def validation_run(tmp_path_factory: pytest.TempPathFactory):
    data = resources.files("ragmeter") / "data" / "validation" / "judge_validation.jsonl"
    out = tmp_path_factory.mktemp("v72")
    return evaluate(str(data), OFFLINE, out_dir=out)


def test_a_healthy_run_with_short_references_raises_no_false_alarm(validation_run) -> None:
    # answers are sentences and references short phrases: rouge_l and token_f1 sit near 0.37-0.39 with
    # their whole CI under 0.5 on a file whose answers are mostly right; that says nothing about quality
    d = diagnose(validation_run)
    rouge = validation_run.scores["rouge_l"]
    assert np.nanmean(rouge) < 0.45  # the situation the rule must not flag
    assert d.findings == []
    assert d.low_metrics == []
    md = d.to_markdown()
    body = [line for line in md.splitlines() if line.strip() and not line.startswith("#")]
    assert body[0] == no_finding_sentence(d.to_dict())
    assert "rouge_l" not in body[0] and "clearly low" not in md


def test_lexical_overlap_has_no_reference_level_and_recall_has_one() -> None:
    assert get_spec("rouge_l").reference_level is None
    assert get_spec("token_f1").reference_level is None
    assert get_spec("precision").reference_level is None  # the ceiling is min(R, k) / k
    assert get_spec("recall").reference_level == 0.5
    assert get_spec("faithfulness").reference_level == 0.5
    assert get_spec("hallucination_rate").reference_level == 0.5  # lower is better: low means above it


def test_reference_level_flags_recall_but_never_rouge(make_run) -> None:
    n = 40
    rows = {f"q{i}": {"hit_rate@5": float(i % 5 == 0), "rouge_l": 0.1} for i in range(n)}  # hit rate 0.2
    d = diagnose(make_run("r", rows))
    low = {e["metric"]: e for e in d.low_metrics}
    assert set(low) == {"hit_rate@5"}
    assert low["hit_rate@5"]["basis"] == "reference level" and low["hit_rate@5"]["threshold"] == 0.5
    assert tentative_sentence(low["hit_rate@5"]).startswith("hit_rate@5 is clearly low: 0.200 [")
    # a gate decides instead of the reference level, and it can make rouge_l low too
    d = diagnose(make_run("r2", rows), gate={"rouge_l": 0.3, "hit_rate@5": 0.1})
    assert [e["metric"] for e in d.low_metrics] == ["rouge_l"]
    assert d.low_metrics[0]["basis"] == "gate"


def test_a_baseline_makes_a_significant_regression_low(make_run) -> None:
    n = 60
    base = {f"q{i}": {"rouge_l": 0.6, "mrr": 0.8} for i in range(n)}
    # rouge_l drops by 0.3 on every sample: significant; mrr unchanged
    cand = {f"q{i}": {"rouge_l": 0.3, "mrr": 0.8} for i in range(n)}
    d = diagnose(make_run("cand", cand), baseline=make_run("base", base))
    assert [e["metric"] for e in d.low_metrics] == ["rouge_l"]
    e = d.low_metrics[0]
    assert e["basis"] == "baseline"
    assert e["diff"] == pytest.approx(-0.3)
    assert e["baseline_mean"] == pytest.approx(0.6)
    assert e["p_adjusted"] < 0.05
    assert tentative_sentence(e).startswith("rouge_l is lower than the baseline: 0.300 vs 0.600, Δ -0.300 [")
    # the same drop without a baseline is not a finding: 0.3 overlap says nothing on its own
    assert diagnose(make_run("cand2", cand)).low_metrics == []
