"""Claims marked in the answer and their evidence in the contexts (report/_evidence.py): the segment
cutting on hand-computed offsets, a tiny judged run's page, and a claim's link in Chromium."""

from __future__ import annotations

import json
import math
import re
import shutil
from pathlib import Path
from typing import Any

import pytest

from ragmeter import Sample, evaluate
from ragmeter.judges import Completion, FunctionBackend, Judge
from ragmeter.judges.base import TokenLogprob
from ragmeter.report import build_report, write_report
from ragmeter.report._evidence import cut, evidence_marks, support_class

from .test_layout import open_at

# ---- the cutting, by hand ------------------------------------------------------------------------------

#       0         1
#       0123456789012345
TEXT = "a<b & c> d <e>&f"


def pieces(text: str, c: Any) -> list[tuple[str, tuple[Any, ...]]]:
    return [(text[s.start:s.end], s.keys) for s in c.segments]


def test_overlapping_spans_split_into_nested_segments():
    # span 1 = "<b & c>" [1, 8); span 2 = "c> d <e>" [6, 14); span 3 = "&f" [14, 16)
    c = cut(TEXT, [(1, 8, 1, "<b & c>"), (6, 14, 2, None), (14, 16, 3, "&f")])
    assert pieces(TEXT, c) == [("<b & ", (1,)), ("c>", (1, 2)), (" d <e>", (2,)), ("&f", (3,))]
    assert [(s.opens, s.closes) for s in c.segments] == [((1,), ()), ((2,), (1,)), ((), (2,)), ((3,), (3,))]
    assert c.invalid == 0 and c.clipped == 0


def test_a_span_inside_another_and_the_same_span_twice():
    c = cut(TEXT, [(0, 16, "all", None), (2, 3, "b", "b"), (2, 3, "b", None)])
    assert pieces(TEXT, c) == [("a<", ("all",)), ("b", ("all", "b")), (" & c> d <e>&f", ("all",))]
    assert c.segments[1].opens == ("b",) and c.segments[1].closes == ("b",)


@pytest.mark.parametrize("span", [
    (-1, 3), (3, 17), (5, 5), (6, 2), ("1", 3), (1.0, 3), (True, 3), (None, 3), (10**12, 10**12 + 1),
])
def test_offsets_outside_the_text_or_not_integers_are_ignored(span):
    c = cut(TEXT, [(*span, "bad", None), (11, 14, "ok", "<e>")])
    assert pieces(TEXT, c) == [("<e>", ("ok",))] and c.invalid == 1


def test_a_span_whose_recorded_text_differs_is_ignored():
    c = cut(TEXT, [(1, 4, 1, "<b "), (1, 4, 2, "<b&")])
    assert pieces(TEXT, c) == [("<b ", (1,))] and c.invalid == 1


def test_display_cut_drops_spans_beyond_it_and_cuts_those_crossing_it():
    c = cut(TEXT, [(1, 4, 1, None), (3, 9, 2, None), (6, 8, 3, None), (10, 14, 4, None)], clip=6)
    assert pieces(TEXT, c) == [("<b", (1,)), (" ", (1, 2)), ("& ", (2,))]
    assert c.clipped == 2 and c.invalid == 0


def test_support_classes():
    assert [support_class(s) for s in (1.0, 0.5, 0.49, 0.2, 0.19, 0.0, None, float("nan"), True)] == [
        "supported", "supported", "doubtful", "doubtful", "unsupported", "unsupported", "unsupported",
        "unsupported", "unsupported"]


# ---- the marks of one sample ----------------------------------------------------------------------------

ANSWER = "Hi! It is 142 m <long> & old. Maybe."
CONTEXTS = ["Intro \u202e😀. The span is 142 m.", None, "   ", "It is <old> & grey."]


def claim(start: int, end: int, support: float, evidence: list[dict[str, Any]] | None) -> dict[str, Any]:
    c: dict[str, Any] = {"claim": ANSWER[start:end], "start": start, "end": end, "p_yes": support,
                         "support": support, "veto": False}
    if evidence is not None:
        c["evidence"] = evidence
    return c


def test_marks_of_a_sample_in_the_page_units():
    # context 0 (rank 1) has text; ranks 2 (id only) and 3 (blank) have none, so "context": 1 is rank 4
    details = {"claims": [
        claim(4, 29, 0.9, [{"context": 0, "start": 10, "end": 28, "text": "The span is 142 m."},
                           {"context": 1, "start": 0, "end": 19, "text": "It is <old> & grey."},
                           {"context": 2, "start": 0, "end": 3},        # no third context with text
                           {"context": 0, "start": 5, "end": 99}]),     # outside the text
        claim(30, 36, 0.3, [])],
        "not_claims": [{"text": "Hi!", "start": 0, "end": 3, "kind": "greeting"}]}
    ev = evidence_marks("faithfulness(mode=sentences)", details, ANSWER, CONTEXTS, 4000)
    assert ev is not None
    assert ev["k"] == [["supported", 0.9, 0.9, False, 4, 2], ["doubtful", 0.3, 0.3, False, 0, 0]]
    assert ev["a"] == [[0, 3, ["greeting"], ["greeting"], ["greeting"]], [4, 29, [1], [1], [1]],
                       [30, 36, [2], [2], [2]]]
    # U+202E shows as "[U+202E]" (8 units) and the emoji is 2 UTF-16 units: 10 + 7 + 1 = 18
    assert ev["c"] == [[0, [[18, 36, [1], [1], [1]]]], [3, [[0, 19, [1], [1], [1]]]]]
    assert ev["n"] == ["2 spans whose offsets do not fit the text (outside it, or not where the recorded text is) "
                       "are not marked"]


def test_claims_of_an_older_run_without_evidence_mark_the_answer_only():
    details = {"claims": [claim(4, 29, 0.9, None)]}
    ev = evidence_marks("faithfulness(mode=sentences)", details, ANSWER, CONTEXTS, None)
    assert ev is not None and ev["c"] == [] and ev["k"] == [["supported", 0.9, 0.9, False, 0, 0]]


def test_claims_of_mode_claims_mark_their_answer_sentence_and_carry_their_text():
    # mode=claims: the judge's claims are not answer text; each records the answer sentence it comes
    # from ("sentence", with its offsets), so two claims of one sentence nest over it, and the list
    # carries each claim's own text; a non-claim without offsets is listed by kind, not counted as bad
    s = "It is 142 m <long> & old."
    details = {"claims": [
        {"claim": "It is 142 m long.", "sentence": s, "start": 4, "end": 29, "p_yes": 0.9, "support": 0.9,
         "veto": False, "quote": "", "evidence": [{"context": 0, "start": 10, "end": 28,
                                                   "text": "The span is 142 m."}]},
        {"claim": "It is old.", "sentence": s, "start": 4, "end": 29, "p_yes": 0.8, "support": 0.0,
         "veto": True, "quote": "", "evidence": []}],
        "not_claims": [{"text": "Hi!", "kind": "greeting"}]}
    ev = evidence_marks("faithfulness", details, ANSWER, CONTEXTS, None)
    assert ev is not None
    assert ev["k"] == [["supported", 0.9, 0.9, False, 1, 1, "It is 142 m long."],
                       ["unsupported", 0.8, 0.0, True, 0, 0, "It is old."]]
    assert ev["a"] == [[4, 29, [1, 2], [1, 2], [1, 2]]]
    assert ev["c"] == [[0, [[18, 36, [1], [1], [1]]]]]
    assert ev["n"] == []


def test_a_non_claim_of_mode_claims_marks_its_answer_sentence_by_kind():
    # mode=claims records the answer sentence a non-claim was taken from; the judge's own wording
    # ("Hello there") is not the answer's text, the sentence is what the offsets are checked against
    details = {"claims": [{"claim": "It is 142 m long.", "sentence": "It is 142 m <long> & old.", "start": 4,
                           "end": 29, "p_yes": 0.9, "support": 0.9, "veto": False, "quote": "", "evidence": []}],
               "not_claims": [{"text": "Hello there", "kind": "greeting", "start": 0, "end": 3, "sentence": "Hi!"}]}
    ev = evidence_marks("faithfulness", details, ANSWER, CONTEXTS, None)
    assert ev is not None
    assert ev["a"] == [[0, 3, ["greeting"], ["greeting"], ["greeting"]], [4, 29, [1], [1], [1]]]
    assert ev["n"] == []


def test_hostile_details_never_raise():
    details = {"claims": ["x", None, {"start": "a", "end": {}, "evidence": "no"},
                          {"start": 0, "end": 3, "evidence": [None, 3, {"context": "0"}]}], "not_claims": "no"}
    ev = evidence_marks("m", details, ANSWER, CONTEXTS, 10)
    assert ev is not None and ev["a"] == [[0, 3, [4], [4], [4]]] and ev["c"] == []
    assert evidence_marks("m", details, None, CONTEXTS, 10) is None


def test_spans_beyond_the_display_cut_are_dropped_and_said():
    details = {"claims": [claim(4, 29, 0.9, [{"context": 0, "start": 10, "end": 28}]), claim(30, 36, 0.1, None)]}
    ev = evidence_marks("m", details, ANSWER, CONTEXTS, 12)
    assert ev is not None
    assert ev["a"] == [[4, 12, [1], [1], [1]]]
    assert ev["c"] == [[0, [[18, 20, [1], [1], [1]]]]]  # the span cut at character 12, shown 8 units further
    assert ev["n"] == ["1 sentence of the answer beyond the 12-character display cut: not marked"]


# ---- a tiny judged run's page ----------------------------------------------------------------------------

BRIDGE = "The Harrowgate footbridge opened on 14 May 2019. The steel span is 142 metres long."
TOLLS = "Tolls <& fees>: none. Cyclists must dismount between 7 am and 7 pm."
RUN_ANSWER = "Hi there! It opened in May 2019. Cyclists may ride across at any time & <always>."
NAMES = ["faithfulness(mode=sentences)", "hallucination_rate(mode=sentences)", "faithfulness(mode=direct)"]


def _word(p_yes: float) -> Completion:
    tok = TokenLogprob("yes" if p_yes >= 0.5 else "no", math.log(max(p_yes, 1 - p_yes)),
                       (("yes", math.log(p_yes)), ("no", math.log(1 - p_yes))))
    return Completion(tok.token, logprobs=(tok,))


@pytest.fixture(scope="module")
def judged_run(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """A one-row run of sentence-mode faithfulness with a fake judge: the claim about 2019 is supported."""
    out = tmp_path_factory.mktemp("evidence")

    async def judge_fn(request: Any) -> Completion:
        statement = request.messages[-1].content.split("<statement>", 1)[-1]
        return _word(0.9 if "2019" in statement else 0.1)

    row = {"id": "r1", "query": "Tell me about the footbridge.", "answer": RUN_ANSWER,
           "contexts": [{"id": "a", "text": BRIDGE}, {"id": "b", "text": ""}, {"id": "c", "text": TOLLS}]}
    data = out / "data.jsonl"
    data.write_text(json.dumps(row) + "\n", encoding="utf-8")
    evaluate([Sample.model_validate(row)], NAMES, judge=Judge(FunctionBackend(judge_fn), cache=False),
             embedder=None, out_dir=str(out / "run"))
    return out / "run", data


def _payload(page: str) -> dict[str, Any]:
    found = re.search(r'<script type="application/json" id="ragmeter-data">(.*?)</script>', page, re.S)
    assert found
    return json.loads(found.group(1))


def test_the_page_holds_the_claims_and_their_evidence(judged_run):
    run_dir, data = judged_run
    page = build_report(run_dir, data=data, diagnose=False)
    sample = _payload(page)["samples"][0]
    ev = sample["ev"]
    assert ev["m"] == "faithfulness(mode=sentences)"  # the first metric with such details; direct mode has none
    assert [k[0] for k in ev["k"]] == ["supported", "unsupported"]
    a = sample["a"]
    assert [(a[s:e], keys) for s, e, keys, _, _ in ev["a"]] == [
        ("Hi there!", ["greeting"]), ("It opened in May 2019.", [1]),
        ("Cyclists may ride across at any time & <always>.", [2])]
    by_rank = {k: segs for k, segs in ev["c"]}
    assert sorted(by_rank) == [0, 2]  # the blank context at rank 2 is skipped by the metric's numbering
    tolls = sample["c"][2][1]
    assert [(tolls[s:e], keys) for s, e, keys, _, _ in by_rank[2]] == [
        ("Cyclists must dismount between 7 am and 7 pm.", [2])]
    assert "<always>" not in page and "<& fees>" not in page  # escaped in the embedded JSON
    assert _payload(page)["claimScale"].startswith("✓ supported: support ≥ 0.5")


def test_a_run_without_sentence_checks_has_no_marks(rich_run):
    run_dir, data = rich_run
    payload = _payload(build_report(run_dir, data=data, diagnose=False, max_samples=20))
    assert not any("ev" in s for s in payload["samples"]) and "claimScale" not in payload


@pytest.mark.parametrize(("width", "name"), [(390, None), (390, "x" * 27 + " y" * 27), (1280, None)],
                         ids=["phone", "phone-long-dataset-name", "desktop"])
def test_tapping_a_claim_focuses_its_evidence(judged_run, browser, tmp_path, width, name):
    run_dir, data = judged_run
    if name is not None:  # a longer dataset name in the run's header moves the sample panel by a fraction of a pixel
        run_dir = Path(shutil.copytree(run_dir, tmp_path / "run"))
        summary = json.loads((run_dir / "summary.json").read_text(encoding="utf-8"))
        summary["dataset"] = summary["run"]["dataset"] = name
        (run_dir / "summary.json").write_text(json.dumps(summary), encoding="utf-8")
    out = write_report(run_dir, tmp_path / "report.html", data=data, diagnose=False)
    ctx, page, problems = open_at(browser, out, width, 700, touch=width < 600)
    try:
        answer = page.locator(".detail-panel pre.marked")
        assert answer.evaluate("e => Array.from(e.childNodes).filter(n => n.nodeName !== 'SUP')"
                               ".map(n => n.textContent).join('')") == RUN_ANSWER
        assert page.locator("mark.claim.s-unsupported").text_content() == RUN_ANSWER[33:]
        assert page.locator("span.not-claim").get_attribute("data-kind") == "greeting"
        ref = page.locator("sup.claim-ref a", has_text="2✗")
        assert "P(yes) 0.100" in (ref.get_attribute("aria-label") or "")
        (ref.tap if width < 600 else ref.click)()
        page.wait_for_function("() => document.activeElement && document.activeElement.id.startsWith('ev-')")
        # in the viewport to within a pixel: the fragment scroll puts the mark's top at the viewport's top,
        # give or take the fraction of a pixel left by the layout above it (-0.33 px seen at this width)
        target = page.evaluate("""() => { const e = document.activeElement, r = e.getBoundingClientRect();
            return [e.id, e.textContent, r.top >= -1 && r.bottom <= innerHeight + 1, e.matches(':target')]; }""")
        assert target[0].endswith("-2") and target[2:] == [True, True]
        assert target[1] == "The Harrowgate footbridge opened on 14 May 2019."  # claim 2's first evidence span
        assert page.locator("mark.evidence[data-claim='2']").count() == 2
        assert problems == []
    finally:
        ctx.close()


# ---- the default faithfulness (mode=claims): claims in the judge's words over their answer sentence ------

CLAIMS_ANSWER = "Hi there! It opened in May 2019 and its span is 124 metres long."


@pytest.fixture(scope="module")
def claims_run(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """A one-row run of the default faithfulness with a fake judge: two claims of one answer sentence,
    the second struck by the evidence veto (124 against the context's 142 metres)."""
    out = tmp_path_factory.mktemp("claims")
    claims = ["It opened in May 2019.", "Its span is 124 metres long.", "Hi there!"]
    analysis = json.dumps({"claims": claims, "no_facts": "no", "questions": ["When?"], "evasive": "no"})
    listed = json.dumps({"verdicts": [{"statement": 1, "evidence": "none", "supported": "yes"},
                                      {"statement": 2, "evidence": "none", "supported": "yes"}]})

    async def judge_fn(request: Any) -> Completion:
        return Completion(listed if "For each numbered statement" in request.messages[-1].content else analysis)

    row = {"id": "r1", "query": "Tell me about the footbridge.", "answer": CLAIMS_ANSWER,
           "contexts": [{"id": "a", "text": BRIDGE}, {"id": "c", "text": TOLLS}]}
    data = out / "data.jsonl"
    data.write_text(json.dumps(row) + "\n", encoding="utf-8")
    evaluate([Sample.model_validate(row)], ["faithfulness"], judge=Judge(FunctionBackend(judge_fn), cache=False),
             embedder=None, out_dir=str(out / "run"))
    return out / "run", data


def test_the_default_faithfulness_marks_its_claims_in_chromium(claims_run, browser, tmp_path):
    run_dir, data = claims_run
    payload = _payload(build_report(run_dir, data=data, diagnose=False))
    ev = payload["samples"][0]["ev"]
    assert ev["m"] == "faithfulness"
    assert [k[0] for k in ev["k"]] == ["supported", "unsupported"]
    assert [k[6] for k in ev["k"]] == ["It opened in May 2019.", "Its span is 124 metres long."]
    # the greeting the judge listed is marked by its kind over its own sentence
    assert [(CLAIMS_ANSWER[s:e], keys) for s, e, keys, _, _ in ev["a"]] == [
        ("Hi there!", ["greeting"]), (CLAIMS_ANSWER[10:], [1, 2])]
    out = write_report(run_dir, tmp_path / "report.html", data=data, diagnose=False)
    ctx, page, problems = open_at(browser, out, 390, 700, touch=True)
    try:
        assert page.locator("ol.claims q.claim-text").all_text_contents() == [
            "It opened in May 2019.", "Its span is 124 metres long."]
        assert page.locator("mark.claim.s-unsupported mark.claim, mark.claim mark.claim.s-unsupported").count() == 1
        greeting = page.locator("span.not-claim")
        assert greeting.get_attribute("data-kind") == "greeting" and greeting.text_content() == "Hi there!"
        page.locator("sup.claim-ref a", has_text="2✗").tap()
        page.wait_for_function("() => document.activeElement && document.activeElement.id.startsWith('ev-')")
        focused = page.evaluate("() => [document.activeElement.id, document.activeElement.textContent]")
        # claim 2's evidence: the two context sentences most related to it, the first in document order focused
        assert focused[0].endswith("-2") and focused[1] == "The Harrowgate footbridge opened on 14 May 2019."
        assert page.locator("mark.evidence[data-claim='2']").all_text_contents() == [
            "The Harrowgate footbridge opened on 14 May 2019.", "The steel span is 142 metres long."]
        assert problems == []
    finally:
        ctx.close()
