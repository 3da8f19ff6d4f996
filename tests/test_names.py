"""Metric names: safe parsing, canonical forms that round-trip, clear errors."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from ragmeter import InvalidParameterError, UnknownMetricError, canonical_name, parse_name
from ragmeter.names import MetricName


@pytest.mark.parametrize(
    ("text", "base", "params", "cutoff"),
    [
        ("mrr", "mrr", (), None),
        ("nDCG@10", "ndcg", (), 10),
        ("ndcg @ 10", "ndcg", (), 10),
        ("ndcg(gain='linear')@5", "ndcg", (("gain", "linear"),), 5),
        ("ndcg(gain=linear)@5", "ndcg", (("gain", "linear"),), 5),
        ("recall(rel_level=2)@20", "recall", (("rel_level", 2),), 20),
        ("x(b=1, a=-0.5)", "x", (("a", -0.5), ("b", 1)), None),
    ],
)
def test_parse(text, base, params, cutoff):
    assert parse_name(text) == MetricName(base, params, cutoff)


@pytest.mark.parametrize(
    "text",
    ["", "ndcg@", "ndcg@0", "ndcg@1.5", "ndcg@k", "ndcg(1)@5", "__import__('os')", "a.b@3",
     "ndcg(gain=open('x'))", "ndcg(**x)", "1+2"],
)
def test_parse_rejects(text):
    with pytest.raises(InvalidParameterError):
        parse_name(text)


def test_parse_never_evaluates(tmp_path):
    marker = tmp_path / "pwned"
    with pytest.raises(InvalidParameterError):
        parse_name(f"x(a=__import__('pathlib').Path({str(marker)!r}).touch())")
    assert not marker.exists()


@pytest.mark.parametrize(
    ("name", "canonical"),
    [
        ("nDCG(gain=exp)@10", "ndcg@10"),  # default parameter dropped
        ("NDCG(gain='linear')@10", "ndcg(gain=linear)@10"),
        ("P@5", "precision@5"),  # alias
        ("recip_rank", "mrr"),
        ("success@3", "hit_rate@3"),
        ("recall(rel_level=1)@5", "recall@5"),
        ("recall(rel_level=2)@5", "recall(rel_level=2.0)@5"),
    ],
)
def test_canonical(name, canonical):
    assert canonical_name(name) == canonical
    assert canonical_name(canonical) == canonical  # round trip


@given(
    st.sampled_from(["ndcg", "recall", "precision", "map", "mrr", "hit_rate", "context_precision"]),
    st.one_of(st.none(), st.integers(1, 10_000)),
    st.sampled_from([None, "exp", "linear"]),
    st.one_of(st.none(), st.floats(0.5, 3).map(lambda x: round(x, 2))),
)
def test_canonical_round_trips(base, cutoff, gain, level):
    params = []
    if gain and base == "ndcg":
        params.append(f"gain={gain}")
    if level is not None:
        params.append(f"rel_level={level}")
    text = base + (f"({','.join(params)})" if params else "") + (f"@{cutoff}" if cutoff else "")
    c = canonical_name(text)
    assert canonical_name(c) == c
    assert parse_name(c) == parse_name(canonical_name(c))


def test_unknown_metric_lists_close_matches():
    with pytest.raises(UnknownMetricError) as err:
        canonical_name("ndgc@10")
    assert "ndcg" in err.value.suggestions
    assert "Did you mean" in str(err.value)


@pytest.mark.parametrize(
    ("name", "fragment"),
    [
        ("ndcg(gain=cubic)@5", "expected one of exp, linear"),
        ("ndcg(depth=3)@5", "has no parameter 'depth'"),
        ("r_precision@5", "takes no cutoff"),
        ("recall(rel_level=high)@5", "expected float"),
    ],
)
def test_bad_parameters(name, fragment):
    with pytest.raises(InvalidParameterError, match=fragment.replace("(", r"\(")):
        canonical_name(name)


def test_parse_python_retries_the_spurious_recursion_depth_error(monkeypatch):
    # CPython 3.11 keeps the AST builder's recursion count per interpreter: a thread formatting a
    # traceback (which parses the failing line) while ragmeter parses can make ast.parse raise
    # "AST constructor recursion depth mismatch" (python/cpython#106905); the same parse then works
    import ast

    from ragmeter import names

    real, calls = ast.parse, []

    def flaky(source, filename="<unknown>", mode="exec"):
        calls.append(source)
        if len(calls) == 1:
            raise SystemError("AST constructor recursion depth mismatch (before=147, after=166)")
        return real(source, filename, mode)

    monkeypatch.setattr(names.ast, "parse", flaky)
    tree = names.parse_python("x = 1")
    assert isinstance(tree, ast.Module) and len(calls) == 2


def test_parse_python_raises_any_other_system_error(monkeypatch):
    import pytest

    from ragmeter import names

    def broken(source, filename="<unknown>", mode="exec"):
        raise SystemError("something else")

    monkeypatch.setattr(names.ast, "parse", broken)
    with pytest.raises(SystemError, match="something else"):
        names.parse_python("x = 1")
