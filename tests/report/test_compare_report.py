"""The comparison report: forest plot and scatter geometry, bounded points, baseline contexts, end to end."""

from __future__ import annotations

import json
import re
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from ragmeter.report import build_report, write_report
from ragmeter.report._compare import (
    LABEL_W,
    ROW_H,
    TOP,
    VALUE_W,
    add_baseline_texts,
    forest_svg,
    sample_points,
    scatter_svg,
)
from ragmeter.report._data import MetricComparison

from .conftest import N_SAMPLES, write_rich_run

SVG = "{http://www.w3.org/2000/svg}"
REPO = Path(__file__).resolve().parents[2]
#: The installed console script (the CLI as users run it; PYTHONPATH decides which source it runs).
EXE = Path(sys.executable).parent / "ragmeter"


def _parse(svg: str) -> ET.Element:
    # the page's SVG is inline HTML (no xmlns); give it one so xml.etree checks it is well-formed XML
    return ET.fromstring(svg.replace("<svg ", '<svg xmlns="http://www.w3.org/2000/svg" ', 1))


def _mc(metric: str, diff: float | None, ci: tuple[float, float] | None, verdict: str = "") -> MetricComparison:
    return MetricComparison(metric, 10, 0.5, None if diff is None else 0.5 + diff, diff, ci, 0.01, "t", [],
                            0.02, verdict)


def test_forest_whiskers_at_hand_computed_coordinates():
    comps = [_mc("recall@5", 0.1, (0.05, 0.2), "candidate better"), _mc("mrr", -0.1, (-0.3, 0.1)),
             _mc("faithfulness", None, None)]
    root = _parse(forest_svg(comps, width=640))
    assert (LABEL_W, VALUE_W, TOP, ROW_H) == (180, 190, 28, 26)  # the geometry the numbers below assume
    rows = root.findall(f"{SVG}g")
    assert [g.get("data-metric") for g in rows] == ["recall@5", "mrr", "faithfulness"]  # one row per metric
    # D = max |value| = 0.3; plot from x = 180 to 640 - 190 = 450 (270 wide); x(v) = 180 + (v + .3) / .6 * 270
    # row i centred at y = 28 + 26 i + 13
    w0 = rows[0].find(f"{SVG}line[@class='whisker']")
    assert [float(w0.get(k)) for k in ("x1", "y1", "x2", "y2")] == pytest.approx([337.5, 41, 405, 41])
    caps = [[float(c.get(k)) for k in ("x1", "x2", "y1", "y2")] for c in rows[0].findall(f"{SVG}line[@class='cap']")]
    assert caps[0] == pytest.approx([337.5, 337.5, 36, 46]) and caps[1] == pytest.approx([405, 405, 36, 46])
    dot0 = rows[0].find(f"{SVG}circle")
    assert (float(dot0.get("cx")), float(dot0.get("cy"))) == pytest.approx((360, 41))
    w1 = rows[1].find(f"{SVG}line[@class='whisker']")
    assert [float(w1.get(k)) for k in ("x1", "y1", "x2", "y2")] == pytest.approx([180, 67, 360, 67])
    assert float(rows[1].find(f"{SVG}circle").get("cx")) == pytest.approx(270)
    zero = root.find(f"{SVG}line[@class='zero']")
    assert float(zero.get("x1")) == pytest.approx(315)
    assert "good" in rows[0].get("class") and "neutral" in rows[1].get("class")
    assert rows[2].find(f"{SVG}line") is None and "no paired scores" in "".join(rows[2].itertext())


def test_scatter_bounds_points_deterministically_and_says_so():
    n = 5000
    base = np.full(n, 0.5)
    run = np.concatenate([np.full(3000, 0.8), np.full(1500, 0.2), np.full(500, 0.5)])
    ids = [f"s{i}" for i in range(n)]
    html = scatter_svg("ndcg@5", ids, base, run, max_points=1000, seed=3)
    assert html == scatter_svg("ndcg@5", ids, base, run, max_points=1000, seed=3)  # same inputs, same page
    svg = re.search(r"<svg.*</svg>", html, re.S).group(0)
    root = _parse(svg)
    assert len(root.findall(f"{SVG}circle")) == 1000
    # the counts are over every pair, not over the points drawn
    assert "5,000 pairs: run higher on 3,000, lower on 1,500, equal on 500." in html
    assert "Showing 1,000 of 5,000 pairs (a seeded random sample, seed 3)." in html
    pts = sample_points(n, 1000, seed=3)
    assert len(set(pts.tolist())) == 1000 and np.all(np.diff(pts) > 0)
    # a point sits at (30 + b * 182, 8 + 182 - r * 182): b = .5, r = .8 -> (121, 44.4)
    small = _parse(re.search(r"<svg.*</svg>", scatter_svg("m", ["a"], np.array([0.5]), np.array([0.8])), re.S)
                   .group(0))
    c = small.find(f"{SVG}circle")
    assert (float(c.get("cx")), float(c.get("cy"))) == pytest.approx((121, 44.4))
    assert "Showing" not in scatter_svg("m", ["a"], np.array([0.5]), np.array([0.8]))


def test_baseline_texts_added_only_where_they_differ():
    payload = {"samples": [{"id": "a", "a": "x", "c": [["c1", "t1", None]]},
                           {"id": "b", "a": "y", "c": [["c1", "t1", None]]},
                           {"id": "c", "a": "z", "c": []}]}
    base = {"a": {"a": "x", "c": [["c1", "t1", None]]}, "b": {"a": "other", "c": [["c9", "t9", float("nan")]]}}
    add_baseline_texts(payload, base, clip_chars=None)
    a, b, c = payload["samples"]
    assert a.get("bsame") is True and "bc" not in a and "ba" not in a
    assert b["bc"] == [["c9", "t9", None]] and b["ba"] == "other"  # NaN score made JSON-safe
    assert not {"bc", "ba", "bsame"} & set(c)
    assert payload["baseText"] is True


@pytest.fixture(scope="module")
def changed_baseline(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path, Path]:
    """(run dir, run data, baseline dir): the baseline's data has other contexts on even samples and
    names its data file in its run info; every baseline ndcg@5 is 0.1 higher."""
    run_dir, data = write_rich_run(tmp_path_factory.mktemp("cmp-run"))
    base_dir, base_data = write_rich_run(tmp_path_factory.mktemp("cmp-base"), shift=0.1)
    rows = [json.loads(line) for line in base_data.read_text().splitlines()]
    for i, row in enumerate(rows):
        if i % 2 == 0:
            row["contexts"] = [{"id": f"old-{i}", "text": f"the baseline's context for sample {i}"}]
    base_data.write_text("".join(json.dumps(r) + "\n" for r in rows))
    summary = json.loads((base_dir / "summary.json").read_text())
    summary["run"]["data"] = str(base_data)
    (base_dir / "summary.json").write_text(json.dumps(summary))
    return run_dir, data, base_dir


def _section_svgs(page: str) -> list[ET.Element]:
    section = re.search(r'<section id="comparison-plots">.*?</section>', page, re.S).group(0)
    return [_parse(s) for s in re.findall(r"<svg.*?</svg>", section, re.S)]


def test_report_has_forest_and_scatters_and_baseline_contexts(changed_baseline):
    run_dir, data, base_dir = changed_baseline
    page = build_report(run_dir, data, base_dir)
    svgs = _section_svgs(page)
    forest, scatters = svgs[0], svgs[1:]
    assert [g.get("data-metric") for g in forest.findall(f"{SVG}g")] == ["ndcg@5", "faithfulness"]
    assert "bad" in forest.findall(f"{SVG}g")[0].get("class")  # the run is worse on ndcg@5
    assert len(scatters) == 2
    payload = json.loads(re.search(r'id="ragmeter-data">(.*?)</script>', page, re.S).group(1))
    by_id = {s["id"]: s for s in payload["samples"]}
    assert payload["baseText"] is True
    assert by_id["s000"]["bc"] == [["old-0", "the baseline's context for sample 0", None]]
    assert by_id["s001"].get("bsame") is True and "bc" not in by_id["s001"]
    assert len(payload["samples"]) == N_SAMPLES


def test_browser_baseline_contexts_beside_the_runs(changed_baseline, tmp_path: Path, browser: Any) -> None:
    run_dir, data, base_dir = changed_baseline
    out = write_report(run_dir, tmp_path / "cmp.html", data=data, baseline=base_dir)
    for width, side_by_side in ((1280, True), (390, False)):
        ctx = browser.new_context(viewport={"width": width, "height": 900})
        try:
            page = ctx.new_page()
            errors: list[str] = []
            page.on("pageerror", lambda e, errors=errors: errors.append(str(e)))
            page.goto(out.as_uri())
            page.wait_for_selector("html[data-ready='1']", timeout=15_000)
            assert page.locator("svg.forest g.forest-row").count() == 2
            page.locator("#sample-body tr.row").first.click()  # s000: baseline contexts differ
            run_ctx = page.locator("tr.detail ol.contexts").first
            base_field = page.locator("tr.detail .field.baseline")
            assert "Baseline contexts (1 retrieved)" in (base_field.text_content() or "")
            assert "the baseline's context for sample 0" in (base_field.text_content() or "")
            a, b = run_ctx.bounding_box(), base_field.bounding_box()
            if side_by_side:
                assert b["x"] > a["x"] + a["width"] - 1 and abs(b["y"] - a["y"]) < 60
            else:
                assert b["y"] > a["y"] + a["height"] - 1
            page.locator("#sample-body tr.row").first.click()  # close s000
            page.locator("#sample-body tr.row").nth(1).click()  # s001: the same contexts
            assert "the same as this run's" in (page.locator("tr.detail .field.baseline").text_content() or "")
            assert errors == []
        finally:
            ctx.close()


def _eval(data: Path, out: Path) -> None:
    assert EXE.is_file(), f"the ragmeter console script is not installed next to {sys.executable}"
    res = subprocess.run([str(EXE), "eval", str(data), "-o", str(out), "--preset",
                          "retrieval", "-q", "--no-report"], capture_output=True, text=True, timeout=300)
    assert res.returncode == 0, res.stderr


def test_end_to_end_cli_on_the_bundled_examples(tmp_path: Path):
    """Three real runs: the bundled data with its relevant contexts removed (a bad retriever), the
    bundled data, and the first again; `ragmeter compare` marks the second, not the third,
    and `ragmeter report BASE RUN` draws one forest row per metric."""
    src = REPO / "examples" / "rag_samples.jsonl"
    rows = [json.loads(line) for line in src.read_text().splitlines() if line.strip()]
    bad = tmp_path / "bad.jsonl"
    with open(bad, "w") as fh:
        for r in rows:
            rel = set(r.get("relevant") or [])
            r["contexts"] = [c for c in r["contexts"] if not (isinstance(c, dict) and c.get("id") in rel)]
            fh.write(json.dumps(r) + "\n")
    runs = [tmp_path / n for n in ("bad", "good", "same")]
    _eval(bad, runs[0])
    _eval(src, runs[1])
    _eval(bad, runs[2])  # the baseline's data again: equal to it
    res = subprocess.run([str(EXE), "compare", *map(str, runs), "-m", "hit_rate@5",
                          "-m", "mrr", "--format", "json", "--latex", str(tmp_path / "t.tex")],
                         capture_output=True, text=True, timeout=300)
    assert res.returncode == 0, res.stderr
    table = json.loads(res.stdout)["table"]
    assert table[1]["metrics"]["hit_rate@5"]["mark"] == "better"
    assert table[1]["metrics"]["mrr"]["mark"] == "better"
    assert table[2]["metrics"]["hit_rate@5"]["mark"] is None and table[2]["metrics"]["mrr"]["mark"] is None
    tex = (tmp_path / "t.tex").read_text()
    assert r"\begin{tabular}{lrr}" in tex and tex.count(r"\\") == 4  # header + 3 runs
    res = subprocess.run([str(EXE), "report", str(runs[0]), str(runs[1]), "-o",
                          str(tmp_path / "r.html")], capture_output=True, text=True, timeout=300)
    assert res.returncode == 0, res.stderr
    page = (tmp_path / "r.html").read_text()
    metrics = list(json.loads((runs[1] / "summary.json").read_text())["metrics"])
    forest = _section_svgs(page)[0]
    assert [g.get("data-metric") for g in forest.findall(f"{SVG}g")] == metrics
    assert "bad" not in [g.get("class").split()[-1] for g in forest.findall(f"{SVG}g")]
    payload = json.loads(re.search(r'id="ragmeter-data">(.*?)</script>', page, re.S).group(1))
    first = next(s for s in payload["samples"] if s["id"] == rows[0]["id"])
    assert payload["baseText"] is True  # found through the baseline's run info
    assert [c[0] for c in first["bc"]] == [c["id"] for c in rows[0]["contexts"]]  # the bad run's contexts
    assert len(first["bc"]) < len(first["c"])


def _no_full_records(monkeypatch) -> None:
    """Make every way of holding a run's full records fail the test (the comparison works on
    the score columns; only the embedded samples' records are read, one line each)."""
    from ragmeter.report._data import Run
    from ragmeter.results import RunResult

    def refuse(*_a: Any, **_k: Any) -> Any:
        raise AssertionError("a comparison loaded a run's full records")

    monkeypatch.setattr(Run, "records", property(refuse))
    monkeypatch.setattr(RunResult, "load", classmethod(refuse))


def test_comparison_never_holds_full_records(changed_baseline, monkeypatch):
    run_dir, data, base_dir = changed_baseline
    expected = build_report(run_dir, data, base_dir)  # before the guard: the same page must come out
    _no_full_records(monkeypatch)
    page = build_report(run_dir, data, base_dir)
    assert page == expected


def test_columns_compare_as_the_full_records_did(changed_baseline):
    # the statistics from Run.to_result() equal those from RunResult.load (the records path)
    from ragmeter.report._data import compare_runs, load_run
    from ragmeter.results import RunResult

    run_dir, _, base_dir = changed_baseline
    base, run = load_run(base_dir), load_run(run_dir)
    by_columns = compare_runs(base, run, ["ndcg@5", "faithfulness"], results=(base.to_result(), run.to_result()))
    by_records = compare_runs(base, run, ["ndcg@5", "faithfulness"],
                              results=(RunResult.load(base_dir), RunResult.load(run_dir)))
    assert by_columns == by_records
    assert by_columns[0].n == N_SAMPLES - 12 and by_columns[0].diff < 0


def test_compare_cli_uses_the_columns(changed_baseline, monkeypatch):
    from click.testing import CliRunner

    from ragmeter.cli import main
    from ragmeter.stats import compare_many

    run_dir, _, base_dir = changed_baseline
    # what the command printed before the fix: ragmeter.stats on the paths (RunResult.load, full records)
    before = compare_many([base_dir, run_dir], labels=[str(base_dir), str(run_dir)]).comparisons[0].to_json()
    _no_full_records(monkeypatch)
    after = CliRunner().invoke(main, ["compare", str(base_dir), str(run_dir), "--format", "json"],
                               catch_exceptions=False)
    assert after.exit_code == 0, after.output
    doc = json.loads(after.stdout)
    assert doc == json.loads(before)
    assert doc["a"] == str(base_dir) and doc["b"] == str(run_dir)  # labels: the paths, as before
