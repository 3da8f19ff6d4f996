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
