"""Every kind of report at phone (390 px) and desktop (1280 px) width in a real headless Chromium:
the page never scrolls sideways (wide tables and plots scroll inside their own box) and no visible
text, SVG plot labels included, is rendered smaller than 11 px."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from .kinds import KINDS, build_reports

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

@pytest.fixture(scope="module")
def reports(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    return build_reports(tmp_path_factory.mktemp("responsive"))


@pytest.mark.parametrize("width", [390, 1280], ids=["phone", "desktop"])
@pytest.mark.parametrize("kind", list(KINDS))
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


@pytest.mark.parametrize(("kind", "table"), [("two-run comparison", "table.compare"),
                                             ("three-run comparison", "table.multi"),
                                             ("three-run comparison", "table.pairs")])
def test_wide_tables_scroll_in_their_own_box_with_the_first_column_kept(browser: Any, reports: dict[str, Path],
                                                                          kind: str, table: str) -> None:
    context = browser.new_context(viewport={"width": 390, "height": 900})
    try:
        page = context.new_page()
        page.goto(reports[kind].as_uri())
        page.wait_for_selector("html[data-ready='1']", timeout=30_000)
        box = page.evaluate("""(sel) => { const t = document.querySelector(sel);
            const w = t.parentElement; const cell = t.querySelector('tbody th, tbody td');
            const before = cell.getBoundingClientRect().left;
            w.scrollLeft = w.scrollWidth;
            return {cls: w.className, overflow: getComputedStyle(w).overflowX,
            tableW: t.scrollWidth, boxW: w.clientWidth, scrolled: w.scrollLeft,
            sticky: getComputedStyle(cell).position, moved: cell.getBoundingClientRect().left - before}; }""",
                            table)
        assert box["overflow"] == "auto" and box["tableW"] > box["boxW"]  # the table scrolls, not the page
        assert box["sticky"] == "sticky"  # the metric's name stays on screen beside its numbers
        assert box["scrolled"] > 0 and abs(box["moved"]) < 1, box  # scrolled sideways, the first column stays
    finally:
        context.close()


def test_the_report_of_an_evaluate_run_fits_a_phone(browser: Any, tmp_path: Path) -> None:
    """A run written by ``ragmeter.evaluate(out_dir=...)`` carries what the hand-made runs above do
    not: the run block's per-metric input fields, a nested list two levels deep."""
    import ragmeter
    from ragmeter.report import write_report

    root = Path(__file__).resolve().parents[2]
    ragmeter.evaluate(root / "examples" / "rag_samples.jsonl", ["recall@5", "mrr", "token_f1"],
                      out_dir=tmp_path / "out")
    html = write_report(tmp_path / "out", tmp_path / "report.html")
    context = browser.new_context(viewport={"width": 390, "height": 900})
    try:
        page = context.new_page()
        page.goto(Path(html).as_uri())
        page.wait_for_selector("html[data-ready='1']", timeout=30_000)
        got = page.evaluate(MEASURE)
        assert got["scroll"] <= got["inner"], f"the page is {got['scroll']} px wide at 390 px"
        assert got["smallest"][0] >= 11 - 1e-6, got["smallest"]
    finally:
        context.close()
