"""bench/likelihood_check.py: the fact words of an answer and their summed PMI, by hand."""

from __future__ import annotations

import pytest

from .loader import load_bench

lc = load_bench("likelihood_check")


def test_fact_words_are_numbers_and_name_tokens_of_checkworthy_sentences():
    # "Hello there!" is a greeting (not read); "Anna" opens its sentence (never a name); "Dusek" at
    # 18-23, "1911" at 39-43; "Did you know?" is a question (not read)
    answer = "Hello there! Anna Dusek finished it in 1911. Did you know Prague?"
    assert lc.fact_words(answer) == [(18, 23, "Dusek"), (39, 43, "1911")]
    assert answer[18:23] == "Dusek" and answer[39:43] == "1911"


def test_a_word_sums_the_pmi_of_the_tokens_that_overlap_it_in_bytes():
    # tokens: "Né"(3 bytes: N + é) "e has" " 5" "6" " floors" "."; "Née" is the first word, so
    # only "56" is a fact word; it overlaps " 5" (bytes 9-11) and "6" (11-12):
    # PMI (-0.1 - -2.0) + (-9.0 - -2.5) = 1.9 - 6.5 = -4.6 -> struck at TAU 4
    answer = "Née has 56 floors."
    toks = [list("Né".encode()), list(b"e has"), list(b" 5"), list(b"6"),
            list(b" floors"), list(b".")]
    assert sum(len(t) for t in toks) == len(answer.encode())
    lp_ctx = [-1.0, -0.5, -0.1, -9.0, -0.2, -0.1]
    lp_no = [-1.0, -0.5, -2.0, -2.5, -0.2, -0.1]
    (word, pmi), = lc.word_pmis(answer, toks, lp_ctx, lp_no)
    assert word == "56" and pmi == pytest.approx(-4.6)
    rec = {"token_bytes": toks, "lp_ctx": lp_ctx, "lp_no": lp_no}
    lc.score_record(rec, answer)
    assert rec["struck"] == ["56"] and rec["min_pmi"] == pytest.approx(-4.6)


def test_an_answer_with_no_fact_word_strikes_nothing():
    rec = {"token_bytes": [list(b"I love it!")], "lp_ctx": [-9.0], "lp_no": [-1.0]}
    lc.score_record(rec, "I love it!")
    assert rec["struck"] == [] and rec["min_pmi"] is None


def test_combine_halves_the_paired_score_for_each_struck_word():
    # faithful a (J 0.8), b (0.6); unfaithful c (0.9, one word struck -> 0.45), d (0.5); e has an
    # error and f no recorded score: both left out. J: a beats d only, b beats d only -> 2/4;
    # J*LS: every faithful row above both unfaithful ones -> 1; LS: 0 against -1 wins, 0 against 0
    # ties (half) -> (1 + 0.5 + 1 + 0.5) / 4
    checks = [{"records": [{"id": "a", "faithful": True, "struck": []}, {"id": "b", "faithful": True, "struck": []},
                           {"id": "c", "faithful": False, "struck": ["56"]},
                           {"id": "d", "faithful": False, "struck": []},
                           {"id": "e", "faithful": False, "error": "HTTPError"},
                           {"id": "f", "faithful": False, "struck": []}]}]
    res = lc.combine(checks, {"a": 0.8, "b": 0.6, "c": 0.9, "d": 0.5, "e": 0.1, "f": None})
    assert res["rows"] == 4 and res["struck"] == {"faithful": 0, "unfaithful": 1}
    assert res["J"] == pytest.approx(0.5) and res["J*LS"] == pytest.approx(1.0) and res["LS"] == pytest.approx(0.75)

