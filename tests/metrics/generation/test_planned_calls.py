"""The judge calls a run plans before its first call (``CallPlan``, from each metric's
``planned_calls``) against the calls the loopback server then receives.

Hand counts, for the samples below (3 distinct chunks each; row 3 has an empty answer, row 4 no
context): faithfulness 2 calls on rows 1-2 (claims, then their verdicts) and none on rows 3-4,
planned with half a call more for row 2, whose answer has two check-worthy sentences (one more
claim call is made for an answer sentence the claims leave out: about every other answer of two
sentences or more; this fake judge's claims are the answer's sentences, so it is never made here,
and the plan of 4.5 calls is shown rounded half up, 5);
answer_relevancy one call on every row with an answer (1, 2, 4); context_relevancy one call per
chunk on rows 1-3. ``faithfulness(steps=shared)`` takes its claims from the analysis call that
``answer_relevancy(method=questions)`` makes, so with it the pair costs one call less per row with
a context.
"""

from __future__ import annotations

import pytest

from ragmeter import Sample, evaluate
from ragmeter.engines.driver import CallPlan
from ragmeter.registry import get_evaluator

from .rules import block, judge_rule, schema_of
from .test_judged_metrics import CTX, BagOfWordsEmbedder


def rows() -> list[Sample]:
    ctx = [[f"{c} Row {i}." for c in CTX] for i in range(4)]
    return [
        Sample(id="1", query="What is the capital of France?", answer="Paris is the capital of France.",
               contexts=ctx[0], relevant=[ctx[0][0]]),
        Sample(id="2", query="Which country is Paris in?", answer="Paris is in France. France is in Europe.",
               contexts=ctx[1]),
        Sample(id="3", query="What is cheese made from?", answer="", contexts=ctx[2]),
        Sample(id="4", query="Where is France?", answer="France is in Europe.", contexts=[]),
    ]


#: metrics -> (planned calls counted by hand, calls the fake judge receives, exact)
CASES = {
    ("faithfulness",): (5, 4, False),
    ("faithfulness(mode=direct)",): (2, 2, True),
    ("faithfulness(verdicts=bare)",): (5, 4, False),
    # claims, quotes, verdicts for each of the two rows with an answer and contexts (+ 0.5)
    ("faithfulness(verdicts=after_quotes)", "hallucination_rate(verdicts=after_quotes)"): (7, 6, False),
    # the quotes written offline: claims and verdicts, as the default
    ("faithfulness(verdicts=given_quotes)", "hallucination_rate(verdicts=given_quotes)"): (5, 4, False),
    # one list per row of 1 and 2 check-worthy sentences, two calls each
    ("faithfulness(mode=sentences,verdicts=after_quotes)",): (4, 4, True),
    ("faithfulness(mode=sentences,verdicts=given_quotes)",): (2, 2, True),
    # the first words of each quote: claims and verdicts, as the default
    ("faithfulness(verdicts=short_quotes)", "hallucination_rate(verdicts=short_quotes)"): (5, 4, False),
    ("faithfulness(mode=sentences,verdicts=short_quotes)",): (2, 2, True),
    ("faithfulness(verdicts=capped_quotes)",): (5, 4, False),
    ("faithfulness(mode=inline)",): (2, 2, True),
    ("faithfulness", "hallucination_rate"): (5, 4, False),
    ("answer_relevancy",): (3, 3, True),
    ("context_relevancy",): (9, 9, True),
    ("context_relevancy", "context_precision_llm"): (9, 9, True),
    ("context_relevancy(scale=graded)",): (3, 3, True),
    ("faithfulness", "answer_relevancy(method=questions)"): (5 + 3, 4 + 3, False),
    ("faithfulness(steps=shared)", "answer_relevancy(method=questions)"): (5 + 1, 4 + 1, False),
    ("faithfulness(steps=separate)", "answer_relevancy(method=questions,steps=separate)"): (5 + 3, 4 + 3, False),
    ("faithfulness", "answer_relevancy", "context_relevancy", "context_recall"): (5 + 3 + 9, 4 + 3 + 9, False),
}


@pytest.fixture
def judge(fake_llm, make_judge):
    fake_llm.rule = judge_rule
    return make_judge()


@pytest.mark.parametrize("metrics", list(CASES), ids=[", ".join(m) for m in CASES])
def test_planned_calls_against_the_calls_made(judge, fake_llm, metrics):
    planned, received, exact = CASES[metrics]
    evaluate(rows(), list(metrics), judge=judge, embedder=BagOfWordsEmbedder())
    stats = judge.stats()
    assert (stats["planned"], stats["planned_rows"], stats["planned_exact"]) == (planned, 4, exact)
    assert len(fake_llm.log) == received  # what the server received
    assert planned == received or not exact


def test_a_plan_that_depends_on_the_reply_is_an_estimate(make_judge):
    # the verdict call is made only when the judge lists claims: planned, not exact
    plan = CallPlan()
    plan.add([get_evaluator("faithfulness", judge=make_judge())], rows()[:1])
    assert (plan.calls, plan.rows, plan.exact) == (2, 1, False)


def test_the_claim_call_for_left_out_sentences_is_planned_as_half_a_call(make_judge):
    # two check-worthy sentences: claims, verdicts and, for about every other such answer, one more
    # claim call for a sentence the claims leave out; one sentence: no more call planned
    plan = CallPlan()
    evs = [get_evaluator("faithfulness", judge=make_judge()), get_evaluator("hallucination_rate", judge=make_judge())]
    plan.add(evs, rows()[1:2])
    assert (plan.calls, plan.exact) == (2.5, False)
    plan.add(evs, rows()[:1])
    assert plan.calls == 4.5
    assert plan.as_stats()["planned"] == 5  # rounded half up


def test_the_claim_call_for_left_out_sentences_is_made(fake_llm, make_judge):
    # the claims leave out the second sentence: the judge is asked for its claims in one more call
    def rule(call):
        if schema_of(call) == "Claims" and "Paris" in block(call.user_text, "answer"):
            return {"claims": ["Paris is in France."], "no_facts": "no"}
        return judge_rule(call)

    fake_llm.rule = rule
    judge = make_judge()
    run = evaluate(rows()[1:2], ["faithfulness"], judge=judge)
    assert len(fake_llm.log) == 3
    assert [c["claim"] for c in run.records[0]["metrics"]["faithfulness"]["details"]["claims"]] == [
        "Paris is in France.", "France is in Europe."]
    assert judge.stats()["planned"] == 3  # 2.5, rounded half up


def test_a_judged_metric_without_steps_makes_the_plan_inexact(make_judge):
    ev = get_evaluator("correctness", judge=make_judge())
    plan = CallPlan()
    plan.add([ev], rows())
    # one call per row, an estimate (correctness plans no steps of its own)
    assert (plan.calls, plan.exact) == (4, False)


def test_summary_keeps_no_plan(judge):
    run = evaluate(rows()[:1], ["faithfulness(mode=direct)"], judge=judge)
    assert judge.stats()["planned"] == 1
    assert not {"planned", "planned_rows", "planned_exact"} & set(run.run["judge"])


def rows_with_copies() -> list[Sample]:
    """:func:`rows` and a copy of rows 1 and 2 under other ids (the same query, answer and contexts)."""
    base = rows()
    return [*base, base[0].model_copy(update={"id": "1b"}), base[1].model_copy(update={"id": "2b"})]


#: metrics -> planned calls for :func:`rows_with_copies`, by hand: a step shared through the run's
#: memo (the direct verdict, the chunk decisions, the claims and their verdicts, the sentence
#: checks) is made once for a row and its copy; the one-word answer_relevancy decision is not
#: shared, so each copy has its own call
COPY_CASES = {
    ("faithfulness(mode=direct)",): 2,
    ("faithfulness(mode=sentences)",): 3,  # rows 1 and 2: one, two check-worthy sentences
    ("context_relevancy",): 9,
    ("answer_relevancy",): 3 + 2,
    ("faithfulness(mode=direct)", "answer_relevancy", "context_relevancy"): 2 + 5 + 9,
}


@pytest.mark.parametrize("metrics", list(COPY_CASES), ids=[", ".join(m) for m in COPY_CASES])
def test_a_copied_row_plans_only_the_calls_it_makes(judge, fake_llm, metrics):
    evaluate(rows_with_copies(), list(metrics), judge=judge)
    stats = judge.stats()
    assert stats["planned"] == COPY_CASES[metrics] == stats["calls"] == len(fake_llm.log)
