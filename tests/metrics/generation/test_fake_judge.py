"""The test judge (``rules.py``) answers by the reply schema asked for, never by a prompt's
sentences: rewording every instruction of every prompt leaves its replies, and so every score,
unchanged. A rule that matched literal sentences ("Do four things with the answer") would make
rewording one prompt break tests far away."""

from __future__ import annotations

import importlib
import inspect
import pkgutil
import re
from pathlib import Path

import pytest
from pydantic import BaseModel

import ragmeter.metrics.generation as generation
from ragmeter import Sample, evaluate
from ragmeter.metrics.generation import _prompting

from .rules import REPLIES, judge_rule, schema_of

CTX = ["Paris is the capital of France. [rating 10]", "Cheese is made from milk. [rating 0]",
       "France is in Europe. [rating 5]"]
ROW = {"id": "a", "query": "What is the capital of France?",
       "answer": "Paris is the capital of France. Paris has ten million cats. [rating 7] [same] [grade 4]",
       "contexts": CTX, "reference": "[ESSENTIAL PASSAGE] Paris is the capital of France. [BONUS PASSAGE] Rome."}
NAMES = ["faithfulness", "hallucination_rate", "faithfulness(steps=shared)", "faithfulness(mode=inline)",
         "faithfulness(verdicts=bare)", "faithfulness(verdicts=after_quotes)",
         "faithfulness(verdicts=given_quotes)", "faithfulness(verdicts=short_quotes)",
         "faithfulness(verdicts=capped_quotes)",
         "answer_relevancy(scale=graded)",
         "answer_relevancy", "answer_relevancy(decision=reasoned)",
         "context_relevancy", "context_relevancy(scale=graded)", "context_relevancy(decision=reasoned)",
         "context_precision_llm",
         "correctness", "correctness(scale=graded)", "correctness(decision=reasoned)",
         "answer_grade", "passage_recall", "passage_recall(scale=graded)",
         "passage_recall(scale=binary,decision=reasoned)"]


def reworded(src: Path, dst: Path) -> None:
    """Copy every prompt file with each instruction sentence replaced: a line keeps only its
    ``$field`` placeholders, the rest of its words become filler."""
    for f in src.glob("*.prompt"):
        head, _, body = f.read_text(encoding="utf-8").partition("--- system\n")
        out = []
        for n, line in enumerate(body.splitlines()):
            if line.startswith("--- ") or not line.strip():
                out.append(line)
                continue
            fields = re.findall(r"\$\{?\w+\}?", line)
            out.append(" ".join([f"Reworded instruction {n}.", *fields]))
        (dst / f.name).write_text(head + "--- system\n" + "\n".join(out) + "\n", encoding="utf-8")


def scores(judge) -> dict[str, tuple]:
    run = evaluate([Sample.model_validate(ROW)], NAMES, judge=judge)
    return {k: (v["score"], v["error"]) for k, v in run.records[0]["metrics"].items()}


def test_reworded_prompts_get_the_same_replies(fake_llm, make_judge, tmp_path, monkeypatch):
    fake_llm.rule = judge_rule
    before = scores(make_judge())
    original_texts = [e.user_text for e in fake_llm.log]
    assert any("Do four things with the answer" in t for t in original_texts)  # the sentence the old rule matched
    reworded(_prompting.PROMPTS, tmp_path)
    monkeypatch.setattr(_prompting, "PROMPTS", tmp_path)
    _prompting.template.cache_clear()
    try:
        fake_llm.clear_log()
        after = scores(make_judge())
        texts = [e.user_text for e in fake_llm.log]
    finally:
        _prompting.template.cache_clear()
    # every prompt really was reworded: no instruction sentence of the original prompts is left
    assert texts and all("Reworded instruction" in t for t in texts)
    assert not any(s in t for t in texts for s in ("Do four things", "supports the statement", "For each"))
    assert after == before
    assert all(err is None for _, err in after.values()), after
    # and the scores are the rules' hand values: 3 sentences, only the first in the context; ratings 10, 0, 5;
    # faithfulness's answer checks (mode=claims): "ten" (the context's 10) and "France" found, 7 and 4 not: 1/2
    assert after["faithfulness"][0] == pytest.approx(1 / 6) and after["hallucination_rate"][0] == pytest.approx(5 / 6)
    assert after["faithfulness(mode=inline)"][0] == pytest.approx(1 / 3)
    assert after["context_relevancy(scale=graded)"][0] == pytest.approx((1 + 0 + 0.5) / 3)
    assert after["context_relevancy"][0] == pytest.approx(2 / 3)  # one word per chunk: yes at ratings 10 and 5
    assert after["correctness(scale=graded)"][0] == pytest.approx(0.7)
    assert after["answer_grade"][0] == pytest.approx(0.75)
    assert after["correctness"][0] == 1.0  # the one-word decision: "yes" by the answer's [rating 7]


def test_the_rule_reads_the_schema_in_every_structured_output_mode():
    from tests.judges.fake_server import ChatCall

    schema = {"title": "Verdicts3", "type": "object"}
    by_name = ChatCall(0, {"response_format": {"type": "json_schema", "json_schema": {"name": "Verdicts3",
                                                                                      "schema": schema}}}, {})
    by_object = ChatCall(0, {"response_format": {"type": "json_object", "schema": schema}}, {})
    import json

    in_prompt = ChatCall(0, {"messages": [{"role": "system", "content": "Reply with only one JSON object, no prose "
                                           "and no code fence, that follows this JSON schema:\n" + json.dumps(schema)},
                                          {"role": "user", "content": "x"}]}, {})
    assert [schema_of(c) for c in (by_name, by_object, in_prompt)] == ["Verdicts"] * 3
    assert ChatCall(0, {"messages": [{"role": "user", "content": "x"}]}, {}).schema_name is None


def reply_models() -> dict[str, list[str]]:
    """Every pydantic model of the generation metric modules, by class name -> defining modules."""
    found: dict[str, set[str]] = {}
    for info in pkgutil.iter_modules(generation.__path__):
        mod = importlib.import_module(f"{generation.__name__}.{info.name}")
        for obj in vars(mod).values():
            if inspect.isclass(obj) and issubclass(obj, BaseModel) and obj.__module__ == mod.__name__:
                found.setdefault(obj.__name__, set()).add(mod.__name__)
    return {k: sorted(v) for k, v in found.items()}


def test_reply_model_names_are_unique_and_the_rule_knows_every_metric_reply():
    models = reply_models()
    assert all(len(mods) == 1 for mods in models.values()), models  # the name is the schema the judge sees
    # every reply the rule answers is a real model, so a renamed model cannot silently fall through
    assert set(REPLIES) <= set(models)
