"""Every kind of report at phone (390 px) and desktop (1280 px) width in a real headless Chromium:
the page never scrolls sideways (wide tables and plots scroll inside their own box) and no visible
text, SVG plot labels included, is rendered smaller than 11 px."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from ragmeter.report import write_report
from ragmeter.results import RunWriter
from ragmeter.types import MetricResult

from .conftest import write_rich_run

#: Per page: (document scroll width, viewport width, smallest rendered font size and the text it is on).
MEASURE = """() => {
  const sizes = [];
  const walker = document.createTreeWalker(document.body, NodeFilter.SHOW_TEXT);
  for (let n = walker.nextNode(); n; n = walker.nextNode()) {
    if (!n.textContent.trim()) continue;
    const el = n.parentElement;
    if (!el || el.closest('script, style, noscript, title')) continue;
    const r = el.getBoundingClientRect();
    const st = getComputedStyle(el);
    if (r.width === 0 || r.height === 0 || st.visibility === 'hidden') continue;
    let px = parseFloat(st.fontSize);
    if (el instanceof SVGElement && el.ownerSVGElement) {
      const m = el.getScreenCTM();
      px *= Math.sqrt(m.a * m.a + m.b * m.b);  // the SVG's scale on screen
    }
    sizes.push([px, n.textContent.trim().slice(0, 40)]);
  }
  sizes.sort((a, b) => a[0] - b[0]);
  return {scroll: document.documentElement.scrollWidth, inner: window.innerWidth, smallest: sizes[0]};
}"""

METRICS = ["recall@5", "recall@10", "recall@20", "ndcg@5", "ndcg@10", "mrr", "map", "precision@5",
           "hit_rate@5", "context_recall", "context_precision", "token_f1", "rouge_l",
           "semantic_similarity(normalize=baseline)"]


def _offline_run(out: Path, n: int) -> Path:
    w = RunWriter(METRICS, out_dir=out, keep_records=n <= 1000)
    for i in range(n):
        w.add(f"sample-with-a-long-identifier-{i:06d}",
              {m: MetricResult(name=m, score=((i * 7 + k) % 11) / 10, version="1", reason="relevant at rank(s) [2]")
               for k, m in enumerate(METRICS)})
    w.finish({"ragmeter_version": "0.1.0", "data": "/a/rather/long/path/to/the/data/file/of/this/run/qa.jsonl"})
    return out


@pytest.fixture(scope="module")
def reports(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    tmp = tmp_path_factory.mktemp("responsive")
    judged, data = write_rich_run(tmp / "judged")
    base, _ = write_rich_run(tmp / "base", shift=0.1)
    third, _ = write_rich_run(tmp / "third", shift=0.2)
    single = _offline_run(tmp / "single", 40)
    big = _offline_run(tmp / "big", 20_000)
    empty = _offline_run(tmp / "empty", 0)
    return {
        "single run": write_report(single, tmp / "single.html"),
        "judged run": write_report(judged, tmp / "judged.html", data=data),
        "failing gate": write_report(single, tmp / "gate.html", fail_under={"recall@5": 0.9, "mrr": 0.8,
                                                                             "semantic_similarity": 0.95}),
        "20k rows": write_report(big, tmp / "big.html"),
        "two-run comparison": write_report(judged, tmp / "compare.html", data=data, baseline=base),
        "three-run comparison": write_report(judged, tmp / "compare3.html", data=data, compare_with=[base, third]),
        "empty run": write_report(empty, tmp / "empty.html"),
    }


@pytest.mark.parametrize("width", [390, 1280], ids=["phone", "desktop"])
@pytest.mark.parametrize("kind", ["single run", "judged run", "failing gate", "20k rows", "two-run comparison",
                                  "three-run comparison", "empty run"])
def test_no_sideways_scroll_and_no_tiny_text(browser: Any, reports: dict[str, Path], kind: str, width: int) -> None:
    context = browser.new_context(viewport={"width": width, "height": 900})
    try:
        page = context.new_page()
        errors: list[str] = []
        page.on("pageerror", lambda e: errors.append(str(e)))
        page.goto(reports[kind].as_uri())
        page.wait_for_selector("html[data-ready='1']", timeout=30_000)
        if page.locator("#sample-body tr.row").count():  # the expanded sample counts too
            page.click("#sample-body tr.row >> nth=0")
            page.wait_for_selector("tr.detail > td > div")
        got = page.evaluate(MEASURE)
        assert errors == []
        assert got["scroll"] <= got["inner"], f"{kind} at {width} px is {got['scroll']} px wide"
        assert got["smallest"][0] >= 11 - 1e-6, f"{kind} at {width} px: {got['smallest']}"
    finally:
        context.close()


def test_wide_tables_scroll_in_their_own_box_with_the_first_column_kept(browser: Any,
                                                                          reports: dict[str, Path]) -> None:
    context = browser.new_context(viewport={"width": 390, "height": 900})
    try:
        page = context.new_page()
        page.goto(reports["two-run comparison"].as_uri())
        page.wait_for_selector("html[data-ready='1']", timeout=30_000)
        box = page.evaluate("""() => { const t = document.querySelector('table.compare');
            const w = t.parentElement; return {cls: w.className, overflow: getComputedStyle(w).overflowX,
            tableW: t.scrollWidth, boxW: w.clientWidth,
            sticky: getComputedStyle(t.querySelector('tbody th, tbody td')).position}; }""")
        assert box["overflow"] == "auto" and box["tableW"] > box["boxW"]  # the table scrolls, not the page
        assert box["sticky"] == "sticky"  # the metric's name stays on screen beside its delta
    finally:
        context.close()
