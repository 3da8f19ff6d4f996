"""bench/combine_offline.py: the per-answer combinations of the judge's score and fact_consistency, by hand."""

from __future__ import annotations

import json

import pytest

from tests.bench.loader import load_bench

co = load_bench("combine_offline")


def test_the_combinations_by_hand():
    judge, offline = 0.9, 0.5
    assert co.COMBINATIONS["judge"](judge, offline) == 0.9
    assert co.COMBINATIONS["J*F"](judge, offline) == pytest.approx(0.45)
    assert co.COMBINATIONS["min(J,F)"](judge, offline) == 0.5
    # an undefined offline score leaves the judge's
    assert co.COMBINATIONS["J*F"](judge, None) == co.COMBINATIONS["min(J,F)"](judge, None) == 0.9


def test_rows_of_a_by_kind_file_with_fact_consistency_computed_on_the_row(tmp_path):
    rows = {
        # the answer's number is in the context: every check passes, every content word found -> 1.0
        "a": {"id": "a", "query": "How long is it?", "answer": "It is 142 metres long.",
              "contexts": ["The bridge is 142 metres long."]},
        # checks: the number 124 metres fails, the negation check passes (same clause, no cue on either
        # side): F = 1/2; content words 124, metres, long: 2 of 3 in the context, P = 2/3 -> 1/3
        "b": {"id": "b", "query": "How long is it?", "answer": "It is 124 metres long.",
              "contexts": ["The bridge is 142 metres long."]},
    }
    saved = {"records": {"faithfulness": [
        {"id": "a", "kind": "short", "faithful": True, "score": 0.8, "error": None},
        {"id": "b", "kind": "short", "faithful": False, "score": 0.9, "error": None},
        {"id": "c", "kind": "short", "faithful": False, "score": None, "error": {"type": "JudgeParseError"}},
    ]}}
    got = co.scored_rows(json.loads(json.dumps(saved)), rows)
    assert [g[:3] for g in got] == [("short", True, 0.8), ("short", False, 0.9)]  # the errored row left out
    assert [g[3]["F"] for g in got] == [1.0, pytest.approx(1 / 3)]
    # the number checks alone: a passes its one, b fails its one; no name on either
    assert [(g[3]["Fnum"], g[3]["Fnn"]) for g in got] == [(1.0, 1.0), (0.0, 0.0)]
    # the judge alone ranks them wrong (0.8 < 0.9); J*F: 0.8 against 0.3, right
    assert co.COMBINATIONS["J*F"](0.8, got[0][3]["F"]) == 0.8
    assert co.COMBINATIONS["J*F"](0.9, got[1][3]["F"]) == pytest.approx(0.3)


def test_number_and_name_shares_by_hand():
    row = {"id": "n", "query": "Who built it?", "answer": "In 1931 Otto Brandt built it.",
           "contexts": ["The bridge was built by Mara Lind in 1931."]}
    # checks: the number 1931 passes; the name run "Otto Brandt" fails (neither token in the context)
    got = co.offline_values(row)
    assert got["Fnum"] == 1.0 and got["Fnn"] == 0.5 and got["Fname"] == 0.0
    assert co.COMBINATIONS["J*Fnum"](0.8, got["Fnum"]) == 0.8
    assert co.COMBINATIONS["J*Fnn"](0.8, got["Fnn"]) == pytest.approx(0.4)
    assert co.COMBINATIONS["J*Fname"](0.8, got["Fname"]) == 0.0
    # an answer with no number: Fnum is 1
    assert co.offline_values({**row, "answer": "Mara Lind built it."})["Fnum"] == 1.0


def test_name_share_by_hand():
    row = {"id": "m", "query": "Who designed it?", "contexts": ["The Harlow Bridge was designed by Mara Lind."],
           "answer": "Mara Lind designed it with Otto Brandt in 1935."}
    # name runs: "Mara Lind" is the sentence's first token and the next ("Lind" alone, found),
    # "Otto Brandt" (not found): 1 of 2 pass; the number 1935 (absent) is not a name check
    got = co.offline_values(row)
    assert got["Fname"] == 0.5 and got["Fnum"] == 0.0 and got["Fnn"] == pytest.approx(1 / 3)
    assert co.COMBINATIONS["J*Fname"](0.8, got["Fname"]) == pytest.approx(0.4)
    # no name at all: the share is 1 and the judge's score is kept
    plain = co.offline_values({**row, "answer": "It was designed in 1935."})
    assert plain["Fname"] == 1.0 and co.COMBINATIONS["J*Fname"](0.8, plain["Fname"]) == 0.8


def test_rescore_takes_the_defaults_score_from_the_recorded_claims():
    rows = {"b": {"id": "b", "query": "How long is it?", "answer": "It is 124 metres long.", "split": "design",
                  "contexts": ["The bridge is 142 metres long."]}}
    claim = {"claim": "The bridge is 124 metres long.", "supported": True, "p_yes": 0.9,
             "quote": "The bridge is 142 metres long."}
    saved = {"records": {"faithfulness": [{"id": "b", "kind": "short", "faithful": False, "score": 0.9,
                                           "error": None, "details": {"claims": [claim]}}]}}
    assert co.scored_rows(saved, rows)[0][2] == 0.9  # as recorded
    # the evidence veto strikes the claim: 124 metres against its sentence's 142 metres
    assert co.scored_rows(saved, rows, rescore=True)[0][2] == 0.0
    assert co.scored_rows(saved, rows, rescore=True, split="heldout") == []


def test_rescore_by_the_geometric_mean_of_the_claims_supports():
    rows = {"b": {"id": "b", "query": "What does it cost?", "answer": "It costs 5 euros. It opens at noon.",
                  "split": "design", "contexts": ["It costs 5 euros and opens at noon."]}}
    claims = [{"claim": "It costs 5 euros.", "supported": True, "p_yes": 0.9, "quote": ""},
              {"claim": "It opens at noon.", "supported": False, "p_yes": 0.1, "quote": ""}]
    saved = {"records": {"faithfulness": [{"id": "b", "kind": "short", "faithful": False, "score": 0.5,
                                           "error": None, "details": {"claims": claims}}]}}
    assert co.nc0_rows(saved, rows, rescore=True)[0][2] == pytest.approx(0.5)          # (0.9 + 0.1) / 2
    assert co.nc0_rows(saved, rows, rescore=True, aggregate="geo")[0][2] == pytest.approx(0.3)  # sqrt(0.9 * 0.1)


def test_names_against_the_contexts_and_the_question_by_hand():
    row = {"id": "q", "query": "User: Did Otto Brandt build the Harlow Bridge?",
           "contexts": ["The bridge was built by Brandt and designed by Mara Lind."],
           "answer": "Yes, Otto Brandt built it, and Karl Voss painted it."}
    # name runs: "Otto Brandt" ("Otto" only in the question) and "Karl Voss" (nowhere)
    got = co.offline_values(row)
    assert got["Fname"] == 0.0            # against the contexts alone both fail
    assert got["Fname+q"] == 0.5          # with the question, "Otto Brandt" passes
    assert co.COMBINATIONS["J*Fname+q"](0.8, got["Fname+q"]) == pytest.approx(0.4)


def test_a_claim_with_a_name_the_contexts_and_question_lack_is_struck_by_hand():
    row = {"id": "q", "query": "Who built the Harlow Bridge?",
           "contexts": ["The Harlow Bridge was built by Otto Brandt in 1931."]}
    claims = [
        {"claim": "The Harlow Bridge was built by Otto Brandt.", "supported": True, "p_yes": 0.9,
         "quote": "The Harlow Bridge was built by Otto Brandt in 1931."},
        {"claim": "The bridge was painted by Karl Voss.", "supported": True, "p_yes": 0.7, "quote": "none"},
        {"claim": "I love it!", "supported": True, "p_yes": 0.2, "quote": "none"},   # no check-worthy claim
    ]
    result = {"score": 0.6, "error": None, "details": {"claims": claims}}
    # check-worthy: the first two; "Karl Voss" is in neither the contexts nor the question -> 0;
    # the first keeps its 0.9: (0.9 + 0) / 2
    assert co.names_struck(result, row) == pytest.approx(0.45)
    assert co.names_struck({"score": 0.6, "error": None, "details": {}}, row) is None
    saved = {"records": {"faithfulness": [{"id": "q", "kind": "short", "faithful": False, **result}]}}
    rows = {"q": {**row, "answer": "Otto Brandt built it; Karl Voss painted it."}}
    assert co.scored_rows(saved, rows)[0][3]["Vname+q"] is None     # only with --rescore
    got = co.scored_rows(saved, rows, rescore=True)[0]
    assert got[2] == pytest.approx(0.8) and got[3]["Vname+q"] == pytest.approx(0.45)


def test_content_word_shares_by_hand():
    row = {"id": "p", "query": "Is the ferry running today?",
           "answer": "Hi there! The ferry leaves at noon from Pier 4 with snacks. Isn't that lovely?",
           "contexts": ["The ferry leaves Pier 4 at noon."]}
    # content words of the whole answer: hi, ferry, leaves, noon, pier, 4, snacks, lovely (8; "isn't"
    # folds to the stop word "is"); the context holds ferry, leaves, noon, pier, 4: P = 5/8
    got = co.offline_values(row)
    assert got["P"] == pytest.approx(5 / 8)
    # check-worthy: only the middle sentence (the greeting and the question are left out): ferry,
    # leaves, noon, pier, 4, snacks; 5 of 6 in the context and the question
    assert got["Pkq"] == pytest.approx(5 / 6)
    assert co.COMBINATIONS["J*P"](0.8, got["P"]) == pytest.approx(0.5)
    assert co.COMBINATIONS["J*Pkq"](0.6, got["Pkq"]) == pytest.approx(0.5)
    # a word of the question counts as found in Pkq only: "today" is the question's
    today = co.offline_values({**row, "answer": "The ferry runs today."})
    assert today["P"] == pytest.approx(1 / 3) and today["Pkq"] == pytest.approx(2 / 3)
    # no check-worthy sentence: Pkq is 1; no content word at all: P is undefined
    assert co.offline_values({**row, "answer": "Thanks so much!"})["Pkq"] == 1.0
    assert co.offline_values({**row, "answer": "It is."})["P"] is None


def test_the_share_to_a_power_by_hand():
    # 0.8 * 0.0625 ** 0.25 = 0.8 * 0.5; 0.8 * 0.0625 ** 0.5 = 0.8 * 0.25; undefined leaves the judge's
    assert co.COMBINATIONS["J*Pkq^0.25"](0.8, 0.0625) == pytest.approx(0.4)
    assert co.COMBINATIONS["J*Pkq^0.5"](0.8, 0.0625) == pytest.approx(0.2)
    assert co.COMBINATIONS["J*Pkq^0.5"](0.8, None) == 0.8
    assert co.READS["J*Pkq^0.25"] == co.READS["J*Pkq^0.5"] == "Pkq"


def test_nc0_scores_an_answer_with_no_sentence_to_check_1_and_keeps_the_rest():
    rows = {
        "g": {"id": "g", "split": "design", "answer": "You're welcome! Have a great day!", "contexts": ["x"]},
        "u": {"id": "u", "split": "design", "answer": "Thanks for asking! Is there anything else?", "contexts": ["x"]},
        "f": {"id": "f", "split": "design", "answer": "The bridge is 142 metres long.", "contexts": ["x"]},
        "h": {"id": "h", "split": "heldout", "answer": "Bye!", "contexts": ["x"]},
    }
    saved = {"records": {"faithfulness": [
        {"id": "g", "kind": "dialogue", "faithful": True, "score": 0.4, "error": None},
        {"id": "u", "kind": "dialogue", "faithful": True, "score": None, "error": None},  # undefined
        {"id": "f", "kind": "dialogue", "faithful": False, "score": 0.7, "error": None},
        {"id": "h", "kind": "dialogue", "faithful": True, "score": 0.2, "error": None},
    ]}}
    # a greeting and a greeting with a question: 1.0 whatever was recorded; the claim keeps its score;
    # the held-out row is left out with --split design
    assert co.nc0_rows(saved, rows, "design") == [("dialogue", True, 1.0, 0.4), ("dialogue", True, 1.0, None),
                                                  ("dialogue", False, 0.7, 0.7)]


def test_number_and_name_checks_against_the_contexts_and_the_question_by_hand():
    row = {"id": "q", "query": "Is the Vennor 3 charged in 5 hours?",
           "answer": "Yes, the Vennor 3 charges in 5 hours, or 3 hours with the Volta charger.",
           "contexts": ["A full charge takes 2.5 hours with the fast charger."]}
    # checks against the context and the question: numbers 3 (of "Vennor 3": the question has it),
    # 5 hours (the question), 3 hours (passes on the question's unitless 3, fact_consistency's rule);
    # names "Vennor" (the question) passes, "Volta" fails -> 4 of 5; against the context alone 1 of 5
    got = co.offline_values(row)
    assert got["Fnnq"] == pytest.approx(4 / 5)
    assert got["Fnn"] == pytest.approx(0 / 5)


def test_nc0_factor_rows_pair_version_17s_score_with_the_check_share(tmp_path):
    rows = {
        "g": {"id": "g", "query": "Hi", "answer": "You're welcome!", "contexts": ["x"]},
        "f": {"id": "f", "query": "How long?", "answer": "The bridge is 124 metres long.",
              "contexts": ["The bridge is 142 metres long."]},
    }
    saved = {"records": {"faithfulness": [
        {"id": "g", "kind": "dialogue", "faithful": True, "score": 0.4, "error": None},
        {"id": "f", "kind": "dialogue", "faithful": False, "score": 0.7, "error": None},
    ]}}
    # the greeting: NC0 1.0, no check -> 1.0; the bridge: 0.7 with its one number check failing -> 0.0
    assert co.nc0_factor_rows(saved, rows) == [("dialogue", True, 1.0, 1.0), ("dialogue", False, 0.7, 0.0)]
    assert co.FNNQ_WEIGHTS == (0.25, 0.5, 1.0)


def test_rescore_with_another_veto_strikes_a_number_taken_from_the_distractor():
    # tests/metrics/generation/test_sentence_mode.py's BELLS, worked there by hand: the evidence
    # sentence of "Crested bell stems reach 20 cm." is the mountain bells' "... 20 cm." (it stands);
    # the one ranked without the number is the crested bells' "... 45 cm." (veto=words strikes it)
    bells = ["Mountain bells grow on ledges. Their stems reach 20 cm.",
             "Crested bells grow in bogs. Their stems reach 45 cm."]
    rows = {"b": {"id": "b", "query": "How tall?", "answer": "Crested bell stems reach 20 cm.", "contexts": bells}}
    claim = {"claim": "Crested bell stems reach 20 cm.", "supported": True, "p_yes": 0.8, "quote": ""}
    saved = {"records": {"faithfulness": [{"id": "b", "kind": "short", "faithful": False, "score": 0.8,
                                           "error": None, "details": {"claims": [claim]}}]}}
    assert co.nc0_rows(saved, rows, rescore=True)[0][2] == pytest.approx(0.8)
    assert co.nc0_rows(saved, rows, rescore=True, veto="words")[0][2] == 0.0


def test_main_reads_the_records_of_the_metric_it_is_given(tmp_path, monkeypatch, capsys):
    # a faithfulness(verdicts=word) run records under that name: --metric reads them as the default's
    data = tmp_path / "rows.jsonl"
    rows = [{"id": i, "query": "How long?", "answer": f"It is {n} metres long.", "contexts": ["It is 142 metres long."]}
            for i, n in (("a", 142), ("b", 124))]
    data.write_text("\n".join(json.dumps(r) for r in rows), encoding="utf-8")
    recs = [{"id": i, "kind": "short", "faithful": y, "score": p, "error": None,
             "details": {"claims": [{"claim": f"It is {n} metres long.", "supported": True, "p_yes": p, "quote": ""}]}}
            for i, y, n, p in (("a", True, 142, 0.6), ("b", False, 124, 0.9))]
    results = tmp_path / "run.json"
    results.write_text(json.dumps({"data": str(data), "records": {"faithfulness(verdicts=word)": recs}}),
                       encoding="utf-8")

    def lines(*flags: str) -> dict[str, list[str]]:
        monkeypatch.setattr("sys.argv", ["combine_offline.py", *flags, "--metric", "faithfulness(verdicts=word)",
                                         str(results)])
        co.main()
        return {x.split()[0]: x.split() for x in capsys.readouterr().out.splitlines()}

    # as recorded: 0.6 against 0.9, the wrong way round (AUROC 0), on both rows
    assert lines()["judge"][2:4] == ["2", "0.000"]
    # rescored: the evidence veto strikes b's 124 metres (its sentence says 142): 0.6 against 0 (AUROC 1)
    assert lines("--rescore")["NC0*Fnnq^1"][2:4] == ["2", "1.000"]
