"""Reply schemas: lenient about form, strict about content."""

from __future__ import annotations

import pytest
from pydantic import ValidationError

from ragmeter.metrics.generation._judged import AnswerAnalysis, Graded, Ratings, Verdict, align


@pytest.mark.parametrize(("raw", "value"), [("yes", True), ("Yes.", True), (True, True), ("supported", True),
                                            ("NO", False), (False, False), ("not supported", False)])
def test_yes_no_forms(raw, value):
    assert Verdict(supported=raw).supported is value


@pytest.mark.parametrize("raw", ["maybe", "partially", 2, None, "yes and no"])
def test_yes_no_rejects_anything_else(raw):
    with pytest.raises(ValidationError):
        Verdict(supported=raw)


def test_ratings_out_of_range_are_rejected():
    with pytest.raises(ValidationError):
        Graded(rating=11)
    with pytest.raises(ValidationError):
        Ratings(ratings=[{"passage": 1, "rating": -1}])
    assert Graded(rating="7").rating == 7  # a number written as text is still the number


def test_noncommittal_flag():
    assert AnswerAnalysis(noncommittal="true").noncommittal is True


def test_align_by_index_or_order():
    items = [Verdict(statement=2, supported=True), Verdict(statement=1, supported=False)]
    assert align(items, 3, "statement", lambda v: v.supported) == [False, True, None]
    # invalid or duplicate indices: fall back to order
    dup = [Verdict(statement=1, supported=True), Verdict(statement=1, supported=False)]
    assert align(dup, 2, "statement", lambda v: v.supported) == [True, False]
    assert align([Verdict(statement=9, supported=True)], 1, "statement", lambda v: v.supported) == [True]


def test_request_schema_requires_every_field_in_order_with_yes_no_words():
    from ragmeter.judges.judge import request_schema
    from ragmeter.metrics.generation._judged import AnswerAnalysis, Verdicts

    s = request_schema(Verdicts)
    verdict = s["$defs"]["Verdict"]
    assert verdict["required"] == ["statement", "text", "evidence", "supported"]
    assert verdict["additionalProperties"] is False and s["required"] == ["verdicts"]
    assert verdict["properties"]["supported"] == {"enum": ["yes", "no"], "title": "Supported", "type": "string"}
    assert all("default" not in p for p in verdict["properties"].values())
    a = request_schema(AnswerAnalysis)
    assert a["required"] == ["claims", "questions", "evasive"]  # the alias the prompt uses
    # parsing stays lenient: a reply without the optional fields still validates
    assert Verdicts.model_validate({"verdicts": [{"supported": "Yes."}]}).verdicts[0].supported is True
