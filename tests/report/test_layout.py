"""The expanded sample's layout in a real headless Chromium at desktop (1280 px) and phone (390 px) widths.

A run with 14 metrics makes the sample table far wider than the screen. The expanded sample must
still be a panel as wide as the visible area: no horizontal scroll inside it, the reference and
the per-claim verdict table inside the viewport; on a phone the metric results stack and the page
itself never scrolls sideways.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from ragmeter.report import write_report
from ragmeter.results import RunWriter
from ragmeter.types import MetricResult

METRICS = ["recall@5", "recall@10", "recall@20", "ndcg@5", "ndcg@10", "mrr", "map", "precision@5",
           "hit_rate@5", "context_recall", "context_precision", "faithfulness", "answer_relevancy", "token_f1"]
LONG = ("The retention window for daily snapshots is thirty days by default and can be changed under "
        "Settings, Retention, to anything between seven and three thousand six hundred and fifty days. ")


@pytest.fixture(scope="module")
def wide_report(tmp_path_factory: pytest.TempPathFactory) -> Path:
    tmp = tmp_path_factory.mktemp("wide")
    w = RunWriter(METRICS, out_dir=tmp / "run")
    rows = []
    for i in range(6):
        sid = f"sample-{i}"
        det = {"relevance_from": "labels", "relevant_ranks": [2], "retrieved": 3, "matched_by": [None, "id", None]}
        res = {m: MetricResult(name=m, score=0.25 * (i % 5), version="1", reason="relevant at rank(s) [2]",
                               details=det) for m in METRICS}
        res["faithfulness"] = MetricResult(
            name="faithfulness", score=0.5, version="2", reason="1 of 2 claims supported by the context",
            details={"claims": [
                {"claim": "Daily snapshots are kept for thirty days by default " * 2, "verdict": "supported",
                 "evidence": "kb-retention-01", "p_yes": 0.97},
                {"claim": "The maximum retention is ten years", "verdict": "unsupported", "evidence": None,
                 "p_yes": 0.08},
            ]})
        w.add(sid, res)
        rows.append({"id": sid, "query": f"How long are daily snapshots kept? ({i})", "answer": LONG,
                     "reference": "REFERENCE-TEXT " + LONG * 2,
                     "contexts": [{"id": f"kb-{k}", "text": LONG} for k in range(3)]})
    w.finish({"ragmeter_version": "0.1.0"})
    data = tmp / "data.jsonl"
    data.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return write_report(tmp / "run", tmp / "report.html", data=data)


def open_at(browser: Any, path: Path, width: int, height: int, *, touch: bool = False) -> Any:
    context = browser.new_context(viewport={"width": width, "height": height}, has_touch=touch)
    page = context.new_page()
    problems: list[str] = []
    page.on("pageerror", lambda e: problems.append(str(e)))
    page.goto(path.as_uri())
    page.wait_for_selector("html[data-ready='1']", timeout=15_000)
    page.click("#sample-body tr.row[data-index='0']")
    page.wait_for_selector("tr.detail > td > div")
    return context, page, problems


def box(page: Any, selector: str) -> dict[str, float]:
    b = page.locator(selector).first.bounding_box()
    assert b is not None, f"{selector} is not rendered"
    return b


@pytest.mark.parametrize(("width", "height"), [(1280, 900), (390, 844)], ids=["desktop", "phone"])
def test_expanded_sample_fits_the_viewport(browser: Any, wide_report: Path, width: int, height: int) -> None:
    context, page, problems = open_at(browser, wide_report, width, height)
    try:
        assert problems == []
        table_w = page.evaluate("() => document.getElementById('sample-table').scrollWidth")
        assert table_w > width  # the premise: 14 metric columns are wider than the screen
        panel = page.locator("tr.detail > td > div")
        # no horizontal scroll inside the panel, and the panel within the viewport
        assert panel.evaluate("p => p.scrollWidth - p.clientWidth") <= 1
        pb = box(page, "tr.detail > td > div")
        assert pb["x"] >= 0 and pb["x"] + pb["width"] <= width + 0.5, pb
        # the reference text and the per-claim verdict table are visible within the viewport width
        ref = page.locator("tr.detail .field", has_text="Reference").locator("pre.text")
        rb = ref.bounding_box()
        assert rb is not None and rb["x"] >= 0 and rb["x"] + rb["width"] <= width + 0.5, rb
        verdicts = page.locator("tr.detail table.mini", has_text="unsupported")
        verdicts.scroll_into_view_if_needed()
        assert verdicts.is_visible()
        vb = verdicts.bounding_box()
        assert vb is not None and vb["x"] >= 0 and vb["x"] + vb["width"] <= width + 0.5, vb
        cell = page.locator("tr.detail table.mini td", has_text="unsupported").first
        cb = cell.bounding_box()
        assert cb is not None and cb["x"] + cb["width"] <= width + 0.5, cb
        # the page itself never scrolls sideways (only the sample table does, inside its frame)
        assert page.evaluate("() => document.documentElement.scrollWidth") <= width
    finally:
        context.close()


def test_phone_stacks_the_metric_results_readably(browser: Any, wide_report: Path) -> None:
    context, page, _ = open_at(browser, wide_report, 390, 844)
    try:
        row = page.locator("tr.detail table.mres tbody tr", has_text="faithfulness").first
        name = row.locator("th").first.bounding_box()
        score = row.locator("td.num").bounding_box()
        reason = row.locator("td.reason").bounding_box()
        assert name and score and reason
        # stacked: the score and the reason sit below the metric name, each as wide as the row
        assert score["y"] >= name["y"] + name["height"] - 1 and reason["y"] >= score["y"] + score["height"] - 1
        assert reason["width"] > 250
        assert row.locator("td.num").evaluate("td => getComputedStyle(td, '::before').content") == '"score: "'
        size = page.locator("tr.detail pre.text").first.evaluate("e => parseFloat(getComputedStyle(e).fontSize)")
        assert size >= 12
    finally:
        context.close()
