"""Judged non-relevant vs unjudged: every builder of a RelevanceBatch makes the same distinction.

A position is judged non-relevant when a label with grade ``0 <= g < rel_level`` is found there and it
is not relevant; ``num_nonrel`` counts such labels (bpref's N). No label, or only a negative grade
(trec_eval's "in the pool, unjudged"), is unjudged. Values below are worked out by hand.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from ragmeter import Sample
from ragmeter.engines._arrow import IdLabels, id_relevance, select_batch
from ragmeter.metrics.retrieval._batch import RankedList, RelevanceBatch
from ragmeter.metrics.retrieval.relevance import judge_relevance
from ragmeter.trec.engine import build_batch
from ragmeter.trec.io import Qrels, Run

NAN = float("nan")
# labels a:2 (relevant), b:0 and z:0 (judged non-relevant; z never retrieved), c:-1 (in the pool, unjudged);
# retrieved a, b, c, d (d: no label at all)
LABELS = {"a": 2, "b": 0, "c": -1, "z": 0}
RETRIEVED = ["a", "b", "c", "d"]


def test_from_grades_marks_judged_nonrelevant():
    r = RankedList.from_grades([2.0, 0.0, NAN, -1.0, 0.5], [2.0, 0.0, -1.0, 0.5, 0.0, 3.0])
    assert list(r.nonrel) == [False, True, False, False, True]
    assert r.num_nonrel == 3 and r.num_rel == 2
    assert list(r.rel) == [True, False, False, False, False]
    assert math.isnan(RankedList.from_grades([1.0], None).num_nonrel)


@pytest.mark.parametrize(("rel_level", "nonrel", "num_rel", "num_nonrel"), [
    (1.0, [False, True, False, False], 1, 2),
    (3.0, [True, True, False, False], 0, 3),  # a's grade 2 is below the threshold: judged non-relevant
])
def test_sample_path(rel_level, nonrel, num_rel, num_nonrel):
    s = Sample(id="s", query="q", contexts=[{"id": x} for x in RETRIEVED], relevant=LABELS)
    ranked = judge_relevance(s, rel_level).ranked
    assert list(ranked.nonrel) == nonrel
    assert (ranked.num_rel, ranked.num_nonrel) == (num_rel, num_nonrel)


def test_a_position_holding_a_relevant_label_is_not_nonrelevant():
    # one text context covers a relevant and a non-relevant labelled text: it is relevant only
    s = Sample(id="s", query="q", contexts=[{"text": "the cat sat on the mat"}],
               relevant={"the cat sat": 1, "cat sat on the mat": 0})
    ranked = judge_relevance(s).ranked
    assert list(ranked.rel) == [True] and list(ranked.nonrel) == [False]
    assert ranked.num_nonrel == 1


def test_reference_path_has_no_judgements():
    s = Sample(id="s", query="q", contexts=[{"text": "Paris is the capital"}], reference="Paris")
    ranked = judge_relevance(s).ranked
    batch = RelevanceBatch.from_lists([ranked])
    assert not batch.nonrel.any() and math.isnan(batch.num_nonrel[0])


def test_batch_requires_both_arrays_and_checks_their_shape():
    args = (np.array([0, 1]), np.array([True]), np.ones(1), np.ones(1), np.ones(1), np.array([0, 0]), np.ones(0))
    with pytest.raises(TypeError):
        RelevanceBatch(*args)  # type: ignore[call-arg]
    with pytest.raises(ValueError, match="nonrel"):
        RelevanceBatch(*args, nonrel=np.zeros(2, bool), num_nonrel=np.zeros(1))
    b = RelevanceBatch(*args, nonrel=np.zeros(1, bool), num_nonrel=np.zeros(1))
    assert b.nonrel.dtype == bool


def test_columnar_join_equals_the_sample_path():
    rows = [(RETRIEVED, LABELS), (["z", "a", "x"], {"x": 0, "a": 0}), (["b"], None), (["c", "b"], {"b": 3})]
    codes: dict[str, int] = {}

    def code(x):
        return codes.setdefault(x, len(codes))

    x = IdLabels(
        ctx_len=np.array([len(c) for c, _ in rows]),
        ctx_code=np.array([code(d) for c, _ in rows for d in c]),
        lab_len=np.array([len(lab or {}) for _, lab in rows]),
        lab_code=np.array([code(k) for _, lab in rows for k in (lab or {})], dtype=np.int64),
        lab_grade=np.array([g for _, lab in rows for g in (lab or {}).values()], dtype=np.float64),
        rel_none=np.array([lab is None for _, lab in rows]),
    )
    for rel_level in (1.0, 3.0):
        fast = select_batch(x, id_relevance(x, rel_level), np.ones(len(rows), bool))
        samples = [Sample(id=str(i), query="q", contexts=[{"id": d} for d in c], relevant=lab)
                   for i, (c, lab) in enumerate(rows)]
        rels = [judge_relevance(s, rel_level) for s in samples]
        # a row without labels: an empty ranking, as the evaluator gives it
        slow = RelevanceBatch.from_lists([r.ranked if r is not None else RankedList((), (), (), NAN) for r in rels])
        assert fast.nonrel.tolist() == slow.nonrel.tolist()
        np.testing.assert_array_equal(fast.num_nonrel, slow.num_nonrel)
    # by hand, rel_level 1: row 0 [F, T, F, F]; row 1 [F, T, T] (a:0 and x:0); row 2 none; row 3 [F, F]
    assert select_batch(x, id_relevance(x, 1.0), np.ones(4, bool)).nonrel.tolist() == [
        False, True, False, False, False, True, True, False, False]


QRELS = {"q1": LABELS, "q2": {"e": 1}}
RUN = {"q1": {"a": 4.0, "b": 3.0, "c": 2.0, "d": 1.0}, "q2": {"f": 1.0}}


@pytest.mark.parametrize("via_dicts", [False, True])
def test_trec_batch(via_dicts):
    qrels, run = Qrels.from_dict(QRELS), Run.from_dict(RUN)
    sources = (QRELS, RUN) if via_dicts else None
    b = build_batch(qrels, run, sources=sources).batch
    assert b.nonrel.tolist() == [False, True, False, False, False]
    assert b.num_nonrel.tolist() == [2.0, 0.0]
    b3 = build_batch(qrels, run, rel_level=3, sources=sources).batch
    assert b3.nonrel.tolist() == [True, True, False, False, False] and b3.num_nonrel.tolist() == [3.0, 1.0]
    judged = build_batch(qrels, run, judged_only=True, sources=sources).batch  # -J: c (negative), d, f dropped
    assert judged.nonrel.tolist() == [False, True] and judged.lengths.tolist() == [2, 0]


def test_trec_tables_expose_what_the_engine_reads():
    qrels = Qrels.from_dict(QRELS)
    assert qrels.plain and not Qrels.from_dict({1: {"a": 1}}).plain
    calls = []
    assert qrels.derived("k", lambda: calls.append(1) or 7) == 7
    assert qrels.derived("k", lambda: calls.append(1) or 8) == 7 and calls == [1]


def test_columnar_engine_scores_bpref_as_the_sample_path(tmp_path):
    # end to end on Parquet with judged non-relevant (grade 0) and in-pool unjudged (-1) labels
    pa = pytest.importorskip("pyarrow")
    pq = pytest.importorskip("pyarrow.parquet")
    import json

    from ragmeter import evaluate

    rows = [("s1", ["n1", "r1", "u", "n2", "r2"], {"r1": 1, "r2": 2, "r3": 1, "n1": 0, "n2": 0, "n3": 0}),
            ("s2", ["r1", "n1", "r2"], {"r1": 1, "r2": 1, "r3": 1, "n1": 0}),
            ("s3", ["c", "r1"], {"c": -1, "r1": 1, "n9": 0}),
            ("s4", ["m", "r"], {"m": 1, "r": 3, "z": 0})]
    ctx = pa.list_(pa.struct([("id", pa.string())]))
    schema = pa.schema([("id", pa.string()), ("query", pa.string()), ("contexts", ctx),
                        ("relevant", pa.map_(pa.string(), pa.int64()))])
    table = pa.Table.from_pylist([{"id": i, "query": "q", "contexts": [{"id": d} for d in c],
                                   "relevant": list(lab.items())} for i, c, lab in rows], schema=schema)
    pq.write_table(table, tmp_path / "rows.parquet")
    metrics = ["bpref", "bpref(rel_level=2)"]
    evaluate(tmp_path / "rows.parquet", metrics, out_dir=tmp_path / "columnar")
    samples = [Sample(id=i, query="q", contexts=[{"id": d} for d in c], relevant=lab) for i, c, lab in rows]
    evaluate(samples, metrics, out_dir=str(tmp_path / "local"), keep_records=False, embedder=None)
    fast = (tmp_path / "columnar" / "results.jsonl").read_bytes()
    assert fast == (tmp_path / "local" / "results.jsonl").read_bytes()
    scores = [json.loads(line)["metrics"]["bpref"]["score"] for line in fast.splitlines()]
    # by hand (test_bpref.py works s1-s3 out); s4: m (1) and r (3) both relevant, nothing judged above -> 1
    assert scores == pytest.approx([1 / 3, 1 / 3, 1.0, 1.0])
    # rel_level=2: s1's only relevant r2 lies below 3 judged non-relevant, min(3, R=1)/min(N=5, 1) -> 0;
    # s2, s3: R = 0 -> 0; s4: r below m (now non-relevant), 1 - 1/1 -> 0
    level2 = [json.loads(line)["metrics"]["bpref(rel_level=2.0)"]["score"] for line in fast.splitlines()]
    assert level2 == [0.0, 0.0, 0.0, 0.0]
