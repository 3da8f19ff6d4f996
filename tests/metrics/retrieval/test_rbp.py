"""rbp: hand-computed values, the persistence check, and ranx's rank-biased precision as an independent
cross-check on random binary runs."""

from __future__ import annotations

import numpy as np
import pytest

from ragmeter import Sample, get_evaluator
from ragmeter.errors import InvalidParameterError


def score(contexts, relevant, name="rbp"):
    s = Sample(id="s", query="q", contexts=[{"id": c} for c in contexts], relevant=relevant)
    return get_evaluator(name).evaluate(s)


CASES = [
    # relevant at ranks 2 and 3, p = 0.8: 0.2 * (0.8 + 0.64)
    (["a", "b", "c"], {"b": 1, "c": 2}, "rbp", 0.2 * (0.8 + 0.64)),
    # p = 0.5: 0.5 * (0.5 + 0.25)
    (["a", "b", "c"], {"b": 1, "c": 1}, "rbp(p=0.5)", 0.375),
    # the cutoff drops rank 3: 0.5 * 0.5
    (["a", "b", "c"], {"b": 1, "c": 1}, "rbp(p=0.5)@2", 0.25),
    # every item relevant, no cutoff: 1 - p^n = 1 - 0.8^3
    (["a", "b", "c"], {"a": 1, "b": 1, "c": 1}, "rbp", 1 - 0.8**3),
    # p = 0: only the first item is read
    (["a", "b"], {"a": 1, "b": 1}, "rbp(p=0.0)", 1.0),
    (["a", "b"], {"b": 1}, "rbp(p=0.0)", 0.0),
    # rel_level=2: grade 1 is not relevant: 0.2 * 0.8^2
    (["a", "b", "c"], {"a": 1, "c": 2}, "rbp(rel_level=2)", 0.2 * 0.64),
    # an unlabelled item counts as non-relevant; relevant never retrieved adds nothing
    (["u", "a"], {"a": 1, "z": 1}, "rbp", 0.2 * 0.8),
    # empty ranking -> 0
    ([], {"a": 1}, "rbp", 0.0),
]


@pytest.mark.parametrize(("contexts", "relevant", "name", "expected"), CASES)
def test_golden(contexts, relevant, name, expected):
    result = score(contexts, relevant, name)
    assert result.error is None
    assert result.score == pytest.approx(expected, abs=1e-12)


def test_relevance_from_the_reference_answer_without_labels():
    s = Sample(id="s", query="q", contexts=[{"text": "Lyon is big"}, {"text": "Paris is the capital"}],
               reference="Paris")
    assert get_evaluator("rbp(p=0.5)").evaluate(s).score == pytest.approx(0.25)
    assert score(["a"], None).score is None


@pytest.mark.parametrize("p", [1.0, 1.5, -0.1])
def test_persistence_outside_0_1_is_refused(p):
    with pytest.raises(InvalidParameterError, match="'p'"):
        get_evaluator(f"rbp(p={p})")


@pytest.mark.parametrize("p", [0.5, 0.8, 0.95])
def test_agrees_with_ranx(p):
    """ranx takes no cutoff for rbp; the cutoff is covered by the golden values."""
    ranx = pytest.importorskip("ranx")
    rng = np.random.default_rng(26)
    qrels, run, samples = {}, {}, []
    for q in range(40):
        docs = [f"d{i}" for i in range(int(rng.integers(1, 25)))]
        relevant = {str(d): 1 for d in rng.choice(30 * ["x"] + docs, size=6) if d != "x"}
        relevant.setdefault("never-retrieved", 1)
        qrels[f"q{q:02d}"] = relevant
        run[f"q{q:02d}"] = {d: float(len(docs) - i) for i, d in enumerate(docs)}
        samples.append(Sample(id=f"q{q:02d}", query="q", contexts=[{"id": d} for d in docs], relevant=relevant))
    # ranx returns the queries in sorted id order, which the zero-padded ids keep in input order
    expected = ranx.evaluate(ranx.Qrels(qrels), ranx.Run(run), f"rbp.{str(p)[2:]}", return_mean=False)
    got = [r.score for r in get_evaluator(f"rbp(p={p})").evaluate_batch(samples)]
    np.testing.assert_allclose(got, expected, rtol=1e-12, atol=1e-12)
