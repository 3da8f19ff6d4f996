"""The report's pure parts, with hand-computed values: binning, escaping, JSON embedding, CSP, payload, stats."""

from __future__ import annotations

import base64
import hashlib
import json
import re
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner

from ragmeter.cli import main
from ragmeter.errors import InvalidParameterError
from ragmeter.report import build_report, write_report
from ragmeter.report._data import (
    Run,
    build_payload,
    changed_samples,
    clip_text,
    compare_runs,
    find_data_path,
    histogram,
    histogram_range,
    load_run,
    sanitize,
)
from ragmeter.report._html import csp_hash, embed_json, escape_html, fmt_p, render_diagnosis, svg_histogram

from .conftest import N_SAMPLES, XSS_ANSWER, write_rich_run

# ---- histogram ----------------------------------------------------------------------------------------


def test_histogram_unit_interval_edges() -> None:
    # width 0.1: 0.0 and 0.05 -> bin 0; 0.1 -> bin 1; 0.95 -> bin 9; 1.0 (= hi) -> last bin; NaN left out
    assert histogram([0.0, 0.05, 0.1, 0.95, 1.0, float("nan")], bins=10) == [2, 1, 0, 0, 0, 0, 0, 0, 0, 2]


def test_histogram_custom_range_clamps_outliers() -> None:
    # [0, 2] in 4 bins of 0.5: -1 clamps to bin 0; 0.5 -> 1; 1.0 -> 2; 1.99 -> 3; 3 clamps to bin 3
    assert histogram([-1.0, 0.5, 1.0, 1.99, 3.0], bins=4, lo=0.0, hi=2.0) == [1, 1, 1, 2]


def test_histogram_degenerate_range_and_bad_bins() -> None:
    assert histogram([5.0, 5.0], bins=3, lo=5.0, hi=5.0) == [2, 0, 0]
    assert histogram([], bins=2) == [0, 0]
    with pytest.raises(InvalidParameterError, match="bins"):
        histogram([0.5], bins=0)


def test_histogram_range() -> None:
    assert histogram_range(np.array([0.2, np.nan, 1.0])) == (0.0, 1.0)
    assert histogram_range(np.array([np.nan])) == (0.0, 1.0)
    assert histogram_range(np.array([0.5, 3.0, -1.0])) == (-1.0, 3.0)


def test_svg_histogram_has_one_bar_per_bin_and_no_style_attribute() -> None:
    svg = svg_histogram([3, 0, 1], 0.0, 1.0, label='a "b" <c>')
    assert svg.count('<rect class="bar"') == 3
    assert 'height="0.0"' in svg  # the empty bin
    assert "style=" not in svg  # the CSP forbids style attributes
    assert 'aria-label="a &quot;b&quot; &lt;c&gt;"' in svg
    assert "<title>0.33–0.67: 0</title>" in svg


# ---- escaping ----------------------------------------------------------------------------------------


def test_escape_html_hand_values() -> None:
    assert escape_html("<script>alert(1)</script>") == "&lt;script&gt;alert(1)&lt;/script&gt;"
    assert escape_html('a & "b" \'c\'') == "a &amp; &quot;b&quot; &#x27;c&#x27;"
    assert escape_html(None) == ""
    assert escape_html(0.5) == "0.5"


def test_embed_json_hand_value() -> None:
    assert embed_json({"a": "</script>&"}) == '{"a":"\\u003c/script\\u003e\\u0026"}'
    assert embed_json(["\u2028\u2029"]) == '["\\u2028\\u2029"]'


@pytest.mark.parametrize("text", [
    "</script><script>alert(1)</script>", "<!-- <script>", "</SCRIPT >", "a\u2028b\u2029c", "&lt;&amp;",
    "quote \" backslash \\ é ü 漢字 \U0001F600",
])
def test_embed_json_round_trips_and_cannot_close_the_element(text: str) -> None:
    embedded = embed_json({"t": text, "n": [1, 2.5, None, True]})
    assert json.loads(embedded) == {"t": text, "n": [1, 2.5, None, True]}
    for forbidden in ("<", ">", "&", "\u2028", "\u2029"):
        assert forbidden not in embedded


def test_embed_json_refuses_nan_and_sanitize_removes_it() -> None:
    with pytest.raises(ValueError):
        embed_json({"x": float("nan")})
    assert sanitize({"x": float("nan"), "y": [float("inf"), 1.0], 3: "z"}) == {"x": None, "y": [None, 1.0], "3": "z"}


def test_csp_hash_of_known_input() -> None:
    # sha256("") = 47DEQpj8HBSa+/TImW+5JCeuQeRkm5NMpJWZG3hSuFU= (base64), the well-known value
    assert csp_hash("") == "'sha256-47DEQpj8HBSa+/TImW+5JCeuQeRkm5NMpJWZG3hSuFU='"


def test_clip_text() -> None:
    assert clip_text("abcdef", 3) == "abc … [cut: 6 characters in all]"
    assert clip_text("abc", 3) == "abc"
    assert clip_text("abcdef", None) == "abcdef"
    assert clip_text(None, 3) is None


def test_fmt_p() -> None:
    assert fmt_p(0.04321) == "0.0432"
    assert fmt_p(0.00001) == "<0.0001"
    assert fmt_p(None) == "—"


# ---- the page as a whole -----------------------------------------------------------------------------


@pytest.fixture(scope="module")
def page_html(tmp_path_factory: pytest.TempPathFactory) -> str:
    run_dir, data = write_rich_run(tmp_path_factory.mktemp("pure"))
    return build_report(run_dir, data=data)


def test_page_csp_allows_exactly_its_own_script_and_style(page_html: str) -> None:
    csp = re.search(r'http-equiv="Content-Security-Policy" content="([^"]+)"', page_html)
    assert csp is not None
    policy = csp.group(1).replace("&#x27;", "'")
    assert policy.startswith("default-src 'none';")
    scripts = re.findall(r"<script>(.*?)</script>", page_html, flags=re.S)
    styles = re.findall(r"<style>(.*?)</style>", page_html, flags=re.S)
    assert len(scripts) == 1 and len(styles) == 1
    digest = base64.b64encode(hashlib.sha256(scripts[0].encode()).digest()).decode()
    assert f"script-src 'sha256-{digest}'" in policy
    digest = base64.b64encode(hashlib.sha256(styles[0].encode()).digest()).decode()
    assert f"style-src 'sha256-{digest}'" in policy
    assert "unsafe-inline" not in policy and "http" not in policy


def test_page_embeds_the_data_safely(page_html: str) -> None:
    blocks = re.findall(r'<script type="application/json" id="ragmeter-data">(.*?)</script>', page_html, flags=re.S)
    assert len(blocks) == 1
    data = json.loads(blocks[0])
    assert len(data["samples"]) == N_SAMPLES
    assert data["samples"][7]["a"] == XSS_ANSWER
    assert "<script>window.__pwned" not in page_html  # nowhere in the page unescaped
    assert "style=" not in page_html
    assert "tiny-qa &lt;script&gt;" in page_html  # the dataset name, escaped in the header


def test_page_has_no_external_reference(page_html: str) -> None:
    assert not re.search(r"(src|href)=\"(https?:)?//", page_html)
    assert "@import" not in page_html and "url(" not in page_html


# ---- payload -----------------------------------------------------------------------------------------


def _run(records: list[dict], metrics: list[str], path: Path = Path("r")) -> Run:
    return Run(path, {"metrics": {m: {} for m in metrics}, "run": {}}, records)


def _rec(sid: str, **scores: float | None) -> dict:
    return {"id": sid, "metrics": {m: {"score": s, "reason": "", "error": None, "details": {}, "version": "1"}
                                   for m, s in scores.items()}}


def test_payload_stores_shared_details_once() -> None:
    det = {"relevant_ranks": [2], "retrieved": 3}
    rec = {"id": "a", "metrics": {
        "m1": {"score": 0.5, "reason": "r", "error": None, "details": det, "version": "1"},
        "m2": {"score": float("nan"), "reason": "", "error": {"type": "E", "message": "x"}, "details": det},
        "m3": {"score": 1.0, "reason": "", "error": None, "details": {"claims": []}, "version": "1"},
    }}
    p = build_payload(_run([rec], ["m1", "m2", "m3"]), {"a": {"q": "Q", "a": None, "r": None, "c": [["c1", "t", 0.5]]}})
    s = p["samples"][0]
    assert s["d"] == [det, {"claims": []}]
    assert [s["m"][m]["d"] for m in ("m1", "m2", "m3")] == [0, 0, 1]
    assert s["m"]["m2"]["s"] is None and s["x"] is True
    assert s["c"] == [["c1", "t", 0.5]] and s["q"] == "Q"
    assert p["hasText"] is True and p["compare"] is False


def test_payload_is_json_safe_with_nan_anywhere() -> None:
    rec = {"id": "a", "metrics": {"m": {"score": float("nan"), "reason": "", "details": {"w": [float("inf"), 1.0]},
                                        "error": {"type": "E", "message": "m", "extra": float("nan")}}}}
    p = build_payload(_run([rec], ["m"]), {"a": {"q": "", "a": None, "r": None, "c": [["c", "t", float("nan")]]}})
    back = json.loads(embed_json(p))["samples"][0]
    assert back["m"]["m"]["s"] is None and back["d"] == [{"w": [None, 1.0]}]
    assert back["m"]["m"]["e"]["extra"] is None and back["c"] == [["c", "t", None]]


def test_payload_without_texts_and_with_baseline() -> None:
    cand = _run([_rec("a", m=0.75), _rec("b", m=None)], ["m"])
    base = _run([_rec("b", m=0.5), _rec("a", m=0.25)], ["m"])
    p = build_payload(cand, None, baseline=base)
    assert p["hasText"] is False and "q" not in p["samples"][0]
    assert [s["b"]["m"] for s in p["samples"]] == [0.25, 0.5]


# ---- comparison statistics ---------------------------------------------------------------------------


def test_changed_samples_hand_values() -> None:
    base = _run([_rec("1", m=0.5), _rec("2", m=0.5), _rec("3", m=0.5), _rec("4", m=None)], ["m"])
    cand = _run([_rec("3", m=0.5), _rec("2", m=0.7), _rec("1", m=0.6), _rec("4", m=1.0)], ["m"])
    # sample 4 has no baseline score, sample 3 did not change: 2 (+0.2) then 1 (+0.1)
    assert changed_samples(base, cand, ["m"]) == {"m": [("2", 0.5, 0.7), ("1", 0.5, 0.6)]}
    assert changed_samples(base, cand, ["m"], top=1) == {"m": [("2", 0.5, 0.7)]}


def test_compare_runs_uses_ragmeter_stats(tmp_path: Path) -> None:
    cand_dir, _ = write_rich_run(tmp_path / "c")
    base_dir, _ = write_rich_run(tmp_path / "b", shift=0.1)
    comps = compare_runs(load_run(base_dir), load_run(cand_dir), ["ndcg@5", "faithfulness"])
    ndcg = comps[0]
    assert ndcg.metric == "ndcg@5" and ndcg.n == N_SAMPLES - 12
    assert ndcg.diff is not None and -0.1 <= ndcg.diff < -0.08
    assert ndcg.ci is not None and ndcg.ci[1] < 0
    assert ndcg.p_value is not None and ndcg.p_value < 0.01
    assert ndcg.verdict == "baseline better"
    assert "ragmeter.stats" in ndcg.method
    assert comps[1].diff == 0.0 and comps[1].changed == []


# ---- loading and the CLI -----------------------------------------------------------------------------


def test_load_run_errors_say_what_is_missing(tmp_path: Path) -> None:
    with pytest.raises(InvalidParameterError, match=r"summary\.json is missing"):
        load_run(tmp_path)
    (tmp_path / "summary.json").write_text("{")
    (tmp_path / "results.jsonl").write_text("")
    with pytest.raises(InvalidParameterError, match="not valid JSON"):
        load_run(tmp_path)


def test_find_data_path_relative_to_the_run_dir(tmp_path: Path) -> None:
    (tmp_path / "d.jsonl").write_text("{}\n")
    run = Run(tmp_path, {"metrics": {}, "run": {"input": "d.jsonl"}}, [])
    assert find_data_path(run) == tmp_path / "d.jsonl"
    assert find_data_path(Run(tmp_path, {"metrics": {}, "run": {"data": "nope.jsonl"}}, [])) is None


def test_render_diagnosis_of_ragmeter_diagnose_output() -> None:
    out = render_diagnosis({"findings": [{"rule": "r", "stage": "retrieval", "problem": "misses <b>",
                                          "fix": "raise k", "strength": "strong",
                                          "evidence": [{"metric": "recall@5", "mean": 0.4, "condition": "< 0.65",
                                                        "ci": [0.33, 0.49], "role": "primary"}]}],
                            "not_fired": [{"rule": "x", "reason": "needs y"}]})
    assert "Misses &lt;b&gt;: recall@5 0.400 [0.330, 0.490], below 0.65" in out
    assert "Fix to try: raise k" in out and "sev-strong" in out and ">retrieval<" in out
    assert "2 rules checked" in out and "<code>x</code>: needs y" in out
    assert render_diagnosis(None) == ""


def test_cli_report_single_and_compare(tmp_path: Path) -> None:
    cand, data = write_rich_run(tmp_path / "c")
    base, _ = write_rich_run(tmp_path / "b", shift=0.1)
    runner = CliRunner()
    res = runner.invoke(main, ["report", str(cand), "--data", str(data), "-o", str(tmp_path / "one.html")])
    assert res.exit_code == 0, res.output
    assert "wrote" in res.output and (tmp_path / "one.html").read_text().startswith("<!DOCTYPE html>")
    res = runner.invoke(main, ["report", str(base), str(cand), "-o", str(tmp_path / "two.html"), "--diagnose"])
    assert res.exit_code == 0, res.output
    text = (tmp_path / "two.html").read_text()
    assert 'id="comparison"' in text and 'id="diagnosis"' in text


def test_write_report_refuses_a_missing_data_file(tmp_path: Path) -> None:
    cand, _ = write_rich_run(tmp_path)
    with pytest.raises(InvalidParameterError, match="is not a file"):
        write_report(cand, tmp_path / "x.html", data=tmp_path / "missing.jsonl")


def test_payload_carries_the_row_and_context_metadata() -> None:
    rec = {**_rec("a", m=1.0), "metadata": {"category": "geo", "n": float("nan")},
           "context_metadata": [{"source": "wiki"}, {}]}
    p = build_payload(_run([rec, _rec("b", m=0.0)], ["m"]), None)
    a, b = p["samples"]
    assert a["meta"] == {"category": "geo", "n": None} and a["cm"] == [{"source": "wiki"}, {}]
    assert "meta" not in b and "cm" not in b
