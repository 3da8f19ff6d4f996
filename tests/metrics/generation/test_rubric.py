"""Rubric metrics end to end: defined in Python or in ragmeter.yaml, judged through
the real judge layer against the loopback OpenAI-compatible server, probability-weighted from the
server's log-probabilities. Every expected score is computed by hand from the replies scripted here
(the rule-based judge of ``rules.py``: "[rating N]" in the data -> rating N)."""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner

from ragmeter import Sample, evaluate, get_evaluator
from ragmeter import registry as reg
from ragmeter.cli import main
from ragmeter.config import parse_config
from ragmeter.errors import InputError, InvalidParameterError
from ragmeter.judges import from_spec
from ragmeter.metrics.generation.rubric import Rubric, register_rubric
from tests.judges.fake_server import FakeLLMServer, Reply
from tests.metrics.generation.test_context_fit import ANSWER, ARTICLE, FACTS, FILLER, small_window

from .rules import answering, judge_rule, spelled


@pytest.fixture(autouse=True)
def registry_snapshot(monkeypatch):
    """Rubrics registered by a test are gone after it (the registry is process-global)."""
    reg._ensure_loaded()
    monkeypatch.setattr(reg, "_REGISTRY", dict(reg._REGISTRY))
    monkeypatch.setattr(reg, "_ALIASES", dict(reg._ALIASES))


@pytest.fixture
def judge(fake_llm, make_judge):
    fake_llm.rule = judge_rule
    return make_judge()


def s(i="a", **kw):
    return Sample.model_validate({"id": i, "query": "What is the capital of France?", **kw})


def test_python_rubric_on_1_to_5_with_steps_written_once_by_the_judge(judge, fake_llm):
    spec = register_rubric("politeness", "The answer is courteous and never blames the user.")
    assert spec.version.startswith("rubric-") and spec.needs_judge and spec.requires == ("query", "answer")
    run = evaluate([s("a", answer="Paris. [rating 4]"), s("b", answer="Paris! [rating 1]")], ["politeness"],
                   judge=judge)
    a, b = (r["metrics"]["politeness"] for r in run.records)
    assert a["score"] == pytest.approx((4 - 1) / 4) and b["score"] == 0.0
    assert a["details"]["rating"] == 4 and a["details"]["scoring"] == "hard"  # this server sends no logprobs
    assert a["details"]["steps"] == ["Read the data.", "Check the criteria."] and a["details"]["steps_from"] == "judge"
    assert a["version"] == spec.version
    # one steps call for the run, then one grading call per sample
    assert [e.schema for e in fake_llm.log].count("RubricSteps") == 1 and len(fake_llm.log) == 3
    grading = [e for e in fake_llm.log if e.schema == "RubricRating"]
    assert all("The answer is courteous and never blames the user." in e.user_text for e in grading)
    assert all("1. Read the data.\n2. Check the criteria." in e.user_text for e in grading)


def test_the_rating_schema_holds_the_scale_and_logprobs_are_asked(judge, fake_llm):
    seen = []
    fake_llm.rule = lambda call: (seen.append(call), judge_rule(call))[1]
    register_rubric("politeness", "Courteous.", steps=["Read it."])
    evaluate([s(answer="[rating 3]")], ["politeness"], judge=judge)
    (call,) = seen  # steps given: no steps call
    schema = call.body["response_format"]["json_schema"]["schema"]
    assert (schema["properties"]["rating"]["minimum"], schema["properties"]["rating"]["maximum"]) == (1, 5)
    assert schema["required"] == ["reason", "rating"]
    assert call.body["logprobs"] is True and call.body["top_logprobs"] == 10


def test_probability_weighted_rating_over_the_rating_token(judge, fake_llm):
    register_rubric("politeness", "Courteous.", steps=["Read it."])
    alts = {"4": 0.5, "3": 0.3, "5": 0.1, "x": 0.05, " 2": 0.05}
    fake_llm.rule = answering("RubricRating", spelled([('{"reason": "ok", "rating": ', {}), ("4", alts), ("}", {})]))
    r = evaluate([s(answer="Paris.")], ["politeness"], judge=judge).records[0]["metrics"]["politeness"]
    w = (4 * 0.5 + 3 * 0.3 + 5 * 0.1 + 2 * 0.05) / (0.5 + 0.3 + 0.1 + 0.05)  # "x" is no rating
    assert r["details"]["weighted_rating"] == pytest.approx(w) and r["details"]["rating"] == 4
    assert r["score"] == pytest.approx((w - 1) / 4) and r["details"]["scoring"] == "probability"


def test_yes_no_rubric_scores_p_yes(judge, fake_llm):
    register_rubric("cites_context", "Every fact in the answer is in the contexts.", steps=["Compare."],
                    inputs=["answer", "contexts"], scale="yes/no")
    alts = {"yes": 0.6, "no": 0.3, "Yes": 0.05, "maybe": 0.05}
    fake_llm.rule = answering("RubricVerdict", spelled([('{"reason": "ok", "verdict": "', {}), ("yes", alts),
                                                         ('"}', {})]))
    r = evaluate([s(answer="Paris.", contexts=["Paris is the capital."])], ["cites_context"],
                 judge=judge).records[0]["metrics"]["cites_context"]
    assert r["score"] == pytest.approx(0.65 / 0.95) and r["details"]["verdict"] == "yes"
    assert r["details"]["p_yes"] == pytest.approx(0.65 / 0.95) and r["details"]["scoring"] == "probability"
    # without logprobs (the rule-based judge): the hard verdict, 1 or 0
    fake_llm.rule = judge_rule
    hard = evaluate([s("y", answer="[yes] Paris.", contexts=["c"]), s("n", answer="Paris.", contexts=["c"])],
                    ["cites_context"], judge=judge)
    assert [x["metrics"]["cites_context"]["score"] for x in hard.records] == [1.0, 0.0]
    assert get_evaluator("cites_context", judge=judge).spec.role == "answer"


def test_0_to_10_asks_logprobs_and_uses_the_hard_rating_without_them(judge, fake_llm):
    seen = []
    fake_llm.rule = lambda call: (seen.append(call), judge_rule(call))[1]
    register_rubric("detail", "The answer is detailed.", steps=["Read it."], scale="0-10")
    run = evaluate([s("a", answer="[rating 10]"), s("b", answer="[rating 7]")], ["detail"], judge=judge)
    assert [x["metrics"]["detail"]["score"] for x in run.records] == [1.0, pytest.approx(0.7)]
    assert all(x["metrics"]["detail"]["details"]["scoring"] == "hard" for x in run.records)  # no logprobs sent
    assert all(c.body["top_logprobs"] == 10 for c in seen)


def test_0_to_10_rating_of_10_is_split_by_the_next_token(judge, fake_llm):
    # Qwen writes 10 as "1", "0": the first token's "1" is 1 or 10, split by the second token's
    # alternatives: P(10 | "1") = 0.9 / (0.9 + 0.1) ("0" continues the number, "}" ends it)
    register_rubric("detail", "The answer is detailed.", steps=["Read it."], scale="0-10")
    fake_llm.rule = answering("RubricRating", spelled([('{"reason": "ok", "rating": ', {}),
                                                       ("1", {"1": 0.6, "9": 0.3, "8": 0.1}),
                                                       ("0", {"0": 0.9, "}": 0.1}), ("}", {})]))
    r = evaluate([s(answer="Paris.")], ["detail"], judge=judge).records[0]["metrics"]["detail"]
    p10, p1 = 0.6 * 0.9, 0.6 * 0.1
    w = (10 * p10 + 1 * p1 + 9 * 0.3 + 8 * 0.1) / (p10 + p1 + 0.3 + 0.1)
    assert r["details"]["rating"] == 10 and r["details"]["weighted_rating"] == pytest.approx(w)
    assert r["score"] == pytest.approx(w / 10) and r["details"]["scoring"] == "probability"
    assert r["details"]["distribution"] == pytest.approx({"1": p1, "8": 0.1, "9": 0.3, "10": p10})


def test_unreadable_or_off_scale_reply_is_a_parse_error_on_that_sample(judge, fake_llm):
    register_rubric("politeness", "Courteous.", steps=["Read it."])

    def rule(call):
        if "[broken]" in call.user_text:
            return Reply.malformed("I would say four")
        if "[seven]" in call.user_text:
            return {"reason": "r", "rating": 7}
        return judge_rule(call)

    fake_llm.rule = rule
    run = evaluate([s("a", answer="[broken]"), s("b", answer="[seven]"), s("c", answer="[rating 5]")], ["politeness"],
                   judge=judge)
    recs = [x["metrics"]["politeness"] for x in run.records]
    assert [r["error"]["type"] if r["error"] else None for r in recs] == ["JudgeParseError", "JudgeParseError", None]
    assert recs[0]["score"] is None and recs[1]["score"] is None and recs[2]["score"] == 1.0
    assert run.summary()["politeness"]["errors"] == 2 and run.summary()["politeness"]["n"] == 1
    assert len(fake_llm.log) == 2 + 2 + 1  # each bad reply was asked once more (repair)


def test_blank_steps_from_the_judge_are_an_error_not_a_rubric_without_steps(judge, fake_llm):
    register_rubric("politeness", "Courteous.")
    fake_llm.rule = answering("RubricSteps", {"steps": [" "]})
    r = evaluate([s(answer="[rating 5]")], ["politeness"], judge=judge).records[0]["metrics"]["politeness"]
    assert r["score"] is None and r["error"]["type"] == "JudgeParseError"


def test_an_empty_input_is_undefined_without_a_call(judge, fake_llm):
    register_rubric("grounded", "Uses the contexts.", steps=["Read."], inputs=["answer", "contexts"])
    r = get_evaluator("grounded", judge=judge).evaluate(s(answer="Paris.", contexts=[" "]))
    assert r.score is None and r.error is None and "contexts" in r.reason and fake_llm.log == []


def test_version_and_prompt_change_with_the_criteria(judge, fake_llm):
    v1 = register_rubric("politeness", "Courteous.", steps=["Read."]).version
    v2 = register_rubric("politeness", "Courteous and brief.", steps=["Read."]).version
    assert v1 != v2 and Rubric("politeness", "Courteous.", ("Read.",)).version == v1
    assert Rubric("politeness", "Courteous.", ("Read.",), scale="1-4").version != v1
    r = evaluate([s(answer="[rating 2]")], ["politeness"], judge=judge).records[0]["metrics"]["politeness"]
    assert r["version"] == v2 and "Courteous and brief." in fake_llm.log[0].user_text


def test_definition_errors_name_the_field():
    with pytest.raises(InvalidParameterError, match="scale"):
        Rubric("x", "c", scale="1-12")
    with pytest.raises(InvalidParameterError, match="inputs"):
        Rubric("x", "c", inputs=("answer", "query"))
    with pytest.raises(InvalidParameterError, match="built-in metric"):
        register_rubric("faithfulness", "c")


ROWS = [{"id": "a", "query": "q?", "answer": "Paris. [rating 5]", "contexts": ["c [yes]"]},
        {"id": "b", "query": "q?", "answer": "Lyon. [rating 2]", "contexts": ["c"]}]


def test_config_rubrics_run_through_the_cli(tmp_path, fake_llm):
    fake_llm.rule = judge_rule
    data = tmp_path / "rows.jsonl"
    data.write_text("".join(json.dumps(r) + "\n" for r in ROWS))
    cfg = tmp_path / "ragmeter.yaml"
    cfg.write_text("rag:\n  eval:\n    metrics: [politeness]\n    rubrics:\n"
                   "      - name: politeness\n        criteria: The answer is courteous.\n        scale: 1-5\n"
                   "      - name: cites_context\n        criteria: Every fact is in the contexts.\n"
                   "        inputs: [answer, contexts]\n        scale: yes/no\n")
    out = tmp_path / "out"
    res = CliRunner().invoke(main, ["eval", str(data), "-c", str(cfg), "-m", "politeness", "-m", "cites_context",
                                    "--judge", f"openai:fake@{fake_llm.url}", "-o", str(out), "--no-report"],
                             catch_exceptions=False)
    assert res.exit_code == 0, res.output
    lines = [json.loads(x) for x in (out / "results.jsonl").read_text().splitlines()]
    assert [x["metrics"]["politeness"]["score"] for x in lines] == [1.0, 0.25]  # (5-1)/4, (2-1)/4
    assert [x["metrics"]["cites_context"]["score"] for x in lines] == [1.0, 0.0]
    # one steps call per rubric for the run, one grading call per sample and rubric
    assert [e.schema for e in fake_llm.log].count("RubricSteps") == 2 and len(fake_llm.log) == 6


def test_bad_config_rubric_names_the_file_line_and_field(tmp_path):
    text = "rag:\n  eval:\n    rubrics:\n      - name: ok_one\n        criteria: c\n      - name: two\n" \
           "        criteria: c\n        scale: 1-50\n"
    with pytest.raises(InputError) as exc:
        parse_config(text, path="r.yaml")
    msg = str(exc.value)
    assert "r.yaml" in msg and ":6" in msg and "rag.eval.rubrics.1" in msg and "scale" in msg
    with pytest.raises(InputError, match=r"rag\.eval\.rubrics\.0\.inputs"):
        parse_config("rag:\n  eval:\n    rubrics:\n      - {name: x, criteria: c, inputs: [query]}\n", path="r.yaml")


@pytest.mark.parametrize(("marked", "verdict"), [(FACTS[0], "yes"), (FILLER[50], "no")])
def test_a_rubric_reading_contexts_past_the_window_reads_the_sentences_that_fit(marked, verdict):
    # the article (about 2,000 tokens) is rejected by a 1,600-token window; the call is sent again with
    # the sentences most related to the answer's, which hold its two facts and not FILLER[50]; the
    # rule judge says "yes" when "[yes]" is in what it reads, so the verdict shows what was read
    rubric = Rubric("cites_context", "Every fact in the answer is taken from the contexts.",
                    ("Find each fact in the contexts.",), ("answer", "contexts"), "yes/no")
    rubric.register()
    tagged = marked[:-1] + " [yes]."
    contexts = [c.replace(marked, tagged) for c in ARTICLE]
    sample = Sample(id="a", query="When did the Harrowgate footbridge open?", contexts=contexts, answer=ANSWER)
    with FakeLLMServer(small_window) as server:
        judge = from_spec(f"openai:fake@{server.url}", cache=False)
        m = evaluate([sample], ["cites_context"], judge=judge).records[0]["metrics"]["cites_context"]
        kinds = [c.kind for c in server.log]
        stats = judge.stats()
    assert m["error"] is None  # before: JudgeContextOverflow on the sample
    assert m["details"]["verdict"] == verdict and m["score"] == {"yes": 1.0, "no": 0.0}[verdict]
    assert kinds == ["too_long", "ok"] and stats["recovered"] == {"JudgeContextOverflow": 1}
    fit = m["details"]["context_fit"]
    read = {s["text"] for s in fit["read"]}
    assert {FACTS[1], tagged if verdict == "yes" else FACTS[0]} <= read
    assert not any(s.startswith("The Kessel50 bridge") for s in read) and fit["context_sentences"] == 62
    assert m["reason"].endswith(f"the judge read {fit['sentences_read']} of their 62 sentences (context_fit)")
