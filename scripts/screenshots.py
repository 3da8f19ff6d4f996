"""Screenshots of the HTML report for docs/report.md, at desktop (1280 px) and phone (390 px) widths.

    python scripts/screenshots.py                 # writes docs/img/report-*.png
    python scripts/screenshots.py --out /tmp/shots --keep /tmp/demo-run

It evaluates the bundled ``examples/rag_samples.jsonl`` (20 samples) with retrieval, lexical and
judged metrics — the judge is the rule-based loopback server the tests use
(``tests/judges/fake_server.py`` with ``tests/metrics/generation/rules.py``) on 127.0.0.1, so no
network and no model are needed — with a quality gate, writes the report, and photographs it in
headless Chromium (Debian's ``chromium``, driven by Playwright: the same tooling as
``tests/report/test_layout.py``): the top of the page, a sample expanded and its per-claim
verdicts, at both widths.
"""

from __future__ import annotations

import argparse
import shutil
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))  # tests.judges.fake_server, tests.metrics.generation.rules

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


def shoot(report: Path, out: Path) -> list[Path]:
    """Photograph ``report`` at each of :data:`VIEWPORTS`; return the PNG paths."""
    from playwright.sync_api import sync_playwright

    exe = shutil.which("chromium") or "/usr/bin/chromium"
    written: list[Path] = []
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=exe, headless=True, args=["--no-sandbox", "--disable-gpu"])
        try:
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
        finally:
            browser.close()
    return written


def main() -> None:
    """Parse the options, make the run and the report, take the screenshots."""
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", type=Path, default=ROOT / "docs" / "img", help="folder for the PNG files")
    ap.add_argument("--keep", type=Path, default=None, help="keep the run directory and report here")
    args = ap.parse_args()
    from ragmeter.report import write_report

    args.out.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="ragmeter-shots-") as tmp:
        run_dir = make_run((args.keep or Path(tmp)) / "run")
        report = write_report(run_dir, run_dir / "report.html")
        for path in shoot(report, args.out):
            print(path)


if __name__ == "__main__":
    main()
