"""Which named metrics make a run load the default MiniLM embedder (``embedders.wants_default``)."""

from __future__ import annotations

import pytest

from ragmeter import embedders


@pytest.fixture
def installed(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(embedders, "default_available", lambda: True)


def test_a_metric_that_needs_an_embedder_wants_it(installed: None) -> None:
    assert embedders.wants_default(["semantic_similarity"]) is True


def test_answer_relevancy_wants_it_only_with_method_questions(installed: None) -> None:
    # the default answer_relevancy is the judge's decision: no embedding is read
    assert embedders.wants_default(["answer_relevancy"]) is False
    assert embedders.wants_default(["answer_relevancy(scale=graded)", "faithfulness"]) is False
    assert embedders.wants_default(["answer_relevancy(method=questions)"]) is True
    assert embedders.wants_default(["faithfulness", "answer_relevancy(method=questions,normalize=baseline)"]) is True


def test_data_chosen_metrics_want_it_when_installed(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(embedders, "default_available", lambda: True)
    assert embedders.wants_default(None) is True
    monkeypatch.setattr(embedders, "default_available", lambda: False)
    assert embedders.wants_default(None) is False
    assert embedders.wants_default(["answer_relevancy(method=questions)"]) is False
