"""Bidirectional controls in ids and texts are shown, never obeyed: U+202E must not make
``invoice\u202etxt.exe`` read as ``invoiceexe.txt`` anywhere on the page."""

from __future__ import annotations

import json

from ragmeter import evaluate
from ragmeter.report import write_report
from ragmeter.report._html import embed_json, escape_html
from ragmeter.report._text import BIDI_CONTROLS, show_bidi

RLO_ID = "invoice\u202etxt.exe"


def test_show_bidi_makes_every_control_visible():
    assert show_bidi(RLO_ID) == "invoice[U+202E]txt.exe"
    assert show_bidi("a\u2066b\u2069c\u200f") == "a[U+2066]b[U+2069]c[U+200F]"
    assert all(c not in show_bidi(BIDI_CONTROLS) for c in BIDI_CONTROLS)


def test_escape_html_and_embed_json_isolate_bidi_controls():
    assert escape_html(RLO_ID) == "invoice[U+202E]txt.exe"
    assert json.loads(embed_json({"id": RLO_ID})) == {"id": "invoice[U+202E]txt.exe"}


def test_report_page_holds_no_raw_bidi_control(tmp_path):
    rows = [{"id": RLO_ID, "query": "which file\u2067?", "answer": "the \u202dexe",
             "contexts": [{"id": "d\u202e1", "text": "t\u2066x"}], "relevant": ["d\u202e1"]}]
    data = tmp_path / "d.jsonl"
    data.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), encoding="utf-8")
    from ragmeter.io import read_samples

    evaluate(read_samples(data), ["mrr"], out_dir=str(tmp_path / "o"))
    write_report(tmp_path / "o", tmp_path / "o" / "report.html", data=data)
    page = (tmp_path / "o" / "report.html").read_text(encoding="utf-8")
    assert not any(c in page for c in BIDI_CONTROLS)
    assert "invoice[U+202E]txt.exe" in page
