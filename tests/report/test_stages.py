"""The report's single-run view: metric cards by stage (direction, gate, state, undefined reasons),
the diagnosis heading the page as sentences with evidence (tentative findings when no rule fires),
the samples embedded from a large run, and the gate thresholds plumbed from `ragmeter eval`.

Expected values are computed by hand here (the Wilson interval from its formula), never read back
from the code under test.
"""

from __future__ import annotations

import json
import math
import re
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from ragmeter.cli import main
from ragmeter.report import build_report
from ragmeter.report._data import Run, load_run, select_samples
from ragmeter.report._html import card_state, render_metric_cards
from ragmeter.results import RunWriter
from ragmeter.types import ErrorInfo, MetricResult

ROOT = Path(__file__).resolve().parents[2]


def write_run(out: Path, scores: dict[str, list[float | None]], *, reasons: dict[str, list[str]] | None = None,
              errors: dict[str, set[int]] | None = None, info: dict[str, Any] | None = None) -> Path:
    """A run directory written by the real RunWriter: ``scores[metric][i]`` (None: undefined)."""
    metrics = list(scores)
    n = len(next(iter(scores.values())))
    w = RunWriter(metrics, out_dir=out)
    for i in range(n):
        res = {}
        for m in metrics:
            s = scores[m][i]
            if i in (errors or {}).get(m, set()):
                res[m] = MetricResult(name=m, score=None, reason="error", version="1",
                                      error=ErrorInfo(type="JudgeTimeout", message="no answer"))
            else:
                why = (reasons or {}).get(m)
                res[m] = MetricResult(name=m, score=s, version="1",
                                      reason=(why[i] if why else ("undefined" if s is None else "ok")))
        w.add(f"s{i:03d}", res)
    w.finish(info or {"ragmeter_version": "0.1.0"})
    return out


def cards_by_stage(html: str) -> list[tuple[str, list[str]]]:
    """``[(stage, [metric, ...]), ...]`` in page order."""
    out = []
    for stage, body in re.findall(r'<section class="stage" data-stage="([^"]+)">(.*?)</section>', html, re.S):
        out.append((stage, re.findall(r'<article class="card[^"]*" data-metric="([^"]+)"', body)))
    return out


def card(html: str, metric: str) -> str:
    m = re.search(r'<article class="card[^"]*" data-metric="' + re.escape(metric) + r'".*?</article>', html, re.S)
    assert m, metric
    return m.group(0)


# ---- cards -------------------------------------------------------------------------------------------


def test_cards_grouped_by_stage_in_pipeline_order_with_direction(tmp_path: Path) -> None:
    scores = {"faithfulness": [0.9, 0.8], "mystery_metric": [0.5, 0.5], "ndcg@5": [0.5, 0.5],
              "hallucination_rate": [0.3, 0.3], "context_relevancy": [0.7, 0.6], "mrr": [1.0, 0.5]}
    run = load_run(write_run(tmp_path / "r", scores))
    html = render_metric_cards(run)
    # roles from the registry: ndcg/mrr retrieval, context_relevancy context, faithfulness and
    # hallucination_rate answer; a name ragmeter does not know goes last
    assert cards_by_stage(html) == [("retrieval", ["ndcg@5", "mrr"]), ("context", ["context_relevancy"]),
                                    ("answer", ["faithfulness", "hallucination_rate"]),
                                    ("other", ["mystery_metric"])]
    assert "Context use" in html
    assert "↓ lower is better" in card(html, "hallucination_rate")
    assert "↑ higher is better" in card(html, "ndcg@5")


def test_card_state_against_the_gate(tmp_path: Path) -> None:
    scores = {"ndcg@5": [0.5, 0.5], "hallucination_rate": [0.3, 0.3], "faithfulness": [0.9, 0.9],
              "mrr": [None, None]}
    run = load_run(write_run(tmp_path / "r", scores))
    html = render_metric_cards(run, gate={"ndcg@5": 0.9, "hallucination_rate": 0.5, "mrr": 0.5})
    assert 'data-state="fail"' in card(html, "ndcg@5") and "gate ≥ 0.900" in card(html, "ndcg@5")
    assert "fail: mean 0.500 &lt; 0.9" in card(html, "ndcg@5")
    # lower is better: 0.3 <= 0.5 passes
    hall = card(html, "hallucination_rate")
    assert 'data-state="pass"' in hall and "gate ≤ 0.500" in hall
    assert 'data-state="unknown"' in card(html, "faithfulness") and "gate ≥" not in card(html, "faithfulness")
    assert 'data-state="unknown"' in card(html, "mrr") and "no score to compare with 0.5" in card(html, "mrr")


def test_card_state_hand_values() -> None:
    assert card_state(0.65, None, 0.65, True) == ("pass", "pass: mean 0.650 >= 0.65")
    assert card_state(0.3, None, 0.2, False) == ("fail", "fail: mean 0.300 > 0.2")
    assert card_state(0.7, [0.6, 0.8], 0.65, True, on="ci_low") == ("fail", "fail: ci low 0.600 < 0.65")
    assert card_state(0.1, None, None, True, low=True)[0] == "low"
    assert card_state(0.9, None, None, True)[0] == "unknown"


def test_card_shows_undefined_count_and_most_common_reasons(tmp_path: Path) -> None:
    n = 80
    scores: list[float | None] = [None] * 75 + [0.5] * 5
    reasons = (["undefined: no [ESSENTIAL PASSAGE] section in the ground truth"] * 72
               + ["undefined: no ground truth for sample 17", "undefined: no ground truth for sample 18",
                  "undefined: judge said <n/a>"] + ["ok"] * 5)
    assert len(reasons) == n
    run = load_run(write_run(tmp_path / "r", {"passage_recall": scores}, reasons={"passage_recall": reasons},
                             errors={"passage_recall": {79}}))
    c = card(render_metric_cards(run), "passage_recall")
    assert "undefined 75" in c and "errors 1" in c
    reasons_shown = re.findall(r"<li>(.*?) <span class=\"muted\">\((\d[\d,]*)\)</span></li>", c)
    # the two most common, the numbers in a reason folded to N, HTML escaped; the third mentioned
    assert reasons_shown[:2] == [("undefined: no [ESSENTIAL PASSAGE] section in the ground truth", "72"),
                                 ("undefined: no ground truth for sample N", "2")]
    assert "and 1 other reason" in c
    assert ("JudgeTimeout", "1") in reasons_shown


def test_gate_from_ragmeter_eval_reaches_the_cards(tmp_path: Path) -> None:
    data = ROOT / "examples" / "rag_samples.jsonl"
    out = tmp_path / "out"
    res = CliRunner().invoke(main, ["eval", str(data), "-o", str(out), "-q", "-m", "mrr", "-m", "ndcg@5",
                                    "--fail-under", "mrr=0.999"])
    assert res.exit_code == 1, res.output  # the gate fails: mrr is below 0.999 on this data
    info = json.loads((out / "summary.json").read_text())["run"]
    assert info["gate"] == {"fail_under": {"mrr": 0.999}, "statistic": "mean", "max_error_rate": 0.05}
    html = (out / "report.html").read_text()
    assert 'data-state="fail"' in card(html, "mrr") and "gate ≥ 0.999" in card(html, "mrr")
    assert "Quality gate FAILED (exit 1): 1 of 1 checks failed" in html  # the banner says what the exit code said
    assert 'data-state="unknown"' in card(html, "ndcg@5")
    # ragmeter report takes --fail-under too, overriding the recorded one
    res = CliRunner().invoke(main, ["report", str(out), "-o", str(tmp_path / "r.html"), "--fail-under", "mrr=0.1"])
    assert res.exit_code == 0, res.output
    assert 'data-state="pass"' in card((tmp_path / "r.html").read_text(), "mrr")


# ---- diagnosis ---------------------------------------------------------------------------------------


def wilson(k: int, n: int, z: float = 1.959963984540054) -> tuple[float, float]:
    p = k / n
    centre = (p + z * z / (2 * n)) / (1 + z * z / n)
    half = z / (1 + z * z / n) * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n))
    return centre - half, centre + half


def test_diagnosis_heads_the_report_as_a_sentence_with_evidence(tmp_path: Path) -> None:
    n = 80
    recall = [1.0 if i % 4 == 0 else 0.0 for i in range(n)]  # 20 of 80
    run_dir = write_run(tmp_path / "r", {"recall@5": recall, "faithfulness": [0.9] * n})
    html = build_report(run_dir)  # diagnose runs by default
    main_html = html[html.index("<main>"):]
    assert main_html.index('id="diagnosis"') < main_html.index('id="metrics"') < main_html.index('id="run"')
    lo, hi = wilson(20, 80)
    sentence = f"The retriever misses the evidence: recall@5 0.250 [{lo:.3f}, {hi:.3f}], below 0.65"
    assert sentence in html
    assert ">strong<" in html and "Fix to try: hybrid retrieval" in html


def test_tentative_finding_when_no_rule_fires_but_a_metric_is_clearly_low(tmp_path: Path) -> None:
    n = 40
    hits = [1.0 if i % 5 == 0 else 0.0 for i in range(n)]  # 8 of 40
    run_dir = write_run(tmp_path / "r", {"hit_rate@5": hits, "mrr": [0.1 if i % 2 else 0.3 for i in range(n)],
                                         "ndcg@5": [0.9] * n})
    html = build_report(run_dir)
    assert "No failure signature fired, but some metrics are low against their gate" in html
    lo, hi = wilson(8, 40)
    assert (f"hit_rate@5 is clearly low: 0.200 [{lo:.3f}, {hi:.3f}], below its reference level 0.5 "
            "(retrieval stage)") in html
    # mrr 0.2 has no reference level (no absolute bar says what a good mrr is), ndcg@5 is high
    assert "mrr is clearly" not in html and "ndcg@5 is clearly" not in html
    assert 'data-state="low"' in card(html, "hit_rate@5")
    # a gate threshold decides instead of the reference level: 0.2 passes a gate of 0.15
    html = build_report(run_dir, fail_under={"hit_rate@5": 0.15})
    assert "hit_rate@5 is clearly low" not in html
    assert "No finding: none of the 4 failure signatures fired" in html


def test_no_diagnose_shows_saved_findings(tmp_path: Path) -> None:
    run_dir = write_run(tmp_path / "r", {"mrr": [0.5, 0.6]},
                        info={"diagnosis": [{"severity": "warning", "title": "Saved", "message": "from info"}]})
    assert "Saved" in build_report(run_dir, diagnose=False)
    assert "Saved" not in build_report(run_dir)


# ---- large runs: a selection of samples ----------------------------------------------------------------


def test_small_run_embeds_every_sample_in_order(tmp_path: Path) -> None:
    run = load_run(write_run(tmp_path / "r", {"mrr": [0.1 * i for i in range(5)]}))
    assert select_samples(run, max_samples=5) == [(i, []) for i in range(5)]


def test_selection_keeps_worst_best_errors_failing_and_a_random_fill(tmp_path: Path) -> None:
    n = 40
    mrr = [((i * 7) % 40) / 40 for i in range(n)]  # a permutation of 0, 1/40, ..., 39/40
    hall = [((i * 11) % 40) / 40 for i in range(n)]  # lower is better
    run = load_run(write_run(tmp_path / "r", {"mrr": mrr, "hallucination_rate": hall}, errors={"mrr": {5, 6}}))
    sel = dict(select_samples(run, max_samples=12, worst=2, best=1, thresholds={"mrr": 3 / 40}))
    assert len(sel) == 12
    lowest_mrr = sorted((v, i) for i, v in enumerate(mrr) if i not in (5, 6))
    assert "worst mrr" in sel[lowest_mrr[0][1]] and "worst mrr" in sel[lowest_mrr[1][1]]
    assert "best mrr" in sel[lowest_mrr[-1][1]]
    highest_hall = max(range(n), key=lambda i: hall[i])
    assert "worst hallucination_rate" in sel[highest_hall]  # the worst of a lower-is-better metric is its highest
    assert sel[5] == ["error"] or "error" in sel[5]
    assert "error" in sel[6]
    failing = [i for v, i in lowest_mrr if v < 3 / 40]
    assert all("fails gate mrr" in sel[i] for i in failing)
    assert sum(1 for why in sel.values() if why == ["random"]) == 12 - len(
        {i for i, why in sel.items() if why != ["random"]})
    # seeded: the same selection again
    assert dict(select_samples(run, max_samples=12, worst=2, best=1, thresholds={"mrr": 3 / 40})) == sel


def test_a_single_run_report_never_loads_every_record(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    run_dir = write_run(tmp_path / "r", {"mrr": [0.01 * i for i in range(60)]})

    def refuse(self: Run) -> None:
        raise AssertionError("Run.records read: the whole results.jsonl held in memory")

    monkeypatch.setattr(Run, "records", property(refuse))
    html = build_report(run_dir, max_samples=10)
    assert "Showing 10 of 60 samples" in html
    payload = json.loads(re.search(r'<script type="application/json" id="ragmeter-data">(.*?)</script>',
                                   html, re.S).group(1))
    assert payload["total"] == 60 and len(payload["samples"]) == 10
    assert [s["i"] for s in payload["samples"]] == sorted(s["i"] for s in payload["samples"])


def test_diagnose_markdown_names_the_clearly_low_metric(tmp_path: Path) -> None:
    from ragmeter.stats.diagnose import diagnose

    run_dir = write_run(tmp_path / "r", {"hit_rate@5": [1.0 if i % 5 == 0 else 0.0 for i in range(40)]})
    d = diagnose(run_dir)
    assert [low["metric"] for low in d.low_metrics] == ["hit_rate@5"]
    assert d.to_dict()["low_metrics"][0]["threshold"] == 0.5
    md = d.to_markdown()
    assert "- [tentative] hit_rate@5 is clearly low: 0.200 [" in md and "No finding" not in md
    # a gate the metric passes: nothing low, and the one-line sentence instead
    assert diagnose(run_dir, gate={"hit_rate@5": 0.1}).low_metrics == []
    md = diagnose(run_dir, gate={"hit_rate@5": 0.1}).to_markdown()
    assert "No finding: none of the 4 failure signatures fired" in md


def test_precision_at_k_is_not_clearly_low_by_construction(tmp_path: Path) -> None:
    # one labelled passage per query: the best retriever's precision@5 is 1/5 = 0.2, so 0.2 is not a
    # finding without a gate; with a gate of 0.5 it is (the user said 0.5 is the bar)
    n = 40
    run_dir = write_run(tmp_path / "r", {"precision@5": [0.2] * (n // 2) + [0.0, 0.2] * (n // 4),
                                         "mrr": [0.9] * n})
    html = build_report(run_dir)
    assert "precision@5 is clearly low" not in html
    assert "No finding: none of the 4 failure signatures fired" in html
    html = build_report(run_dir, fail_under={"precision@5": 0.5})
    assert "precision@5 is clearly low" in html
