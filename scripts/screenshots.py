"""Screenshots of the HTML report for docs/report.md, at desktop (1280 px) and phone (390 px) widths.

    python scripts/screenshots.py                 # writes docs/img/report-*.png
    python scripts/screenshots.py --out /tmp/shots --keep /tmp/demo-run

Two sets, photographed in headless Chromium (Debian's ``chromium``, driven by Playwright: the same
tooling as the browser tests in ``tests/report/``), no network and no model needed:

* **Every kind of report** (``report-<viewport>-<kind>.png``, the first screen): the seven pages
  the browser tests check (``tests/report/kinds.py``'s ``build_reports``: a single run, a judged
  run, a failing gate, 20,000 rows, a two-run and a three-run comparison, an empty run), built
  from hand-written run directories without their hostile test texts; and the three-run
  comparison's section whole (``report-<viewport>-compare3-section.png``).
* **A judged run of the bundled example data** (``report-<viewport>-top/sample/verdicts.png``):
  ``examples/rag_samples.jsonl`` (20 samples) evaluated with retrieval, lexical and judged metrics
  against the rule-based loopback judge the tests use (``tests/judges/fake_server.py`` with
  ``tests/metrics/generation/rules.py``, on 127.0.0.1) with a quality gate: the top of the page, a
  sample expanded and its per-claim verdicts.
"""

from __future__ import annotations

import argparse
import shutil
import sys
import tempfile
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT / "src"), str(ROOT)]  # this checkout's ragmeter; tests.report.kinds, tests.judges...

#: The viewports photographed: name -> (width, height).
VIEWPORTS = {"desktop": (1280, 900), "phone": (390, 844)}
METRICS = ["recall@5", "ndcg@5", "mrr", "precision@5", "context_recall", "faithfulness", "hallucination_rate",
           "answer_relevancy", "token_f1", "rouge_l"]
GATE = {"recall@5": 0.8, "faithfulness": 0.8, "hallucination_rate": 0.2}


def make_run(out_dir: Path) -> Path:
    """Evaluate the bundled example data into ``out_dir`` against the loopback judge; return ``out_dir``."""
    from tests.judges.fake_server import FakeLLMServer
    from tests.metrics.generation.rules import judge_rule

    import ragmeter
    from ragmeter.io import read_samples
    from ragmeter.judges import from_spec

    data = ROOT / "examples" / "rag_samples.jsonl"
    server = FakeLLMServer(judge_rule).start()
    try:
        judge = from_spec(f"openai:fake-model@{server.url}", cache=False)
        ragmeter.evaluate(list(read_samples(data)), METRICS, judge=judge, out_dir=str(out_dir),
                          run_info={"data": str(data), "dataset": "examples/rag_samples.jsonl",
                                    "gate": {"fail_under": GATE, "statistic": "mean"}})
    finally:
        server.stop()
    return out_dir


def shoot_kinds(reports: dict[str, Path], out: Path, browser: Any) -> list[Path]:
    """Photograph the first screen of each report of ``reports`` (kind -> HTML file) at each of
    :data:`VIEWPORTS`, and the three-run comparison's section whole; return the PNG paths."""
    from tests.report.kinds import KINDS

    written: list[Path] = []
    for name, (w, h) in VIEWPORTS.items():
        page = browser.new_page(viewport={"width": w, "height": h}, device_scale_factor=1)
        for kind, report in reports.items():
            page.goto(report.as_uri())
            page.wait_for_selector("html[data-ready='1']", timeout=60_000)
            path = out / f"report-{name}-{KINDS[kind]}.png"
            page.screenshot(path=str(path))
            written.append(path)
            if kind == "three-run comparison":
                path = out / f"report-{name}-{KINDS[kind]}-section.png"
                page.locator("#multi-comparison").screenshot(path=str(path))
                written.append(path)
        page.close()
    return written


def shoot_example(report: Path, out: Path, browser: Any) -> list[Path]:
    """Photograph the example run's ``report`` at each of :data:`VIEWPORTS` (top, a sample, its
    verdicts); return the PNG paths."""
    written: list[Path] = []
    for name, (w, h) in VIEWPORTS.items():
        page = browser.new_page(viewport={"width": w, "height": h}, device_scale_factor=1)
        page.goto(report.as_uri())
        page.wait_for_selector("html[data-ready='1']")
        top = out / f"report-{name}-top.png"
        page.screenshot(path=str(top))
        # the worst faithfulness sample, expanded: its per-claim verdicts
        page.click("th[data-key='m:faithfulness'] button")
        page.click("th[data-key='m:faithfulness'] button")
        page.click("#sample-body tr.row >> nth=0")
        panel = page.locator("tr.detail .detail-panel")
        panel.scroll_into_view_if_needed()
        page.evaluate("() => window.scrollBy(0, -60)")
        sample = out / f"report-{name}-sample.png"
        page.screenshot(path=str(sample), full_page=False)
        # further down the same panel: the per-metric results with the per-claim verdicts
        page.locator("table.mres > tbody > tr", has_text="faithfulness").first.scroll_into_view_if_needed()
        page.evaluate("() => window.scrollBy(0, 120)")
        verdicts = out / f"report-{name}-verdicts.png"
        page.screenshot(path=str(verdicts), full_page=False)
        page.close()
        written += [top, sample, verdicts]
    return written


def main() -> None:
    """Parse the options, make the run and the report, take the screenshots."""
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", type=Path, default=ROOT / "docs" / "img", help="folder for the PNG files")
    ap.add_argument("--keep", type=Path, default=None, help="keep the run directory and report here")
    args = ap.parse_args()
    from playwright.sync_api import sync_playwright
    from tests.report.kinds import build_reports

    from ragmeter.report import write_report

    args.out.mkdir(parents=True, exist_ok=True)
    exe = shutil.which("chromium") or "/usr/bin/chromium"
    with tempfile.TemporaryDirectory(prefix="ragmeter-shots-") as tmp:
        work = args.keep or Path(tmp)
        run_dir = make_run(work / "run")
        example = write_report(run_dir, run_dir / "report.html")
        (work / "kinds").mkdir(parents=True, exist_ok=True)
        reports = build_reports(work / "kinds", hostile=False)
        with sync_playwright() as p:
            browser = p.chromium.launch(executable_path=exe, headless=True, args=["--no-sandbox", "--disable-gpu"])
            try:
                for path in shoot_example(example, args.out, browser) + shoot_kinds(reports, args.out, browser):
                    print(path)
            finally:
                browser.close()


if __name__ == "__main__":
    main()
