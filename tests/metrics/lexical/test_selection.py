"""The lexical metrics' registry entries: default selection from the data's fields, end-to-end runs."""

from __future__ import annotations

import pytest

from ragmeter import evaluate, get_evaluator, list_metrics
from ragmeter.registry import default_metric_names, get_spec

LEXICAL = ("token_f1", "rouge_l", "lexical_faithfulness")


@pytest.mark.parametrize("name", LEXICAL)
def test_spec(name):
    spec = get_spec(name)
    assert spec.category == "lexical"
    assert not spec.needs_embedder and not spec.needs_judge
    assert spec.default_names == (name,)
    assert spec in list_metrics()


def test_default_selection():
    assert {"token_f1", "rouge_l"} <= set(default_metric_names({"answer", "reference"}))
    assert "lexical_faithfulness" not in default_metric_names({"answer", "reference"})
    with_contexts = default_metric_names({"answer", "contexts", "context_texts"})
    assert "lexical_faithfulness" in with_contexts and "token_f1" not in with_contexts
    # contexts without text (ids only) cannot support anything lexically
    assert "lexical_faithfulness" not in default_metric_names({"answer", "contexts"})
    assert not set(LEXICAL) & set(default_metric_names({"reference", "contexts", "context_texts"}))


def test_evaluate_end_to_end():
    rows = [
        {"id": "a", "query": "q", "response": "Paris, France", "ground_truth": "Paris",
         "retrieved_contexts": ["Paris is the capital of France."]},
        {"id": "b", "query": "q", "response": "Lyon", "ground_truth": None,
         "retrieved_contexts": ["Paris is the capital of France."]},
    ]
    run = evaluate(rows)
    for name in LEXICAL:
        assert name in run.scores
    assert run.scores["token_f1"][0] == pytest.approx(2 / 3)
    assert run.status["token_f1"][1] == 1  # undefined: no reference
    assert run.scores["lexical_faithfulness"][0] == 1.0  # {paris, france} both in the context
    assert run.scores["lexical_faithfulness"][1] == 0.0  # {lyon} not in it


def test_batch_equals_one_by_one():
    from ragmeter import Sample

    samples = [Sample(id=str(i), answer=a, reference="the cat sat", contexts=["a cat sat"])
               for i, a in enumerate(["the cat", "a dog sat", "", "cat cat cat sat"])]
    for name in LEXICAL:
        ev = get_evaluator(name)
        assert ev.evaluate_batch(samples) == [ev.evaluate(s) for s in samples]
