"""Docid columns: Arrow-backed ids index like object arrays, their byte hash is a function of the string
alone, and a run read by Arrow evaluates exactly as the same run given as dicts."""

from __future__ import annotations

import pickle
import random

import numpy as np
import pyarrow as pa
import pytest

from ragmeter.errors import InputError
from ragmeter.trec import Run, trec_evaluate
from ragmeter.trec.ids import ArrowIds, CategoricalIds, MappingIds, id_hashes, utf8_hashes

MEASURES = ["map", "P_5", "ndcg_cut_3", "recip_rank", "num_rel_ret", "bpref", "num_ret", "num_q"]


def _strings(n: int, seed: int = 1) -> list[str]:
    rng = random.Random(seed)
    alphabet = "ab\u00e9\u4e2dxyz0123456789-\U0001f600"
    return ["".join(rng.choice(alphabet) for _ in range(rng.randint(0, 40))) for _ in range(n)]


def test_utf8_hash_depends_on_the_string_only():
    strs = _strings(3000)
    h = utf8_hashes(pa.array(strs))
    for i in range(0, len(strs), 97):
        s = strs[i]
        assert utf8_hashes(pa.array([s]))[0] == h[i]  # alone, at the end of the buffer
        assert utf8_hashes(pa.array(["y" * 53, s, ""]))[1] == h[i]  # beside a longer and a shorter one
        assert utf8_hashes(pa.array([s], pa.large_string()))[0] == h[i]
    assert (utf8_hashes(pa.array(strs).slice(100, 500)) == h[100:600]).all()
    chunked = pa.chunked_array([pa.array(strs[:1000]), pa.array(strs[1000:])])
    assert (utf8_hashes(chunked) == h).all()
    assert (id_hashes(np.array(strs, dtype=object), "utf8") == h).all()
    first_string = {}
    for s, x in zip(strs, h.tolist(), strict=True):
        assert first_string.setdefault(x, s) == s  # no two distinct strings share a hash here
    # strings equal in their first and last eight bytes still hash apart
    middle = [f"msmarco_passage_{i:02d}_12345678" for i in range(50)]
    assert len(set(utf8_hashes(pa.array(middle)).tolist())) == 50


def test_arrow_ids_index_like_an_object_array():
    strs = ["d3", "d1", "\u00e9t\u00e9", "d10", "d2"]
    ids = ArrowIds(pa.chunked_array([pa.array(strs[:2]), pa.array(strs[2:])]))
    plain = np.array(strs, dtype=object)
    assert len(ids) == 5 and ids[2] == "\u00e9t\u00e9" and ids[np.int64(4)] == "d2"
    for idx in (np.array([4, 0, 2]), np.array([True, False, True, False, True]), slice(1, 4), np.array([], int)):
        got = ids[idx]
        assert got.dtype == object and got.tolist() == plain[idx].tolist()
    assert np.asarray(ids).tolist() == strs and ids.tolist() == strs
    assert ids.take(np.array([3, 1])).tolist() == ["d10", "d1"]
    assert CategoricalIds(np.array([1, 0, 1]), np.array(["a", "b"], dtype=object)).tolist() == ["b", "a", "b"]


QRELS = {"q1": {"a": 1, "b": 2, "\u00e9": 1, "z" * 20 + "1": 1, "gone": 3},
         "q2": {"x": 1, "y": 0}, "q3": {"only": 1}}
RUN = {
    # ties broken by docid descending in strcmp (code point) order, non-ASCII above ASCII
    "q1": {"a": 0.5, "b": 0.5, "\u00e9": 0.5, "z" * 20 + "1": 2e-3, "z" * 20 + "2": 2e-3, "c": 1e300},
    "q2": {"x": -1.5e-7, "y": 3.0, "w": 3.0},
    "q9": {"a": 1.0},  # a run query absent from the qrels: ignored
}


def _write_run(path, run, sep=" "):
    lines = []
    for q, docs in run.items():
        for rank, (d, s) in enumerate(docs.items(), start=1):
            lines.append(sep.join([q, "Q0", d, str(rank), repr(s), "t"]) + "\n")
    path.write_text("".join(lines), encoding="utf-8")


@pytest.mark.parametrize("missing", ["zero", "skip"])
def test_a_run_file_read_by_arrow_evaluates_as_its_dicts(tmp_path, missing):
    path = tmp_path / "run"
    _write_run(path, RUN)
    assert isinstance(Run.from_file(path).docids, ArrowIds)  # the fast reader took it
    assert pickle.loads(pickle.dumps(Run.from_file(path))).to_dict() == Run.from_dict(RUN).to_dict()
    expected = trec_evaluate(QRELS, RUN, MEASURES, per_query=True, missing=missing)
    assert trec_evaluate(QRELS, str(path), MEASURES, per_query=True, missing=missing) == expected
    qrels_path = tmp_path / "qrels"
    qrels_path.write_text("".join(f"{q} 0 {d} {r}\n" for q, docs in QRELS.items() for d, r in docs.items()),
                          encoding="utf-8")
    assert trec_evaluate(str(qrels_path), str(path), MEASURES, per_query=True, missing=missing) == expected
    assert trec_evaluate(str(qrels_path), RUN, MEASURES, per_query=True, missing=missing) == expected
    # the same file with tabs goes through the line reader: same values
    tabbed = tmp_path / "run.tabs"
    _write_run(tabbed, RUN, sep="\t")
    assert not isinstance(Run.from_file(tabbed).docids, ArrowIds)
    assert trec_evaluate(QRELS, str(tabbed), MEASURES, per_query=True, missing=missing) == expected


def test_a_duplicate_docid_in_a_run_file_is_the_same_error(tmp_path):
    path = tmp_path / "run"
    path.write_text("q1 Q0 a 1 3 t\nq1 Q0 b 2 2 t\nq1 Q0 a 3 1 t\n")
    assert isinstance(Run.from_file(path).docids, ArrowIds)
    with pytest.raises(InputError, match="query 'q1': docid 'a' appears twice in the run"):
        trec_evaluate(QRELS, str(path), ["map"])
    assert trec_evaluate(QRELS, str(path), ["num_ret"], max_ret=2)["num_ret"] == 2


def test_a_run_dict_keeps_its_docids_unmade_until_asked():
    run = Run.from_dict({"q1": {"d2": 0.5, "d1": 0.5}, "q2": {7: 1.0}})
    assert isinstance(run.docids, MappingIds) and run.plain
    taken = run.docids.take(np.array([2, 0]))
    assert taken.tolist() == ["7", "d2"] and taken[1] == "d2"  # made (7 as "7") on first use
    assert run.docids[np.array([1])].tolist() == ["d1"] and np.asarray(run.docids).tolist() == ["d2", "d1", "7"]
    assert pickle.loads(pickle.dumps(Run.from_dict({"q": {1: 0.5}}))).docids.tolist() == ["1"]


def test_a_docid_that_is_not_a_str_is_judged_as_its_str():
    qrels = {"q1": {"1": 1, "b": 1}, "q2": {"x": 1}}
    as_str = {"q1": {"1": 0.9, "b": 0.1, "c": 0.5}, "q2": {"x": 1.0}}
    mixed = {"q1": {1: 0.9, "b": 0.1, "c": 0.5}, "q2": {"x": 1.0}}
    expected = trec_evaluate(qrels, as_str, MEASURES, per_query=True)
    assert trec_evaluate(qrels, mixed, MEASURES, per_query=True) == expected
    # a query the qrels do not judge may hold any docid: it is left out before any docid is read
    assert trec_evaluate(qrels, {**as_str, "q9": {3: 1.0}}, MEASURES, per_query=True) == expected


def test_a_judged_docid_with_a_lone_surrogate_is_hashed_not_refused(tmp_path):
    path = tmp_path / "run"
    path.write_text("q1 Q0 a 1 3 t\nq1 Q0 b 2 2 t\n", encoding="utf-8")
    qrels = {"q1": {"a": 1, "\udcff": 1}}
    assert trec_evaluate(qrels, str(path), ["num_rel_ret", "num_rel"]) == {"num_rel_ret": 1, "num_rel": 2}


def test_a_non_str_docid_far_into_a_large_dict_run_is_matched_by_its_str():
    """The grades are read from the dicts in chunks of queries: a docid given as an int in a late chunk is
    still the str the qrels judge (the whole run falls back to the key join)."""
    qrels = {f"q{i}": {"1": 1, "d": 0} for i in range(2500)}
    run = {f"q{i}": {"1": 0.5, "x": 0.9} for i in range(2500)}
    mixed = {**run, "q2100": {1: 0.5, "x": 0.9}}
    expected = {q: 0.5 for q in sorted(qrels)}  # "1" (relevant) ranks second after "x" in every query
    assert trec_evaluate(qrels, mixed, ["recip_rank"], per_query=True)["recip_rank"] == expected
    assert trec_evaluate(qrels, run, ["recip_rank"], per_query=True)["recip_rank"] == expected
