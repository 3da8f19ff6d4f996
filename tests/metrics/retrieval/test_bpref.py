"""bpref: hand-computed values for its edge cases, and trec_eval's own expected bpref for every query and
``all`` of the vendored conformance data, through ``ragmeter trec`` and through the Sample evaluator."""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner

from ragmeter import Sample, get_evaluator
from ragmeter.cli import main
from ragmeter.trec.io import Qrels, Run

DATA = Path(__file__).resolve().parents[2] / "trec" / "data" / "trec_eval"


def score(contexts, relevant, name="bpref"):
    s = Sample(id="s", query="q", contexts=[{"id": c} for c in contexts], relevant=relevant)
    return get_evaluator(name).evaluate(s)


CASES = [
    # R = 3 (r3 never retrieved), N = 3 (n3 never retrieved), u unlabelled (skipped):
    # r1 below n1: 1 - 1/3; r2 below n1, n2: 1 - 2/3 -> (2/3 + 1/3) / 3
    (["n1", "r1", "u", "n2", "r2"], {"r1": 1, "r2": 2, "r3": 1, "n1": 0, "n2": 0, "n3": 0}, "bpref", 1 / 3),
    # R = 3 > N = 1: divided by min(N, R) = 1, so r2 below n1 adds 1 - 1/1 = 0 -> (1 + 0) / 3
    (["r1", "n1", "r2"], {"r1": 1, "r2": 1, "r3": 1, "n1": 0}, "bpref", 1 / 3),
    # N = 0: every retrieved relevant adds 1 (u unjudged, skipped) -> 1 / 2
    (["u", "r1"], {"r1": 1, "r2": 1}, "bpref", 1 / 2),
    # a negative grade is "in the pool, unjudged": skipped, so r1 has no judged non-relevant above it
    (["c", "r1"], {"c": -1, "r1": 1, "n9": 0}, "bpref", 1.0),
    # R = 0 -> 0
    (["n1"], {"n1": 0}, "bpref", 0.0),
    # empty ranking -> 0
    ([], {"r1": 1}, "bpref", 0.0),
    # rel_level=2: grade 1 is judged non-relevant: R = 1, N = 2; r (3) below m (1): 1 - 1/1 -> 0
    (["m", "r"], {"m": 1, "r": 3, "z": 0}, "bpref(rel_level=2)", 0.0),
    # R = 2, N = 4: a relevant below 2 of the 4 non-relevant: 1 - min(2, 2)/min(4, 2) = 0; first relevant 1
    (["r1", "n1", "n2", "r2"], {"r1": 1, "r2": 1, "n1": 0, "n2": 0, "n3": 0, "n4": 0}, "bpref", 1 / 2),
]


@pytest.mark.parametrize(("contexts", "relevant", "name", "expected"), CASES)
def test_golden(contexts, relevant, name, expected):
    result = score(contexts, relevant, name)
    assert result.error is None
    assert result.score == pytest.approx(expected, abs=1e-12)


def test_undefined_without_labels():
    s = Sample(id="s", query="q", contexts=[{"id": "a", "text": "Paris"}], reference="Paris")
    assert get_evaluator("bpref").evaluate(s).score is None  # a reference answer gives no judgements
    assert score(["a"], None).score is None


def test_text_chunk_covering_two_relevant_labels_counts_twice():
    s = Sample(id="s", query="q", contexts=[{"text": "alpha beta gamma delta epsilon zeta"}],
               relevant={"alpha beta gamma": 1, "delta epsilon zeta": 1, "omega": 1})
    assert get_evaluator("bpref").evaluate(s).score == pytest.approx(2 / 3)


# expected output -> (trec_eval options, qrels, run); -c adds the qrels queries without results
CONFORMANCE = {
    "out.test.aq": ([], "qrels.test", "results.test"),
    "out.test.aqc": (["-c"], "qrels.test", "results.trunc"),
    "out.test.aqcM": (["-c", "-M100"], "qrels.test", "results.trunc"),
    "out.test.aql": (["-l2"], "qrels.rel_level", "results.test"),
}


def expected_lines(name, measure):
    lines = (DATA / name).read_text().splitlines()
    return [ln for ln in lines if ln.split("\t")[0].strip() == measure]


@pytest.mark.parametrize("expected_file", list(CONFORMANCE))
def test_ragmeter_trec_reproduces_trec_eval_bpref(expected_file):
    opts, qrels, run = CONFORMANCE[expected_file]
    out = CliRunner().invoke(main, ["trec", "-q", "-m", "bpref", "-m", "gm_bpref", *opts,
                                    str(DATA / qrels), str(DATA / run)], catch_exceptions=False)
    assert out.exit_code == 0, out.output
    want = expected_lines(expected_file, "bpref") + expected_lines(expected_file, "gm_bpref")
    assert len(want) >= 3
    got = [ln for ln in out.output.splitlines() if ln.split("\t")[0].strip() in ("bpref", "gm_bpref")]
    assert got == want


@pytest.mark.parametrize("expected_file", list(CONFORMANCE))
def test_sample_evaluator_reproduces_trec_eval_bpref(expected_file):
    opts, qrels_file, run_file = CONFORMANCE[expected_file]
    qrels = Qrels.from_file(DATA / qrels_file).to_dict()
    run = Run.from_file(DATA / run_file)
    order = run.ranked_order()  # trec_eval's ranking: score descending, docid descending
    ranked: dict[str, list[str]] = {}
    for q, d in zip(run.qid[order].tolist(), run.docids[order].tolist(), strict=True):
        ranked.setdefault(q, []).append(d)
    depth = 100 if "-M100" in opts else None
    qids = [q for q in ranked if q in qrels] + ([q for q in qrels if q not in ranked] if "-c" in opts else [])
    name = "bpref(rel_level=2)" if "-l2" in opts else "bpref"
    ev = get_evaluator(name)
    values = {}
    for q in qids:
        docs = ranked.get(q, [])[:depth]
        values[q] = ev.evaluate(Sample(id=q, query=q, contexts=[{"id": d} for d in docs],
                                       relevant=qrels[q])).score
    want = {ln.split("\t")[1]: ln.split("\t")[2] for ln in expected_lines(expected_file, "bpref")}
    got = {q: f"{v:.4f}" for q, v in values.items()}
    got["all"] = f"{sum(values.values()) / len(values):.4f}"
    assert got == want
