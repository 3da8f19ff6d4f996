"""What a first ``ragmeter.evaluate()`` call meets: a judge given as a spec string, and an error that
shows only itself."""

from __future__ import annotations

import traceback

import pytest

from ragmeter import InvalidParameterError, evaluate
from ragmeter.backend_config import JudgeConfig

from .fake_server import Reply

ROW = {"id": "a", "query": "What is the capital of France?", "answer": "Paris.", "reference": "Paris"}


@pytest.mark.parametrize("as_config", [False, True])
def test_a_judge_spec_string_or_config_is_built_into_a_judge(fake_llm, as_config):
    fake_llm.rule = lambda call: Reply.json({"reasoning": "same city", "grade": 4})
    spec = f"openai:fake-model@{fake_llm.url}"
    judge = JudgeConfig(spec, cache=False) if as_config else spec
    run = evaluate([ROW], ["answer_grade(scoring=hard)"], judge=judge)
    r = run.records[0]["metrics"]["answer_grade(scoring=hard)"]
    assert r["error"] is None and r["score"] == pytest.approx((4 - 1) / 4)  # grade 4 on the 1-5 scale
    assert len(fake_llm.log) == 1


def test_an_error_from_evaluate_shows_no_unrelated_event_loop_traceback():
    with pytest.raises(InvalidParameterError) as info:
        evaluate([ROW], ["ndcg@5", "ndcg@5"])
    shown = "".join(traceback.format_exception(info.value))
    assert "no running event loop" not in shown and "During handling" not in shown
