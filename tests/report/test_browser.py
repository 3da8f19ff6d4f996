"""The report in a real headless Chromium: loads cleanly, sorts, filters, pages, expands, and never runs data.

Every test starts what it needs itself (run directories, the browser); see ``conftest.py``.
"""

from __future__ import annotations

import math
import time
from pathlib import Path
from typing import Any

import pytest

import ragmeter
from ragmeter.report import write_report

from .conftest import (
    N_SAMPLES,
    XSS_ANSWER,
    XSS_CONTEXT,
    XSS_QUERY,
    XSS_REASON,
    faith_score,
    ndcg_score,
    sample_id,
)


@pytest.fixture(scope="module")
def report(rich_run: tuple[Path, Path], tmp_path_factory: pytest.TempPathFactory) -> Path:
    run_dir, data = rich_run
    return write_report(run_dir, tmp_path_factory.mktemp("html") / "report.html", data=data)


def visible_ids(page: Any) -> list[str]:
    return page.eval_on_selector_all("#sample-body tr.row td.id", "tds => tds.map(t => t.textContent)")


def relevant_flags(items: Any) -> list[bool]:
    return items.evaluate_all("lis => lis.map(li => li.classList.contains('relevant'))")


def count_text(page: Any) -> str:
    return page.text_content("#count") or ""


def test_loads_without_console_errors_or_network(report: Path, open_report: Any) -> None:
    probe = open_report(report)
    page = probe.page
    assert probe.problems == []
    assert all(u.startswith("file:") for u in probe.requests), probe.requests
    assert page.title() == "ragmeter: run"
    assert count_text(page) == f"{N_SAMPLES} samples"
    assert page.locator("#sample-body tr.row").count() == 100  # first page of 150
    assert page.locator("svg.hist").count() == 2
    assert "95% CI [0.410, 0.550]" in (page.text_content("#metrics") or "")
    # the diagnosis (computed by default) heads the page, before the metric cards
    assert page.evaluate("() => document.querySelector('main > section').id") == "diagnosis"
    assert "rules checked" in (page.text_content("#diagnosis") or "")
    run_text = page.text_content("#run") or ""
    for expected in ("openai:gpt-4o-mini", "51,234", "Cache hits"):
        assert expected in run_text


def test_header_click_sorts_by_metric_desc_then_asc(report: Path, open_report: Any) -> None:
    page = open_report(report).page
    scored = [(ndcg_score(i), sample_id(i)) for i in range(N_SAMPLES) if ndcg_score(i) is not None]
    page.click("th[data-key='m:ndcg@5'] button")
    # ties keep input order in both directions; no-score rows go last
    desc = [sid for _, sid in sorted(scored, key=lambda t: -t[0])]
    assert visible_ids(page) == desc[:100]
    assert page.get_attribute("th[data-key='m:ndcg@5']", "aria-sort") == "descending"
    page.click("th[data-key='m:ndcg@5'] button")
    asc = [sid for _, sid in sorted(scored, key=lambda t: t[0])]
    assert visible_ids(page) == asc[:100]
    assert page.get_attribute("th[data-key='m:ndcg@5']", "aria-sort") == "ascending"
    page.click("#p-last")
    undefined = [sample_id(i) for i in range(N_SAMPLES) if ndcg_score(i) is None]
    assert visible_ids(page)[-len(undefined):] == undefined


def test_sort_by_id_column(report: Path, open_report: Any) -> None:
    page = open_report(report).page
    page.click("th[data-key='id'] button")
    ids = sorted((sample_id(i) for i in range(N_SAMPLES)), key=str)
    assert visible_ids(page) == ids[:100]


def test_filter_by_score_range(report: Path, open_report: Any) -> None:
    page = open_report(report).page
    page.select_option("#f-metric", "faithfulness")
    page.fill("#f-min", "0.2")
    page.fill("#f-max", "0.5")
    expected = [sample_id(i) for i in range(N_SAMPLES)
                if (f := faith_score(i)) is not None and 0.2 <= f <= 0.5]
    assert 0 < len(expected) < 100
    assert visible_ids(page) == expected
    assert count_text(page) == f"{len(expected)} of {N_SAMPLES} samples match"
    page.click("#f-reset")
    from playwright.sync_api import expect

    # expect() polls through Playwright's own selector engine; wait_for_function would evaluate a
    # string in the page, which the report's Content-Security-Policy (no 'unsafe-eval') refuses.
    expect(page.locator("#count")).to_have_text(f"{N_SAMPLES} samples")


def test_filter_errors_only(report: Path, open_report: Any) -> None:
    page = open_report(report).page
    page.check("#f-errors")
    expected = [sample_id(i) for i in range(N_SAMPLES) if faith_score(i) is None]
    assert len(expected) == 9
    assert visible_ids(page) == expected
    assert page.locator("#sample-body tr.row.has-err").count() == len(expected)


def test_pages_of_100(report: Path, open_report: Any) -> None:
    page = open_report(report).page
    assert page.text_content("#p-info") == "page 1 of 2 (rows 1–100)"
    page.click("#p-next")
    assert page.text_content("#p-info") == "page 2 of 2 (rows 101–150)"
    assert visible_ids(page) == [sample_id(i) for i in range(100, N_SAMPLES)]
    assert page.is_disabled("#p-next")


def test_row_expands_with_relevant_context_marked(report: Path, open_report: Any) -> None:
    page = open_report(report).page
    page.click("#sample-body tr.row[data-index='0']")
    detail = page.locator("#sample-body tr.detail")
    assert detail.count() == 1
    items = detail.locator("ol.contexts li")
    assert items.count() == 3
    assert relevant_flags(items) == [False, True, False]
    assert "relevant" in (items.nth(1).locator(".badge").text_content() or "")
    assert "context 2 of s000" in (items.nth(1).text_content() or "")
    text = detail.text_content() or ""
    for expected in ("question number 0", "answer 0", "reference 0", "2 of 3 claims supported"):
        assert expected in text
    # the claims list is a table with the verdicts marked
    assert detail.locator("td .v-no").first.text_content() == "unsupported"
    assert detail.locator("td .v-yes").count() == 2
    # the keyboard opens and closes it too
    page.focus("#sample-body tr.row[data-index='0']")
    page.keyboard.press("Enter")
    assert page.locator("#sample-body tr.detail").count() == 0


def test_errored_sample_shows_the_error(report: Path, open_report: Any) -> None:
    page = open_report(report).page
    page.click("#sample-body tr.row[data-index='3']")  # faith_score(3) is None: errored
    assert "JudgeTimeout: no answer within 30 s" in (page.text_content("#sample-body tr.detail") or "")


def test_script_in_the_data_never_runs_and_shows_as_text(report: Path, open_report: Any) -> None:
    probe = open_report(report)
    page = probe.page
    page.click("#sample-body tr.row[data-index='7']")
    detail = page.locator("#sample-body tr.detail")
    pres = detail.locator("pre.text").all_text_contents()
    assert XSS_QUERY in pres and XSS_ANSWER in pres
    assert XSS_CONTEXT in (detail.locator("ol.contexts li").nth(1).text_content() or "")
    assert XSS_REASON in (detail.text_content() or "")
    assert "<script>window.__pwned=4</script>" in (detail.text_content() or "")
    page.wait_for_timeout(200)  # give an injected onerror handler its chance to fire
    assert page.evaluate("typeof window.__pwned") == "undefined"
    assert page.title() == "ragmeter: run"
    assert page.locator("img").count() == 0
    assert page.locator("script").count() == 2  # the data block and the page's own script
    assert "tiny-qa <script>" in (page.text_content("header") or "")
    assert probe.problems == []


def test_comparison_report(rich_run: tuple[Path, Path], baseline_run: Path, tmp_path: Path,
                           open_report: Any) -> None:
    run_dir, data = rich_run
    out = write_report(run_dir, tmp_path / "compare.html", data=data, baseline=baseline_run)
    probe = open_report(out)
    page = probe.page
    assert probe.problems == []
    rows = page.locator("table.compare tbody tr")
    assert rows.count() == 2
    ndcg_row = rows.nth(0).locator("td").all_text_contents()
    assert ndcg_row[2].startswith("-0.0")  # candidate is lower: every score shifted by up to -0.1
    assert page.locator("table.compare tbody tr").nth(1).locator("td").nth(2).text_content() == "+0.000"
    # the Δ column sorts; the most negative change comes first in ascending order
    page.click("th[data-key='d:ndcg@5'] button")
    page.click("th[data-key='d:ndcg@5'] button")
    first = page.locator("#sample-body tr.row").first.locator("td.num").nth(1).text_content() or ""
    assert first.startswith("-0.1")
    # "changed most" links jump to the sample in the table, opened
    page.click("#comparison details summary >> nth=0")
    link = page.locator("a.jump").first
    sid = link.text_content()
    link.click()
    assert visible_ids(page) == [sid]
    assert page.locator("#sample-body tr.detail").count() == 1


def test_report_of_a_real_evaluate_run(tmp_path: Path, open_report: Any) -> None:
    rows = [
        {"id": "a", "query": "q a", "answer": "x", "relevant": ["d2"],
         "contexts": [{"id": "d1", "text": "one"}, {"id": "d2", "text": "two"}]},
        {"id": "b", "query": "q b", "answer": "y", "contexts": [{"id": "d3", "text": "three"}], "relevant": ["d3"]},
    ]
    data = tmp_path / "data.jsonl"
    data.write_text("".join(__import__("json").dumps(r) + "\n" for r in rows))
    ragmeter.evaluate(rows, ["ndcg@5", "mrr"], out_dir=str(tmp_path / "run"), run_info={"data": str(data)})
    out = write_report(tmp_path / "run", tmp_path / "r.html")  # data found through the run info
    probe = open_report(out)
    page = probe.page
    assert probe.problems == []
    page.click("#sample-body tr.row[data-index='0']")
    items = page.locator("ol.contexts li")
    assert relevant_flags(items) == [False, True]
    assert "matched by id" in (items.nth(1).text_content() or "")


def test_ten_thousand_samples_stay_usable(tmp_path: Path, open_report: Any) -> None:
    from ragmeter.results import RunWriter
    from ragmeter.types import MetricResult

    n = 10_000
    w = RunWriter(["ndcg@10", "mrr", "recall@10"], out_dir=tmp_path / "big")
    data_lines = []
    for i in range(n):
        det = {"relevance_from": "labels", "relevant_ranks": [1 + i % 5], "retrieved": 5,
               "matched_by": ["id" if k == i % 5 else None for k in range(5)]}
        w.add(f"q{i}", {m: MetricResult(name=m, score=(i * 7919 % 1000) / 1000, reason="relevant at rank(s) [3]",
                                        details=det, version="1") for m in ("ndcg@10", "mrr", "recall@10")})
        ctx = [{"id": f"q{i}-{k}", "text": f"passage {k} " + "lorem ipsum " * 25} for k in range(5)]
        data_lines.append(__import__("json").dumps({"id": f"q{i}", "query": f"query {i}", "answer": "an answer " * 10,
                                                     "contexts": ctx}))
    w.finish({"ragmeter_version": "0.1.0"})
    data = tmp_path / "big.jsonl"
    data.write_text("\n".join(data_lines) + "\n")
    t0 = time.perf_counter()
    out = write_report(tmp_path / "big", tmp_path / "big.html", data=data)
    build_s = time.perf_counter() - t0
    size_mb = out.stat().st_size / 1e6
    assert size_mb < 25, size_mb
    assert build_s < 30, build_s
    t0 = time.perf_counter()
    probe = open_report(out)
    load_s = time.perf_counter() - t0
    page = probe.page
    assert probe.problems == []
    assert load_s < 15, load_s
    assert page.locator("#sample-body tr.row").count() == 100
    # a run over the 2,000-sample default embeds a selection, and says so
    assert page.text_content("#p-info") == "page 1 of 20 (rows 1–100)"
    assert count_text(page) == "2,000 samples (of 10,000 in the run)"
    assert "Showing 2,000 of 10,000 samples" in (page.text_content("#samples-note") or "")
    t0 = time.perf_counter()
    page.click("th[data-key='m:mrr'] button")
    sort_s = time.perf_counter() - t0
    assert sort_s < 5, sort_s
    top = page.locator("#sample-body tr.row").first.locator("td.num").nth(1).text_content() or ""
    assert math.isclose(float(top[:5]), 0.999)
