"""Probability-weighted ratings (G-Eval's mean over the rating tokens) of the built-in rated metrics:
correctness, answer_grade, answer_relevancy (no embedder), context_relevancy /
context_precision_llm (graded) and passage_recall, with their hard fallbacks and cache keys.

Token alternatives are written out here (through the loopback OpenAI-compatible server, so the
real backend parses them) or taken from a reply recorded from the real llama-cpp-python server
(tests/judges/recorded/). Every expected value is computed by hand from those probabilities with
r = sum_k k P(k) / sum_k P(k).
"""

from __future__ import annotations

import json
import math
from decimal import ROUND_HALF_UP, Decimal
from pathlib import Path

import pytest

from ragmeter import Sample, evaluate
from ragmeter.judges.backends.openai_compat import _completion_from
from ragmeter.judges.base import TokenLogprob
from ragmeter.metrics.generation._verdict import field_ratings, rating_distribution
from tests.judges.fake_server import Reply

from .rules import answering, judge_rule, spelled

RECORDED = Path(__file__).resolve().parents[2] / "judges" / "recorded"
L = math.log


def tok(token: str, alts: dict[str, float]) -> TokenLogprob:
    """A token with its alternatives given as probabilities (the chosen token among them)."""
    return TokenLogprob(token, L(alts[token]), tuple((a, L(p)) for a, p in alts.items()))


def text_of(toks: list[TokenLogprob]) -> str:
    return "".join(t.token for t in toks)


def smp(i: str = "a", **kw) -> Sample:
    return Sample.model_validate({"id": i, "query": "What is the capital of France?", **kw})


@pytest.fixture
def judge(fake_llm, make_judge):
    fake_llm.rule = judge_rule
    return make_judge()


def recording(fake_llm, rule):
    """Wrap ``rule`` so the test sees every request body."""
    seen: list = []
    fake_llm.rule = lambda call: (seen.append(call), rule(call))[1]
    return seen


# ---- rating_distribution / field_ratings -----------------------------------------------------------

def test_single_digit_scale_sums_every_spelling_and_skips_non_ratings():
    t = tok("4", {"4": 0.4, " 4": 0.1, "3": 0.2, "5": 0.1, "x": 0.1, "7": 0.05, '"': 0.05})
    w = rating_distribution(t, 1, 5, hard=4)
    # "7" is off the 1-5 scale, "x" and '"' are no numbers: out of both sums
    assert w is not None and w.mean == pytest.approx((4 * 0.5 + 3 * 0.2 + 5 * 0.1) / 0.8)
    assert w.distribution == pytest.approx({3: 0.25, 4: 0.625, 5: 0.125}) and w.ambiguous == 0


def test_a_one_chosen_by_the_judge_is_split_by_the_next_token():
    first = tok("1", {"1": 0.7, "9": 0.2, "8": 0.1})
    nxt = tok("0", {"0": 0.8, ",": 0.1, "}": 0.05, ".": 0.05})  # "." (a fraction) reads as neither
    w = rating_distribution(first, 0, 10, hard=10, following=nxt)
    p10, p1 = 0.7 * 0.8 / 0.95, 0.7 * 0.15 / 0.95
    assert w is not None and w.mean == pytest.approx(10 * p10 + 1 * p1 + 9 * 0.2 + 8 * 0.1)
    assert w.distribution[10] == pytest.approx(p10) and w.ambiguous == 0


@pytest.mark.parametrize(("hard", "one_reads"), [(9, 10), (6, 10), (5, 1), (2, 1)])
def test_an_unchosen_one_goes_to_the_reading_nearer_the_hard_rating(hard, one_reads):
    alts = {str(hard): 0.6, "1": 0.3, str(hard + 1 if hard < 9 else 8): 0.1}
    w = rating_distribution(tok(str(hard), alts), 0, 10, hard=hard)
    other = hard + 1 if hard < 9 else 8
    assert w is not None and w.mean == pytest.approx(hard * 0.6 + one_reads * 0.3 + other * 0.1)
    assert w.ambiguous == pytest.approx(0.3)


def test_a_whole_number_tokenizer_makes_one_mean_one():
    w = rating_distribution(tok("9", {"9": 0.5, "10": 0.3, "1": 0.2}), 0, 10, hard=9)
    assert w is not None and w.mean == pytest.approx(9 * 0.5 + 10 * 0.3 + 1 * 0.2) and w.ambiguous == 0


def test_no_rating_on_the_scale_among_the_alternatives_is_none():
    assert rating_distribution(tok("7", {"7": 0.6, "8": 0.3, "x": 0.1}), 1, 5, hard=7) is None


def test_field_ratings_locates_each_rating_and_refuses_what_it_cannot_trust():
    toks = [TokenLogprob('{"ratings": [{"passage": 1, "rating": ', 0.0), tok("7", {"7": 0.5, "6": 0.5}),
            TokenLogprob('}, {"passage": 2, "rating": ', 0.0), tok("3", {"3": 0.75, "2": 0.25}),
            TokenLogprob("}]}", 0.0)]
    text = text_of(toks)
    got = field_ratings(toks, text, "rating", [7, 3], [(0, 10)] * 2)
    assert got is not None and [g.mean for g in got] == pytest.approx([6.5, 2.75])
    # a hard rating that is not the written one: that occurrence is not trusted
    assert field_ratings(toks, text, "rating", [7, 4], [(0, 10)] * 2)[1] is None
    # another number of ratings than parsed, tokens that do not spell the text, no logprobs: none
    assert field_ratings(toks, text, "rating", [7], [(0, 10)]) is None
    assert field_ratings(toks, text + " ", "rating", [7, 3], [(0, 10)] * 2) is None
    assert field_ratings(None, text, "rating", [7, 3], [(0, 10)] * 2) is None


def test_field_ratings_falls_back_for_a_fraction():
    toks = [TokenLogprob('{"rating": ', 0.0), tok("7", {"7": 0.5, "8": 0.5}), TokenLogprob(".5}", 0.0)]
    assert field_ratings(toks, text_of(toks), "rating", [7.5], [(0, 10)]) == [None]


def test_digit_tokens_of_the_recorded_real_server_reply():
    # the real llama-cpp-python server (Qwen2.5-Coder-1.5B) writes numbers digit by digit ("1989" is
    # "1", "9", "8", "9") and a digit's alternatives are its neighbours: the "8" of 1989 came with
    # "9" (-2.79) and "7" (-7.46). Read as a 0-10 rating, that token weighs:
    c = _completion_from(json.loads((RECORDED / "json_object_schema_logprobs.json").read_text())["reply"], "openai")
    digits = [t for t in c.logprobs if t.token.isdigit()]
    assert [t.token for t in digits] == ["9", "1", "9", "8", "9"]
    eight = digits[3]
    lp = dict(eight.alternatives())
    want = (8 * math.exp(lp["8"]) + 9 * math.exp(lp["9"]) + 7 * math.exp(lp["7"])) / sum(
        math.exp(lp[d]) for d in "897")
    w = rating_distribution(eight, 0, 10, hard=8)
    assert w is not None and w.mean == pytest.approx(want) and 8 < w.mean < 8.1
    # the "9" of "9 November" had "1" (-6.19) and "8" (-8.21) beside it: read as a 0-10 rating of 9,
    # that "1" is the start of 10 (the reading nearer 9), and its share is reported as ambiguous
    nine = digits[0]
    lp = dict(nine.alternatives())
    p9, p1, p8 = (math.exp(lp[d]) for d in "918")
    w = rating_distribution(nine, 0, 10, hard=9)
    assert w is not None and w.mean == pytest.approx((9 * p9 + 10 * p1 + 8 * p8) / (p9 + p1 + p8))
    assert w.ambiguous == pytest.approx(p1 / (p9 + p1 + p8))


# ---- the metrics, through the loopback server --------------------------------------------------------

def test_correctness_weights_the_0_to_10_rating_and_keeps_the_hard_one(judge, fake_llm):
    seen = recording(fake_llm, answering("Graded", spelled([
        ('{"reason": "same capital", "rating": ', {}), ("8", {"8": 0.5, "9": 0.2, "1": 0.2, "7": 0.1}), ("}", {})])))
    r = evaluate([smp(answer="Paris", reference="Paris")], ["correctness(scale=graded)"],
                 judge=judge).records[0]["metrics"]["correctness(scale=graded)"]
    w = 8 * 0.5 + 9 * 0.2 + 10 * 0.2 + 7 * 0.1  # "1" next to a hard 8 reads as the start of 10
    assert r["score"] == pytest.approx(w / 10)
    d = r["details"]
    assert d["rating"] == 8 and d["weighted_rating"] == pytest.approx(w) and d["scoring"] == "probability"
    assert d["distribution"] == pytest.approx({"7": 0.1, "8": 0.5, "9": 0.2, "10": 0.2})
    assert d["ambiguous"] == pytest.approx(0.2)
    assert len(seen) == 1 and seen[0].body["logprobs"] is True and seen[0].body["top_logprobs"] == 10


def test_answer_grade_weights_the_1_to_5_grade(judge, fake_llm):
    fake_llm.rule = answering("Grade", spelled([('{"reasoning": "close", "grade": ', {}),
                                                ("4", {"4": 0.6, "5": 0.2, "3": 0.1, "0": 0.05, "x": 0.05}),
                                                ("}", {})]))
    r = evaluate([smp(answer="Paris", reference="Paris")], ["answer_grade"], judge=judge).records[0]["metrics"][
        "answer_grade"]
    g = (4 * 0.6 + 5 * 0.2 + 3 * 0.1) / 0.9  # 0 is off the 1-5 scale, "x" no number
    assert r["score"] == pytest.approx((g - 1) / 4)
    assert r["details"]["grade"] == 4 and r["details"]["weighted_grade"] == pytest.approx(g)
    assert r["details"]["scoring"] == "probability" and len(fake_llm.log) == 1


def test_answer_relevancy_without_embedder_weights_the_rating(judge, fake_llm):
    fake_llm.rule = answering("Graded", spelled([('{"reason": "on topic", "rating": ', {}),
                                                 ("6", {"6": 0.5, "5": 0.25, "7": 0.25}), ("}", {})]))
    name = "answer_relevancy(scale=graded)"
    r = evaluate([smp(answer="Paris.")], [name], judge=judge).records[0]["metrics"][name]
    assert r["score"] == pytest.approx((6 * 0.5 + 5 * 0.25 + 7 * 0.25) / 10)
    assert r["details"]["rating"] == 6 and r["details"]["scoring"] == "probability"


def test_binary_correctness_is_the_expected_rating_of_the_two_verdicts(judge, fake_llm):
    fake_llm.rule = answering("Agreement", spelled([
        ('{"reason": "r", "same_answer": "', {}), ("yes", {"yes": 0.8, "no": 0.2}),
        ('", "conflicts": "', {}), ("no", {"no": 0.6, "yes": 0.3, "No": 0.1}), ('"}', {})]))
    r = evaluate([smp(answer="Paris", reference="Paris")], ["correctness(decision=reasoned)"],
                 judge=judge).records[0]["metrics"]["correctness(decision=reasoned)"]
    p_same, p_conf = 0.8, 0.3  # P(conflicts = yes) = 0.3 / (0.3 + 0.6 + 0.1)
    assert r["score"] == pytest.approx(p_same * (10 - 5 * p_conf) / 10)  # 0.68
    d = r["details"]
    assert (d["same_answer"], d["conflicts"], d["rating"]) == (True, False, 10.0)
    assert d["p_same_answer"] == pytest.approx(0.8) and d["p_conflicts"] == pytest.approx(0.3)
    assert d["scoring"] == "probability" and d["weighted_rating"] == pytest.approx(6.8)


def test_binary_answer_relevancy_scores_p_yes_of_responds(judge, fake_llm):
    fake_llm.rule = answering("Responds", spelled([('{"reason": "r", "responds": "', {}),
                                                   ("no", {"no": 0.55, "yes": 0.45}), ('"}', {})]))
    # the reasoned yes/no decision (method=judge, scale=binary, decision=reasoned)
    name = "answer_relevancy(decision=reasoned)"
    r = evaluate([smp(answer="Lyon.")], [name], judge=judge).records[0]["metrics"][name]
    assert r["score"] == pytest.approx(0.45) and r["details"]["responds"] is False
    assert r["details"]["scoring"] == "probability" and r["details"]["p_yes"] == pytest.approx(0.45)


def chunk_reply(*ratings: tuple[str, dict[str, float]]) -> Reply:
    parts: list[tuple[str, dict[str, float]]] = [('{"ratings": [', {})]
    for i, (t, alts) in enumerate(ratings, start=1):
        parts += [(f'{", " if i > 1 else ""}{{"passage": {i}, "reason": "r", "rating": ', {}), (t, alts), ("}", {})]
    return spelled([*parts, ("]}", {})])


def test_graded_chunks_are_weighted_and_context_precision_shares_the_call(judge, fake_llm):
    # chunk 1: hard 6, weighted 4.6 (< threshold 5); chunk 2: hard 2, weighted 2.4; chunk 3: hard 9
    fake_llm.rule = answering("Ratings", chunk_reply(("6", {"6": 0.4, "2": 0.6}),
                                                     ("2", {"2": 0.6, "3": 0.4}),
                                                     ("9", {"9": 0.8, "8": 0.2})))
    s = smp(answer="x", contexts=["a", "b", "c"])
    names = ["context_relevancy(scale=graded)", "context_precision_llm(scale=graded)"]  # scoring auto: the default
    m = evaluate([s], names, judge=judge).records[0]["metrics"]
    r1, r2, r3 = 6 * 0.4 + 2 * 0.6, 2 * 0.6 + 3 * 0.4, 9 * 0.8 + 8 * 0.2
    cr = m[names[0]]
    assert cr["score"] == pytest.approx((r1 + r2 + r3) / 30) and cr["details"]["scoring"] == "probability"
    assert [c["rating"] for c in cr["details"]["chunks"]] == pytest.approx([r1, r2, r3])
    assert [c["hard_rating"] for c in cr["details"]["chunks"]] == [6, 2, 9]
    # only chunk 3 reaches the threshold 5 once weighted: CP = Precision@3 * 1 / 1 = 1/3
    cp = m[names[1]]
    assert cp["details"]["relevant_ranks"] == [3] and cp["score"] == pytest.approx(1 / 3)
    assert cp["details"]["hard_ratings"] == [6, 2, 9]  # what judge-check's [hard] row reads
    assert len(fake_llm.log) == 1


def test_graded_chunk_ratings_with_scoring_hard_ask_no_logprobs(judge, fake_llm):
    # the same reply as above; with scoring=hard (what measured better for the one-call rating)
    # the written ratings 6, 2, 9 are used, so chunks 1 and 3 reach the threshold 5:
    # CP = (Precision@1 + Precision@3) / 2 = (1 + 2/3) / 2
    reply = chunk_reply(("6", {"6": 0.4, "2": 0.6}), ("2", {"2": 0.6, "3": 0.4}), ("9", {"9": 0.8, "8": 0.2}))
    seen = recording(fake_llm, answering("Ratings", reply))
    names = ["context_relevancy(scale=graded,scoring=hard)", "context_precision_llm(scale=graded,scoring=hard)"]
    m = evaluate([smp(answer="x", contexts=["a", "b", "c"])], names, judge=judge).records[0]["metrics"]
    assert len(seen) == 1 and "logprobs" not in seen[0].body and "top_logprobs" not in seen[0].body
    cr, cp = m[names[0]], m[names[1]]
    assert cr["score"] == pytest.approx((6 + 2 + 9) / 30) and cr["details"]["scoring"] == "hard"
    assert [c["rating"] for c in cr["details"]["chunks"]] == [6, 2, 9]
    assert cp["details"]["relevant_ranks"] == [1, 3] and cp["score"] == pytest.approx((1 + 2 / 3) / 2)


def test_a_chunk_whose_rating_cannot_be_trusted_keeps_its_hard_value(judge, fake_llm):
    # chunk 1 is rated 7.5: not a whole number, so its hard rating is kept; chunk 2 is weighted
    fake_llm.rule = answering("Ratings", spelled([
        ('{"ratings": [{"passage": 1, "reason": "r", "rating": ', {}), ("7", {"7": 0.5, "5": 0.5}), (".5", {}),
        ('}, {"passage": 2, "reason": "r", "rating": ', {}), ("4", {"4": 0.5, "2": 0.5}), ("}]}", {})]))
    r = evaluate([smp(contexts=["a", "b"])], ["context_relevancy(scale=graded)"], judge=judge).records[0]["metrics"][
        "context_relevancy(scale=graded)"]
    assert [c["rating"] for c in r["details"]["chunks"]] == pytest.approx([7.5, 3.0])
    assert [c["scoring"] for c in r["details"]["chunks"]] == ["hard", "probability"]
    assert r["details"]["scoring"] == "mixed" and r["score"] == pytest.approx((0.75 + 0.3) / 2)


def half_up(x: float) -> float:
    return float(Decimal(repr(x)).quantize(Decimal("0.01"), ROUND_HALF_UP))


def test_passage_recall_weights_each_section_score(judge, fake_llm):
    def sec(label: str, t: str, alts: dict[str, float], first: bool = False) -> list[tuple[str, dict[str, float]]]:
        return [(f'{"" if first else ", "}{{"section": "{label}", "reasoning": "r", "score": ', {}), (t, alts),
                ("}", {})]

    # the judge answers the sections out of order (B1 first): scores are matched by label
    fake_llm.rule = answering("SectionScores", spelled([
        ('{"sections": [', {}),
        *sec("B1", "2", {"2": 0.5, "0": 0.25, "4": 0.25}, first=True),
        *sec("E1", "4", {"4": 0.5, "5": 0.3, "0": 0.2}),  # 0 is off an ESSENTIAL section's 1-5 scale
        *sec("E2", "1", {"1": 0.5, "2": 0.5}),
        ("]}", {})]))
    ref = "[ESSENTIAL PASSAGE] Paris is the capital. [ESSENTIAL PASSAGE] It is on the Seine. [BONUS PASSAGE] 2M people."
    r = evaluate([smp(answer="Paris is the capital of France.", reference=ref)], ["passage_recall(scale=graded)"],
                 judge=judge).records[0]["metrics"]["passage_recall(scale=graded)"]
    e1, e2, b1 = (4 * 0.5 + 5 * 0.3) / 0.8, 1.5, 2 * 0.5 + 4 * 0.25
    final = half_up(min(5.0, (e1 + e2) / 2 + b1 / (2 * 2 * 1)))
    d = r["details"]
    assert d["essential"] == [4, 1] and d["bonus"] == [2]
    assert d["weighted_essential"] == pytest.approx([e1, e2]) and d["weighted_bonus"] == pytest.approx([b1])
    assert d["final"] == pytest.approx(final) and r["score"] == pytest.approx(final / 5)
    assert d["hard_final"] == pytest.approx(half_up((4 + 1) / 2 + 2 / 4)) and d["scoring"] == "probability"
    assert [x["section"] for x in d["sections"]] == ["E1", "E2", "B1"] and len(fake_llm.log) == 1


# ---- fallbacks and the cache key ---------------------------------------------------------------------

@pytest.mark.parametrize(("name", "answer", "want"), [
    ("correctness(scale=graded)", "Paris [rating 8]", 0.8), ("answer_grade", "Paris [grade 4]", 0.75),
    ("answer_relevancy(scale=graded)", "Paris. [rating 7]", 0.7), ("passage_recall", "Paris is the capital.", 1.0)])
def test_without_logprobs_every_metric_uses_the_hard_rating(judge, fake_llm, name, answer, want):
    seen = recording(fake_llm, judge_rule)  # the rule-based judge sends no logprobs
    s = smp(answer=answer, reference="[ESSENTIAL PASSAGE] Paris is the capital." if name == "passage_recall"
            else "Paris")
    r = evaluate([s], [name], judge=judge).records[0]["metrics"][name]
    assert r["score"] == pytest.approx(want) and r["details"]["scoring"] == "hard"
    assert len(seen) == 1 and seen[0].body["top_logprobs"] == 10


@pytest.mark.parametrize("name", ["correctness(scale=graded,scoring=hard)", "answer_grade(scoring=hard)",
                                  "answer_relevancy(scale=graded,scoring=hard)", "context_relevancy(scoring=hard)",
                                  "passage_recall(scoring=hard)"])
def test_scoring_hard_asks_no_logprobs_and_ignores_any_sent(judge, fake_llm, name):
    reply = spelled([('{"reason": "r", "rating": ', {}), ("3", {"3": 0.5, "9": 0.5}), ("}", {})])
    seen = recording(fake_llm, answering("Graded", reply))
    s = smp(answer="Paris [grade 3]", reference="[ESSENTIAL PASSAGE] Paris is the capital.", contexts=["x [rating 3]"])
    (r,) = evaluate([s], [name], judge=judge).records[0]["metrics"].values()  # one metric
    assert r["details"]["scoring"] == "hard" and len(seen) == 1 and "logprobs" not in seen[0].body
    if name.startswith(("correctness", "answer_relevancy")):
        assert r["score"] == pytest.approx(0.3)  # the hard 3 of the reply, not (3 + 9) / 2


def test_scoring_mode_is_in_the_cache_key_and_weighted_ratings_come_back_from_the_cache(make_judge, fake_llm,
                                                                                        tmp_path):
    reply = spelled([('{"reason": "r", "rating": ', {}), ("8", {"8": 0.5, "6": 0.5}), ("}", {})])
    fake_llm.rule = lambda call: reply if "logprobs" in call.body else judge_rule(call)
    names = ["correctness(scale=graded)", "correctness(scale=graded,scoring=hard)"]
    s = smp(answer="Paris [rating 8]", reference="Paris")
    judge = make_judge(cache=tmp_path / "c.sqlite3")
    first = evaluate([s], names, judge=judge).records[0]["metrics"]
    assert len(fake_llm.log) == 2  # one request per scoring mode
    assert first[names[0]]["score"] == pytest.approx(0.7) and first[names[1]]["score"] == pytest.approx(0.8)
    judge.close()
    fake_llm.clear_log()
    again = make_judge(cache=tmp_path / "c.sqlite3")
    second = evaluate([s], names, judge=again).records[0]["metrics"]
    assert len(fake_llm.log) == 0  # both from the cache, the log-probabilities with them
    for n in names:
        assert second[n]["score"] == pytest.approx(first[n]["score"])
        assert second[n]["details"]["scoring"] == first[n]["details"]["scoring"]


def test_chunk_metrics_share_their_call_only_under_the_same_scoring(judge, fake_llm):
    seen = recording(fake_llm, judge_rule)
    s = smp(contexts=["a [rating 8]", "b [rating 2]"])
    names = ["context_relevancy(scale=graded)", "context_precision_llm(scale=graded,scoring=hard)"]
    run = evaluate([s], names, judge=judge)
    assert len(seen) == 2 and sorted("logprobs" in c.body for c in seen) == [False, True]
    assert run.records[0]["metrics"][names[0]]["score"] == pytest.approx(0.5)


# ---- passage_recall(scale=binary,decision=reasoned): one yes/no decision per section in one reply --------

def test_passage_recall_binary_maps_each_sections_p_yes_onto_its_scale(judge, fake_llm):
    def sec(label: str, t: str, alts: dict[str, float], first: bool = False) -> list[tuple[str, dict[str, float]]]:
        return [(f'{"" if first else ", "}{{"section": "{label}", "reasoning": "r", "contains": "', {}), (t, alts),
                ('"}', {})]

    # out of order again (B1 first); "yes" and "no" among other alternatives, which do not count
    seen = recording(fake_llm, answering("SectionVerdicts", spelled([
        ('{"sections": [', {}),
        *sec("B1", "no", {"no": 0.6, "yes": 0.2, "maybe": 0.2}, first=True),
        *sec("E1", "yes", {"yes": 0.72, "no": 0.18, "Yes": 0.08, "the": 0.02}),
        *sec("E2", "no", {"no": 0.5, "No": 0.25, "yes": 0.25}),
        ("]}", {})])))
    ref = "[ESSENTIAL PASSAGE] Paris is the capital. [ESSENTIAL PASSAGE] It is on the Seine. [BONUS PASSAGE] 2M people."
    r = evaluate([smp(answer="Paris is the capital of France.", reference=ref)],
                 ["passage_recall(scale=binary,decision=reasoned)"], judge=judge)
    r = r.records[0]["metrics"]["passage_recall(decision=reasoned)"]
    p_e1, p_e2, p_b1 = 0.80 / 0.98, 0.25 / 1.0, 0.2 / 0.8  # P(yes) / (P(yes) + P(no)), case-folded
    e1, e2, b1 = 1 + 4 * p_e1, 1 + 4 * p_e2, 5 * p_b1
    final = half_up(min(5.0, (e1 + e2) / 2 + b1 / (2 * 2 * 1)))
    d = r["details"]
    assert [x["section"] for x in d["sections"]] == ["E1", "E2", "B1"]
    assert [x["contains"] for x in d["sections"]] == [True, False, False]
    assert [x["p_yes"] for x in d["sections"]] == pytest.approx([p_e1, p_e2, p_b1])
    assert d["essential"] == [5, 1] and d["bonus"] == [0] and d["hard_final"] == pytest.approx(3.0)
    assert d["final"] == pytest.approx(final) and r["score"] == pytest.approx(final / 5)
    assert d["scoring"] == "probability" and "E2" in r["reason"]
    assert len(seen) == 1 and seen[0].body["top_logprobs"] == 10


@pytest.mark.parametrize(("name", "logprobs"), [("passage_recall(scale=binary,decision=reasoned)", True),
                                                ("passage_recall(scale=binary,decision=reasoned,scoring=hard)", False)])
def test_passage_recall_binary_without_probabilities_uses_the_hard_decisions(judge, fake_llm, name, logprobs):
    seen = recording(fake_llm, judge_rule)  # the rule-based judge: contained iff the text occurs; no logprobs
    ref = ("[ESSENTIAL PASSAGE] Paris is the capital [ESSENTIAL PASSAGE] It has 20 districts "
           "[BONUS PASSAGE] On the Seine")
    s = smp(answer="Yes: Paris is the capital, on the Seine.", reference=ref)
    r = next(iter(evaluate([s], [name], judge=judge).records[0]["metrics"].values()))
    # E1 yes (5), E2 no (1), B1 yes (5): (5 + 1) / 2 + 5 / (2 * 2 * 1) = 4.25
    assert r["details"]["final"] == pytest.approx(4.25) and r["score"] == pytest.approx(0.85)
    assert r["details"]["scoring"] == "hard" and len(seen) == 1
    assert ("top_logprobs" in seen[0].body) is logprobs
    assert "passage_contains" not in seen[0].user_text and "contains" in seen[0].user_text


def test_passage_recall_binary_short_reply_is_an_error_not_a_score(judge, fake_llm):
    fake_llm.rule = answering("SectionVerdicts", {"sections": [{"section": "E1", "reasoning": "r", "contains": "yes"}]})
    ref = "[ESSENTIAL PASSAGE] Paris is the capital. [ESSENTIAL PASSAGE] It is on the Seine."
    r = evaluate([smp(answer="Paris.", reference=ref)], ["passage_recall(scale=binary,decision=reasoned)"],
                 judge=judge).records[0]["metrics"]["passage_recall(decision=reasoned)"]
    assert r["score"] is None and r["error"]["type"] == "JudgeParseError"
    assert len(fake_llm.log) == 2  # the reply, then one repair request
