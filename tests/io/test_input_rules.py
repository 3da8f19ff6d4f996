"""Inputs that do not say what the user thinks: absent is not empty, labels
that can never match, hostile rows, pandas CSV literals, Latin-1 CSV, and the details budget.

Every expected value here is worked out by hand from the rule in docs/input-format.md.
"""

from __future__ import annotations

import json
import math

import pytest

from ragmeter import evaluate
from ragmeter.errors import InputError
from ragmeter.io import read_samples
from ragmeter.io.fields import field_hints
from ragmeter.types import MAX_STORED_CHARS, MAX_STORED_ITEMS, MetricResult, Sample

from ._helpers import write_jsonl


def _records(run):
    return {r["id"]: r["metrics"] for r in run.records}


# ---- absent is not empty ----------------------------------------------------------------------


def test_contexts_absent_from_some_rows_is_undefined_and_empty_stays_0():
    rows = [
        {"id": "has", "contexts": [{"id": "x"}], "relevant": ["x"]},
        {"id": "absent", "relevant": ["x"]},  # no contexts key at all
        {"id": "null", "contexts": None, "relevant": ["x"]},  # null is absent too
        {"id": "empty", "contexts": [], "relevant": ["x"]},  # the retriever returned nothing
    ]
    run = evaluate(rows, ["ndcg@5", "mrr", "recall"])
    rec = _records(run)
    for m in ("ndcg@5", "mrr", "recall"):
        assert rec["has"][m]["score"] == 1.0
        for sid in ("absent", "null"):
            assert rec[sid][m]["score"] is None
            assert rec[sid][m]["reason"] == "undefined: no contexts field"
            assert rec[sid][m]["details"] == {"missing_field": "contexts"}
        assert rec["empty"][m]["score"] == 0.0
    s = run.summary()["mrr"]
    assert (s["n"], s["undefined"], s["errors"]) == (2, 2, 0)


def test_answer_and_reference_absent_from_some_rows_is_undefined():
    rows = [
        {"id": "ok", "answer": "paris is the capital", "reference": "paris"},
        {"id": "no-answer", "reference": "paris"},
        {"id": "no-reference", "answer": "paris"},
    ]
    rec = _records(evaluate(rows, ["token_f1"]))
    # SQuAD normalisation drops the article: answer tokens paris, is, capital: P 1/3, R 1
    assert rec["ok"]["token_f1"]["score"] == pytest.approx(2 * (1 / 3) * 1 / (1 / 3 + 1))
    assert rec["no-answer"]["token_f1"]["reason"] == "undefined: no answer field"
    assert rec["no-reference"]["token_f1"]["reason"] == "undefined: no reference field"


def test_relevant_absent_from_some_rows_is_undefined_naming_the_field():
    rows = [{"id": "a", "contexts": [{"id": "x"}], "relevant": ["x"]},
            {"id": "b", "contexts": [{"id": "x"}]}]
    rec = _records(evaluate(rows, ["recall", "mrr"]))
    assert rec["b"]["recall"]["reason"] == "undefined: no relevant field"
    # mrr can also take its relevance from a reference answer: it names both
    assert rec["b"]["mrr"]["reason"] == "undefined: no relevant field and no reference field"


@pytest.mark.parametrize(("rename", "field", "metrics"), [
    ("docs", "contexts", ["ndcg@5", "mrr"]),
    ("qrels", "relevant", ["recall"]),
    ("output", "answer", ["token_f1"]),
])
def test_field_absent_from_every_row_is_an_input_error_with_the_close_match(tmp_path, rename, field, metrics):
    base = {"query": "q", "contexts": [{"id": "x"}], "relevant": ["x"], "answer": "a", "reference": "a"}
    rows = []
    for i in range(3):
        row = dict(base, id=f"q{i}")
        row[rename] = row.pop(field)
        rows.append(row)
    path = write_jsonl(tmp_path / "d.jsonl", rows)
    out = tmp_path / "out"

    with pytest.raises(InputError) as info:
        evaluate(path, metrics, out_dir=out)
    msg = str(info.value)
    assert info.value.path == str(path) and info.value.field == field
    assert f"no row has a '{field}' field" in msg
    assert f"did you mean '{rename}'? use --map {rename}={field}" in msg
    assert f"'{rename}'" in msg.split("The rows have:")[1]
    # the results are written all the same: nothing computed is lost
    assert len((out / "results.jsonl").read_text().splitlines()) == 3


# ---- labels that can never match ----------------------------------------------------------------


def test_id_labels_with_contexts_without_ids_are_undefined():
    rows = [{"id": "a", "contexts": ["the first passage", "the second"], "relevant": ["doc1", "doc7"]}]
    r = _records(evaluate(rows, ["ndcg@5", "recall"]))["a"]["ndcg@5"]
    assert r["score"] is None
    assert r["reason"].startswith("undefined: the relevance labels can never match the contexts: the labels are ids")
    assert r["details"]["labels_cannot_match"] is True


def test_text_labels_with_id_only_contexts_are_undefined():
    rows = [{"id": "a", "contexts": [{"id": "d1"}, {"id": "d2"}], "relevant": ["Paris is the capital of France"]}]
    r = _records(evaluate(rows, ["mrr"]))["a"]["mrr"]
    assert r["score"] is None and "the labels are texts" in r["reason"]


def test_labels_that_can_match_but_miss_still_score_0():
    rows = [
        {"id": "ids", "contexts": [{"id": "d1"}], "relevant": ["d9"]},  # id labels, id contexts: a miss
        {"id": "texts", "contexts": ["cats purr loudly"], "relevant": ["dogs bark at night"]},
    ]
    rec = _records(evaluate(rows, ["mrr"]))
    assert rec["ids"]["mrr"]["score"] == 0.0 and rec["texts"]["mrr"]["score"] == 0.0


# ---- rows that used to crash the run --------------------------------------------------------------

GOOD = '{"id": "ok", "contexts": [{"id": "a"}], "relevant": ["a"]}'
HOSTILE = {
    "lone surrogate in the id": '{"id": "q\\ud800", "contexts": [{"id": "a"}], "relevant": ["a"]}',
    "lone surrogate in a text": '{"id": "t", "answer": "x\\udfff", "contexts": [{"id": "a"}], "relevant": ["a"]}',
    "100k-deep array": '{"id": "d", "contexts": ' + "[" * 100_000 + "]" * 100_000 + "}",
    "5,000-digit integer": '{"id": ' + "9" * 5000 + ', "contexts": [{"id": "a"}], "relevant": ["a"]}',
    "Infinity grade": '{"id": "i", "contexts": [{"id": "a"}], "relevant": {"a": Infinity}}',
    "NaN grade": '{"id": "n", "contexts": [{"id": "a"}], "relevant": {"a": NaN}}',
}


@pytest.mark.parametrize("case", list(HOSTILE))
def test_hostile_row_is_a_per_row_input_error(tmp_path, case):
    path = tmp_path / "d.jsonl"
    path.write_text(HOSTILE[case] + "\n" + GOOD + "\n", encoding="utf-8")
    items = list(read_samples(path, on_error="skip"))
    assert isinstance(items[0], InputError) and items[0].line == 1
    assert isinstance(items[1], Sample)
    run = evaluate(items, ["ndcg@5"], out_dir=str(tmp_path / "out"))
    lines = (tmp_path / "out" / "results.jsonl").read_text(encoding="utf-8").splitlines()
    summary = json.loads((tmp_path / "out" / "summary.json").read_text())["metrics"]["ndcg@5"]
    assert len(lines) == 2 == summary["n"] + summary["undefined"] + summary["errors"]
    assert summary["errors"] == 1 and run.summary()["ndcg@5"]["mean"] == 1.0
    with pytest.raises(InputError):
        list(read_samples(path))


def test_infinite_grade_is_rejected_from_python_and_csv(tmp_path):
    with pytest.raises(ValueError, match="expected a finite relevance grade"):
        Sample(id="a", relevant={"a": math.inf})
    path = tmp_path / "d.csv"
    path.write_text('id,contexts,relevant\nq1,"[""a""]","{""a"": Infinity}"\nq2,"[""a""]","{""a"": 2}"\n')
    items = list(read_samples(path, on_error="skip"))
    assert isinstance(items[0], InputError) and items[0].field == "relevant"
    assert items[1].relevant == {"a": 2.0}


def test_writer_survives_a_lone_surrogate_from_python(tmp_path):
    run = evaluate([Sample(id="q\ud800", contexts=[{"id": "a"}], relevant=["a"])], ["mrr"],
                   out_dir=str(tmp_path / "o"))
    line = (tmp_path / "o" / "results.jsonl").read_text(encoding="utf-8")
    assert json.loads(line)["id"] == "q\ud800" and run.summary()["mrr"]["mean"] == 1.0


# ---- CSV ------------------------------------------------------------------------------------------


def test_pandas_to_csv_python_list_literals_are_read(tmp_path):
    pd = pytest.importorskip("pandas")
    path = tmp_path / "d.csv"
    pd.DataFrame({"id": ["q1"], "contexts": [["a b", "c"]], "relevant": [["c"]]}).to_csv(path, index=False)
    assert "['a b', 'c']" in path.read_text()
    (s,) = list(read_samples(path))
    assert [c.text for c in s.contexts] == ["a b", "c"] and s.relevant == ["c"]
    assert _records(evaluate([s], ["mrr"]))["q1"]["mrr"]["score"] == 0.5


def test_a_python_literal_is_never_evaluated(tmp_path):
    path = tmp_path / "d.csv"
    path.write_text('id,contexts\nq1,"[__import__(\'os\').getcwd()]"\n')
    with pytest.raises(InputError, match="could not decode"):
        list(read_samples(path))


def test_latin1_csv_names_the_line_and_skip_keeps_the_other_rows(tmp_path):
    path = tmp_path / "d.csv"
    cells = ',"[""a""]","[""a""]"\n'
    text = "id,query,contexts,relevant\nq1,x" + cells + "q2,caf\xe9" + cells + "q3,y" + cells
    path.write_bytes(text.encode("latin-1"))
    with pytest.raises(InputError) as info:
        list(read_samples(path))
    assert info.value.line == 2 and "byte 0xE9 in column 'query'" in str(info.value)
    assert "file line 3" in str(info.value)
    items = list(read_samples(path, on_error="skip"))
    assert [type(i).__name__ for i in items] == ["Sample", "InputError", "Sample"]


# ---- the details budget and max_text_chars --------------------------------------------------------


def test_details_budget_bounds_every_stored_text():
    r = MetricResult(name="m", score=1.0, reason="r" * 10_000,
                     details={"sentences": [{"sentence": "s" * 5000}] * 5000, "short": "ok"})
    rec = r.to_record()
    assert len(rec["reason"]) < MAX_STORED_CHARS + 60
    assert len(rec["details"]["sentences"]) == MAX_STORED_ITEMS
    assert len(rec["details"]["sentences"][0]["sentence"]) < MAX_STORED_CHARS + 60
    assert rec["details"]["short"] == "ok"
    assert "sentences: 1,000 of 5,000 items kept" in rec["details"]["truncated"]
    assert len(json.dumps(rec)) < 3_000_000  # was ~25 MB


def test_long_answer_is_bounded_in_results(tmp_path):
    sentence = "alpha beta gamma delta epsilon. "
    rows = [{"id": "big", "answer": sentence * 20_000, "contexts": ["alpha beta gamma"]}]
    path = write_jsonl(tmp_path / "d.jsonl", rows)
    with pytest.raises(InputError, match="more than the limit of 100,000"):
        list(read_samples(path, max_text_chars=100_000))
    items = list(read_samples(path))  # 640,000 characters: under the default limit
    evaluate(items, ["lexical_faithfulness"], out_dir=str(tmp_path / "o"))
    size = (tmp_path / "o" / "results.jsonl").stat().st_size
    assert size < 400_000  # 20,000 sentence records were ~4 MB


def test_infinite_grade_in_a_qrels_file_is_an_input_error(tmp_path):
    from ragmeter.trec.io import Qrels

    path = tmp_path / "qrels.txt"
    path.write_text("q1 0 d1 1\nq1 0 d2 inf\n")
    with pytest.raises(InputError, match="expected a finite relevance grade, got 'inf'") as info:
        Qrels.from_file(path)
    assert (info.value.line, info.value.field) == (2, "rel")


@pytest.mark.parametrize("suffix", [".jsonl", ".parquet"])
def test_write_samples_keeps_absent_contexts_absent(tmp_path, suffix):
    from ragmeter.io import write_samples

    samples = [Sample(id="a", relevant=["x"]), Sample(id="b", contexts=[], relevant=["x"])]
    path = tmp_path / f"s{suffix}"
    write_samples(samples, path)
    back = list(read_samples(path))
    assert [s.has("contexts") for s in back] == [False, True]
    assert back == samples


def test_a_context_score_beyond_a_float_is_that_rows_input_error(tmp_path):
    # JSON reads 1e999 as infinity: a score no ranking can order
    path = write_jsonl(tmp_path / "d.jsonl", [{"id": "q1", "contexts": [{"id": "a", "score": 1e308}]},
                                              {"id": "q2", "contexts": [{"id": "a", "score": 0.5}]}])
    path.write_text(path.read_text().replace("1e+308", "1e999"))
    items = list(read_samples(path, on_error="skip"))
    assert isinstance(items[0], InputError) and items[0].field == "contexts[0].score"
    assert "expected a finite score, got inf" in str(items[0]) and items[1].contexts[0].score == 0.5
    with pytest.raises(ValueError, match="expected a finite score"):
        Sample(id="x", contexts=[{"id": "a", "score": math.inf}])


# ---- the "did you mean" of a run whose metrics the data chose ---------------------------------


@pytest.mark.parametrize(("labels", "hinted"), [
    ({"faithful": True, "claims_supported": "2/2"}, False),  # a judge's labels (judge-check's format)
    ({"faithful": False}, False),                             # a yes/no label is no relevance grade
    (["d1", "d3"], True),                                     # relevant ids
    ({"d1": 2, "d3": 1}, True),                               # graded relevance
])
def test_labels_are_suggested_as_relevance_only_when_they_look_like_it(tmp_path, labels, hinted):
    path = write_jsonl(tmp_path / "d.jsonl", [{"id": f"q{i}", "query": "q", "answer": "a", "contexts": ["c"],
                                               "labels": labels} for i in range(2)])
    hints = [h for h in field_hints(read_samples(path)) if h.startswith("no row has a 'relevant' field")]
    assert bool(hints) is hinted
