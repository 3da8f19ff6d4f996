"""A comparison opens with what changed: the significant regressions and improvements, then the rest."""

from __future__ import annotations

import json
import re
from pathlib import Path

from click.testing import CliRunner

from ragmeter.cli import main
from ragmeter.report import build_report
from ragmeter.stats import compare

from .test_stages import write_run

N = 60


def _runs(tmp_path: Path) -> tuple[Path, Path]:
    """recall@5 drops from 0.9 to 0.57 (Δ = -0.36 and -0.30 alternately: mean -0.33); faithfulness
    rises by 0.2 on every sample; mrr and ndcg@5 do not move."""
    base = {"recall@5": [0.8 if i % 2 else 1.0 for i in range(N)], "mrr": [0.5 if i % 3 else 1.0 for i in range(N)],
            "ndcg@5": [0.4 if i % 2 else 0.8 for i in range(N)], "faithfulness": [0.6] * N}
    cand = {"recall@5": [0.5 if i % 2 else 0.64 for i in range(N)], "mrr": base["mrr"], "ndcg@5": base["ndcg@5"],
            "faithfulness": [0.8] * N}
    return write_run(tmp_path / "base", base), write_run(tmp_path / "cand", cand)


def test_the_regression_is_the_first_line_of_the_comparison(tmp_path: Path) -> None:
    base, cand = _runs(tmp_path)
    md = compare(base, cand).to_markdown()
    body = [line for line in md.splitlines() if line.strip() and not line.startswith("#")]
    first = re.fullmatch(r"- retrieval: recall@5 worse, Δ -0\.330 \[(-0\.\d{3}), (-0\.\d{3})\], adjusted p (\S+)",
                         body[0])
    assert first, body[0]
    lo, hi = float(first.group(1)), float(first.group(2))
    assert -0.36 <= lo <= -0.33 <= hi <= -0.30  # the per-sample differences are -0.36 and -0.30
    assert body[1].startswith("- answer: faithfulness better, Δ +0.200 ")
    assert body[2] == "- No significant change: mrr, ndcg@5."
    # then which run is which, then the table
    assert body[3].startswith("A: `") and body[4].startswith("|")


def test_the_report_opens_the_comparison_with_what_changed(tmp_path: Path) -> None:
    base, cand = _runs(tmp_path)
    html = build_report(cand, baseline=base)
    main = html[html.index("<main>"):]
    section = main[main.index('id="comparison"'):]
    items = re.findall(r'<li class="change (\w+)">(.*?)</li>', section)
    assert items[0][0] == "worse" and items[0][1].startswith("retrieval: recall@5 worse, Δ -0.330 [")
    assert items[1][0] == "better" and items[1][1].startswith("answer: faithfulness better")
    assert items[2] == ("none", "No significant change: mrr, ndcg@5.")
    # the comparison comes before the diagnosis and the cards, and the first list item is the regression
    assert main.index('id="comparison"') < main.index('id="diagnosis"') < main.index('id="metrics"')
    assert main.index("recall@5 worse") < main.index("<table")


def test_compare_cli_table_opens_with_what_changed(tmp_path: Path) -> None:
    base, cand = _runs(tmp_path)
    out = CliRunner().invoke(main, ["compare", str(base), str(cand), "--format", "table"]).output
    lines = [line for line in out.splitlines() if line.strip()]
    assert lines[0].startswith("retrieval: recall@5 worse, Δ -0.330 [")


def test_a_failing_gate_heads_the_report_with_each_failed_check(tmp_path: Path) -> None:
    hits = [1.0 if i % 5 == 0 else 0.0 for i in range(40)]  # hit_rate@5 = 0.2
    run = write_run(tmp_path / "r", {"hit_rate@5": hits, "mrr": [0.9] * 40},
                    info={"gate": {"fail_under": {"hit_rate@5": 0.5, "mrr": 0.5}, "statistic": "mean",
                                   "max_error_rate": 0.05}})
    html = build_report(run)
    main = html[html.index("<main>"):]
    banner = re.search(r'<section id="gate" class="gate-banner fail" data-state="fail">(.*?)</section>', main)
    assert banner and main.index('id="gate"') < main.index('id="diagnosis"')
    assert "Quality gate FAILED (exit 1): 1 of 2 checks failed" in banner.group(1)  # one check per threshold
    ci = json.loads((run / "summary.json").read_text())["metrics"]["hit_rate@5"]["ci"]
    assert (f"<li>hit_rate@5: mean 0.2000 not &gt;= 0.5, 95% CI [{ci[0]:.4f}, {ci[1]:.4f}]</li>"
            in banner.group(1))
    assert "mrr:" not in banner.group(1)  # a passed check is not listed
    # a gate that passes says so in one line; no gate, no banner
    ok = build_report(run, fail_under={"mrr": 0.5})
    assert '<section id="gate" class="gate-banner pass"' in ok and "Quality gate passed: 1 check<" in ok
    plain = write_run(tmp_path / "p", {"mrr": [0.9] * 40})
    assert 'id="gate"' not in build_report(plain)


def test_gate_markdown_opens_with_the_verdict_and_a_diagnosis_line() -> None:
    from ragmeter.gate import check_gate, markdown

    summary = {"mrr": {"mean": 0.41, "ci": [0.33, 0.49], "n": 40, "undefined": 0, "errors": 0}}
    text = markdown(summary, check_gate(summary, {"mrr": 0.65}), diagnosis="No finding: x.")
    lines = text.splitlines()
    assert lines[0] == "**Quality gate FAILED (exit 1)**: 1 of 1 checks failed"
    assert lines[2] == "- ❌ mrr: mean 0.4100 not >= 0.65, 95% CI [0.3300, 0.4900]"
    assert lines[4] == "Diagnosis: No finding: x."
    assert lines[6].startswith("| metric |")
