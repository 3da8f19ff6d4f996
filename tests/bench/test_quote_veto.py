"""bench/quote_veto.py: the recorded claims scored again under each sentence veto, by hand."""

from __future__ import annotations

import json

import pytest

from .loader import load_bench

qv = load_bench("quote_veto")

SUMMITS = "Mount Everest was first climbed on 29 May 1953. K2 was first climbed on 31 July 1954."
DETAILS = {"claims": [
    # the judge quoted the K2 sentence for the Everest claim; P(yes) 0.9
    {"claim": "Everest was first climbed on 29 May 1953.", "supported": True,
     "evidence": "K2 was first climbed on 31 July 1954.", "p_yes": 0.9},
    # no P(yes): the hard verdict, yes -> 1.0
    {"claim": "K2 was first climbed in 1956.", "supported": True,
     "evidence": "K2 was first climbed on 31 July 1954.", "p_yes": None}]}


@pytest.mark.parametrize(("veto", "score", "struck"), [
    ("none", (0.9 + 1.0) / 2, 0),
    ("quote", 0.0, 2),             # 1953 vs the quoted 1954, 1956 vs 1954
    ("evidence", 0.9 / 2, 1),      # the Everest claim's own sentence agrees with it
    ("quote_evidence", 0.9 / 2, 1),
])
def test_support_under_each_veto(veto, score, struck):
    assert qv.support(DETAILS, veto, [SUMMITS]) == (pytest.approx(score), struck)


def test_hallucination_rate_is_one_minus_and_errors_stay():
    r, k = qv.rescored({"score": 0.05, "error": None, "details": DETAILS}, "hallucination_rate", "evidence", [SUMMITS])
    assert r["score"] == pytest.approx(1 - 0.45) and k == 1
    err = {"score": None, "error": {"type": "JudgeParseError"}, "details": DETAILS}
    assert qv.rescored(err, "faithfulness", "quote", [SUMMITS]) == (err, 0)
    empty = {"score": 1.0, "error": None, "details": {"claims": [], "no_facts": True}}
    assert qv.rescored(empty, "faithfulness", "quote", [SUMMITS])[0]["score"] == 1.0


def test_by_kind_file_prints_auroc_before_and_after(tmp_path, capsys):
    # two faithful rows that no veto touches (score 0.8) and one unfaithful row (score 0.95) that
    # every veto strikes to 0: AUROC 0.0 as recorded, 1.0 after
    rows = [{"id": i, "query": "q", "answer": "a", "contexts": [SUMMITS]} for i in ("a", "b", "c")]
    data = tmp_path / "rows.jsonl"
    data.write_text("\n".join(json.dumps(r) for r in rows), encoding="utf-8")
    fine = {"claims": [{"claim": "K2 was first climbed on 31 July 1954.", "supported": True,
                        "evidence": "K2 was first climbed on 31 July 1954.", "p_yes": 0.8}]}
    bad = {"claims": [{"claim": "K2 was first climbed in 1956.", "supported": True,
                       "evidence": "K2 was first climbed on 31 July 1954.", "p_yes": 0.95}]}
    saved = {"data": str(data), "rows": [], "records": {"faithfulness": [
        {"id": "a", "kind": "short", "faithful": True, "score": 0.8, "error": None, "details": fine},
        {"id": "b", "kind": "short", "faithful": True, "score": 0.8, "error": None, "details": fine},
        {"id": "c", "kind": "short", "faithful": False, "score": 0.95, "error": None, "details": bad}]}}
    qv.by_kind_file(saved, None)
    lines = [x.split() for x in capsys.readouterr().out.splitlines()]
    assert [(x[0], float(x[4])) for x in lines] == [("recorded", 0.0), ("quote", 1.0), ("evidence", 1.0),
                                                   ("quote_evidence", 1.0)]


def test_by_kind_files_pool_their_records_of_one_split(tmp_path, capsys):
    # file 1: a faithful design row (0.8) and an unfaithful held-out row (0.95, struck by the veto);
    # file 2, with labelled rows of its own: an unfaithful design row (0.95, struck). Pooled design
    # rows: 0.8 against 0.95 recorded (AUROC 0), 0.8 against 0 after the veto (AUROC 1); the held-out
    # row is left out, and each file's ids are read against its own rows.
    fine = {"claims": [{"claim": "K2 was first climbed on 31 July 1954.", "supported": True,
                        "evidence": "K2 was first climbed on 31 July 1954.", "p_yes": 0.8}]}
    bad = {"claims": [{"claim": "K2 was first climbed in 1956.", "supported": True,
                       "evidence": "K2 was first climbed on 31 July 1954.", "p_yes": 0.95}]}
    saved = []
    for name, rows in (("one", [("a", "design", True), ("b", "heldout", False)]), ("two", [("c", "design", False)])):
        data = tmp_path / f"{name}.jsonl"
        data.write_text("\n".join(json.dumps({"id": i, "split": s, "contexts": [SUMMITS]}) for i, s, _ in rows),
                        encoding="utf-8")
        saved.append({"data": str(data), "rows": [], "records": {"faithfulness": [
            {"id": i, "kind": "short", "faithful": f, "score": 0.8 if f else 0.95, "error": None,
             "details": fine if f else bad} for i, _, f in rows]}})
    qv.by_kind_file(saved, None, split="design")
    lines = [x.split() for x in capsys.readouterr().out.splitlines()]
    assert [(x[0], int(x[3]), float(x[4])) for x in lines] == [
        ("recorded", 2, 0.0), ("quote", 2, 1.0), ("evidence", 2, 1.0), ("quote_evidence", 2, 1.0)]


def test_checkworthy_leaves_the_non_claims_out_of_the_mean():
    details = {"claims": [
        {"claim": "Did you manage to get a seat?", "supported": False, "evidence": "", "p_yes": 0.1},  # question
        {"claim": "K2 was first climbed on 31 July 1954.", "supported": True, "evidence": "", "p_yes": 0.8},
        {"claim": "Have a lovely evening.", "supported": True, "evidence": "", "p_yes": 0.5}]}  # greeting
    assert qv.support(details, "none", [SUMMITS]) == (pytest.approx((0.1 + 0.8 + 0.5) / 3), 0)
    assert qv.support(details, "none", [SUMMITS], checkworthy=True) == (pytest.approx(0.8), 0)
    pleasantries = {"claims": [details["claims"][0], details["claims"][2]]}
    assert qv.support(pleasantries, "evidence", [SUMMITS], checkworthy=True) == (1.0, 0)  # no_checkworthy scores 1


def test_aggregate_sentence_min_is_the_mean_over_sentences_of_their_least_supported_claim():
    details = {"claims": [
        {"claim": "The loop is 14 km long.", "supported": True, "quote": "", "p_yes": 0.9, "start": 0, "end": 40},
        {"claim": "Most of the climb is in the last 4 km.", "supported": False, "quote": "", "p_yes": 0.2,
         "start": 0, "end": 40},
        {"claim": "It starts at the visitor centre.", "supported": True, "quote": "", "p_yes": 0.8,
         "start": 41, "end": 80},
        {"claim": "Walkers need five to six hours.", "supported": True, "quote": "", "p_yes": 0.6}]}  # no sentence
    # sentences: [0, 40) min(0.9, 0.2) = 0.2; [41, 80) 0.8; the unplaced claim alone 0.6 -> (0.2 + 0.8 + 0.6) / 3
    assert qv.support(details, "none", [SUMMITS], aggregate="sentence_min") == (pytest.approx(1.6 / 3), 0)
    assert qv.support(details, "none", [SUMMITS]) == (pytest.approx(2.5 / 4), 0)


def test_aggregate_min_is_the_least_supported_claim():
    # as recorded: 0.9 and 1.0 (hard yes) -> min 0.9; the evidence veto strikes the 1956 claim -> min 0.0
    assert qv.support(DETAILS, "none", [SUMMITS], aggregate="min") == (pytest.approx(0.9), 0)
    assert qv.support(DETAILS, "evidence", [SUMMITS], aggregate="min") == (0.0, 1)


def test_aggregate_geo_is_the_geometric_mean_with_a_floor():
    # as recorded: 0.9 and 1.0 -> sqrt(0.9 x 1.0); the evidence veto strikes the 1956 claim: its 0 counts
    # as 0.01 -> sqrt(0.9 x 0.01) = sqrt(0.009)
    assert qv.support(DETAILS, "none", [SUMMITS], aggregate="geo") == (pytest.approx(0.9 ** 0.5), 0)
    assert qv.support(DETAILS, "evidence", [SUMMITS], aggregate="geo") == (pytest.approx(0.009 ** 0.5), 1)
    three = {"claims": [{"claim": c, "supported": True, "quote": "", "p_yes": p}
                        for c, p in (("Everest was climbed in 1953.", 0.8), ("K2 was climbed in 1954.", 0.5),
                                     ("K2 is in Asia.", 0.2))]}
    # (0.8 x 0.5 x 0.2)^(1/3) = 0.08^(1/3) = 0.4309; the mean would be 0.5
    assert qv.support(three, "none", [SUMMITS], aggregate="geo") == (pytest.approx(0.08 ** (1 / 3)), 0)


def test_absent_candidates_strike_a_number_or_name_the_contexts_do_not_hold():
    texts = [SUMMITS]
    spans = qv.context_sentences(texts)
    # 8849 metres is in no context, and Everest's sentence holds no number in metres: the evidence veto
    # finds no conflict, the absent candidates strike it
    assert not qv.struck_by("evidence", "Mount Everest is 8849 metres high.", "", texts, spans)
    assert qv.struck_by("evidence+numbers", "Mount Everest is 8849 metres high.", "", texts, spans)
    # a name the contexts lack: only the candidate with names strikes it
    assert not qv.struck_by("evidence+numbers", "Tenzing Norgay climbed Everest.", "", texts, spans)
    assert qv.struck_by("evidence+numbers_names", "Tenzing Norgay climbed Everest.", "", texts, spans)
    assert not qv.struck_by("evidence+numbers_names", "K2 was first climbed on 31 July 1954.", "", texts, spans)
