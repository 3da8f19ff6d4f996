"""``ragmeter eval --slice``: the slices in summary.json, the table and the Markdown."""

from __future__ import annotations

import json

from click.testing import CliRunner

from ragmeter.cli import main


def test_eval_slice_writes_and_prints_the_slices(tmp_path):
    rows = [{"id": str(i), "contexts": [{"id": "x", "source": "wiki" if i % 2 else "blog"}],
             "relevant": ["x"] if i < 8 else ["z"], "category": "a" if i < 8 else "b"} for i in range(16)]
    data = tmp_path / "d.jsonl"
    data.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    out = tmp_path / "o"
    res = CliRunner().invoke(main, ["eval", str(data), "-m", "mrr", "-o", str(out), "--slice", "category",
                                    "--slice", "source", "--format", "markdown"],
                             catch_exceptions=False)
    assert res.exit_code == 0, res.output
    summary = json.loads((out / "summary.json").read_text())
    cat = {s["value"]: s["metrics"]["mrr"] for s in summary["slices"]["category"]["slices"]}
    assert cat["a"]["mean"] == 1.0 and cat["a"]["rest_mean"] == 0.0 and cat["a"]["n"] == 8
    assert summary["slices"]["source"]["kind"] == "context metadata"
    assert "| category=a | mrr | 8 | 1.000 [" in res.output
    assert summary["metrics"]["mrr"]["mean"] == 0.5  # the run's own numbers are untouched
    page = (out / "report.html").read_text(encoding="utf-8")
    assert '<section id="slices">' in page and "<td>category=a</td><td>mrr</td><td>8</td>" in page


def test_eval_slice_on_an_unknown_field_is_a_usage_error(tmp_path):
    data = tmp_path / "d.jsonl"
    data.write_text(json.dumps({"id": "1", "contexts": [{"id": "x"}], "relevant": ["x"]}) + "\n", encoding="utf-8")
    res = CliRunner().invoke(main, ["eval", str(data), "-m", "mrr", "-o", str(tmp_path / "o"), "--slice", "nope",
                                    "--no-report"])
    assert res.exit_code == 2
    assert "no sample has it" in res.output
