"""Reply schemas: lenient about form, strict about content and about which fields are there."""

from __future__ import annotations

import pytest
from pydantic import ValidationError

from ragmeter.metrics.generation._answer_steps import AnswerAnalysis
from ragmeter.metrics.generation._chunk_steps import Ratings
from ragmeter.metrics.generation._claim_steps import Verdict, Verdicts
from ragmeter.metrics.generation._schema import Graded, align, sized


def verdict(supported, statement=1):
    return Verdict(statement=statement, evidence="none", supported=supported)


@pytest.mark.parametrize(("raw", "value"), [("yes", True), ("Yes.", True), (True, True), ("supported", True),
                                            ("NO", False), (False, False), ("not supported", False)])
def test_yes_no_forms(raw, value):
    assert verdict(raw).supported is value


@pytest.mark.parametrize("raw", ["maybe", "partially", 2, None, "yes and no"])
def test_yes_no_rejects_anything_else(raw):
    with pytest.raises(ValidationError):
        verdict(raw)


def test_ratings_out_of_range_are_rejected():
    with pytest.raises(ValidationError):
        Graded(reason="r", rating=11)
    with pytest.raises(ValidationError):
        Ratings(ratings=[{"passage": 1, "reason": "r", "rating": -1}])
    assert Graded(reason="r", rating="7").rating == 7  # a number written as text is still the number


def test_noncommittal_flag_and_no_default():
    a = AnswerAnalysis.model_validate({"claims": [], "no_facts": "no", "questions": [], "evasive": "true"})
    assert a.noncommittal is True
    with pytest.raises(ValidationError):  # before: every field defaulted, so {} was a valid analysis
        AnswerAnalysis.model_validate({})


def test_align_by_index_or_order():
    items = [verdict(True, 2), verdict(False, 1), verdict(True, 3)]
    assert align(items, 3, "statement", lambda v: v.supported) == [False, True, True]
    # invalid or duplicate indices: fall back to order
    dup = [verdict(True, 1), verdict(False, 1)]
    assert align(dup, 2, "statement", lambda v: v.supported) == [True, False]
    assert align([verdict(True, 9)], 1, "statement", lambda v: v.supported) == [True]


def test_sized_model_takes_exactly_n_items():
    three = sized(Verdicts, 3)
    ok = {"verdicts": [{"statement": i, "evidence": "e", "supported": "no"} for i in (1, 2, 3)]}
    assert len(three.model_validate(ok).verdicts) == 3
    for n in (0, 2, 4):
        with pytest.raises(ValidationError):
            three.model_validate({"verdicts": ok["verdicts"][:n] if n < 3 else ok["verdicts"] * 2})
    assert sized(Verdicts, 3) is three  # one class per count (stable schema, stable cache key)


def test_request_schema_requires_every_field_in_order_with_yes_no_words():
    from ragmeter.judges.judge import request_schema

    s = request_schema(sized(Verdicts, 2))
    v = s["$defs"]["Verdict"]
    assert v["required"] == ["statement", "evidence", "supported"]
    assert v["additionalProperties"] is False and s["required"] == ["verdicts"]
    assert v["properties"]["supported"] == {"enum": ["yes", "no"], "title": "Supported", "type": "string"}
    assert (s["properties"]["verdicts"]["minItems"], s["properties"]["verdicts"]["maxItems"]) == (2, 2)
    a = request_schema(AnswerAnalysis)
    assert a["required"] == ["claims", "no_facts", "questions", "evasive"]  # the alias the prompt uses
    # parsing is as strict as the schema: a reply without a required field does not validate
    with pytest.raises(ValidationError):
        Verdicts.model_validate({"verdicts": [{"supported": "Yes."}]})
