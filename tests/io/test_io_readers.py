"""read_samples on good input: every format, aliases, field_map, gzip, default ids, streaming."""

from __future__ import annotations

import gzip
import json
import shutil
import tracemalloc
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from ragmeter.errors import InputError, InvalidParameterError
from ragmeter.io import detect_format, read_samples
from ragmeter.io.readers import open_binary
from ragmeter.types import Context, Sample

from ._helpers import write_csv, write_jsonl

ROWS = [
    {"id": "q1", "query": "What is the SLA?", "answer": "99.9%",
     "contexts": [{"id": "d1", "text": "The SLA is 99.9%.", "score": 0.9}, "plain text chunk"],
     "reference": "99.9% uptime", "relevant": ["d1"], "team": "core"},
    {"id": 7, "query": "Second", "contexts": [], "relevant": {"d2": 3, "d3": 0.5}},
]


def _ids(items):
    return [s.id for s in items]


def test_jsonl_reads_every_field(tmp_path):
    path = write_jsonl(tmp_path / "d.jsonl", ROWS)
    s1, s2 = list(read_samples(path))
    assert s1 == Sample(
        id="q1", query="What is the SLA?", answer="99.9%",
        contexts=[Context(id="d1", text="The SLA is 99.9%.", score=0.9), Context(text="plain text chunk")],
        reference="99.9% uptime", relevant=["d1"], metadata={"team": "core"},
    )
    assert s2.id == "7"  # an integer id becomes a string
    assert s2.relevant == {"d2": 3.0, "d3": 0.5}
    assert s2.contexts == []


def test_jsonl_ragas_aliases(tmp_path):
    row = {"user_input": "q?", "response": "a.", "retrieved_contexts": ["c1", "c2"],
           "ground_truth": "ref", "reference_contexts": ["c2"]}
    (s,) = read_samples(write_jsonl(tmp_path / "r.jsonl", [row]))
    assert (s.query, s.answer, s.context_texts, s.reference, s.relevant) == ("q?", "a.", ["c1", "c2"], "ref", ["c2"])


def test_missing_id_is_the_line_number_blank_lines_counted(tmp_path):
    path = tmp_path / "d.jsonl"
    path.write_text('{"query": "a"}\n\n   \n{"query": "b"}\n{"id": "x", "query": "c"}\n', encoding="utf-8")
    # lines 2 and 3 are blank: skipped, but counted, so the second row is line 4
    assert _ids(read_samples(path)) == ["1", "4", "x"]


def test_null_values_are_missing(tmp_path):
    (s,) = read_samples(write_jsonl(tmp_path / "d.jsonl", [
        {"id": None, "query": "q", "answer": None, "contexts": None, "relevant": None}]))
    assert (s.id, s.answer, s.contexts, s.relevant) == ("1", None, [], None)


def test_jsonl_gz_equals_plain(tmp_path):
    plain = write_jsonl(tmp_path / "d.jsonl", ROWS)
    gz = tmp_path / "d.jsonl.gz"
    with open(plain, "rb") as src, gzip.open(gz, "wb") as dst:
        shutil.copyfileobj(src, dst)
    assert list(read_samples(gz)) == list(read_samples(plain))
    # gzip is recognised by content, so a compressed file named .jsonl reads too
    renamed = tmp_path / "also.jsonl"
    shutil.copy(gz, renamed)
    assert list(read_samples(renamed)) == list(read_samples(plain))


def test_open_binary_reads_plain_and_gzip_bytes_alike(tmp_path):
    raw = b'{"id": "a"}\n\n{"id": "b"}\n'
    plain = tmp_path / "p.jsonl"
    plain.write_bytes(raw)
    hidden = tmp_path / "g.jsonl"  # gzip told by content, not by the name
    hidden.write_bytes(gzip.compress(raw))
    for path in (plain, str(hidden)):  # a Path or a str
        with open_binary(path) as fh:
            assert fh.read() == raw


def test_utf8_bom_is_ignored(tmp_path):
    path = tmp_path / "bom.jsonl"
    path.write_bytes(b"\xef\xbb\xbf" + json.dumps({"id": "a", "query": "é"}).encode() + b"\n")
    (s,) = read_samples(path)
    assert (s.id, s.query) == ("a", "é")


@pytest.mark.parametrize("wrap", [lambda rows: rows, lambda rows: {"samples": rows}], ids=["list", "samples"])
def test_json_list_or_samples_object(tmp_path, wrap):
    rows = [{"query": "a", "contexts": ["x"]}, {"id": "b", "query": "b"}, {"query": "c"}]
    path = tmp_path / "d.json"
    path.write_text(json.dumps(wrap(rows)), encoding="utf-8")
    # missing ids: the 1-based position in the list
    assert _ids(read_samples(path)) == ["1", "b", "3"]


def test_csv_json_encoded_lists_and_empty_cells(tmp_path):
    path = write_csv(tmp_path / "d.csv", ["id", "query", "contexts", "relevant", "answer", "team"], [
        ["a", "q1", [{"id": "d1", "text": "t1"}, "t2"], ["d1"], "ans", "core"],
        ["", "q2", ["t3"], "", "", ""],
        ["c", "q3", "", [], "x", "ml"],
    ])
    a, b, c = read_samples(path)
    assert a.contexts == [Context(id="d1", text="t1"), Context(text="t2")]
    assert a.relevant == ["d1"] and a.answer == "ans" and a.metadata == {"team": "core"}
    # row 2: an empty id cell -> the row number; empty relevant cell = no labels (None); empty answer = None
    assert (b.id, b.relevant, b.answer) == ("2", None, None)
    # "[]" is labels with nothing relevant, which differs from an empty cell
    assert (c.contexts, c.relevant) == ([], [])


def test_csv_graded_relevance_and_metadata_column(tmp_path):
    path = write_csv(tmp_path / "d.csv", ["query", "contexts", "relevant", "metadata"], [
        ["q", [{"id": "d1"}, {"id": "d2"}], {"d1": 2, "d2": 0}, {"source": "prod"}],
    ])
    (s,) = read_samples(path)
    assert s.relevant == {"d1": 2.0, "d2": 0.0}
    assert s.metadata == {"source": "prod"}


def test_csv_ragas_example_file():
    path = Path(__file__).resolve().parents[2] / "examples" / "rag_samples_ragas.csv"
    samples = list(read_samples(path))
    assert len(samples) == 5
    assert _ids(samples) == ["1", "2", "3", "4", "5"]
    assert samples[0].query == "How long does Nimbus keep weekly snapshots?"
    assert samples[0].reference == "12 weeks."
    assert len(samples[0].contexts) == 2 and isinstance(samples[0].relevant, list)
    assert samples[1].relevant is None  # empty reference_contexts cell


def test_parquet_list_struct_and_map_columns(tmp_path):
    ctx = pa.list_(pa.struct([("id", pa.string()), ("text", pa.string()), ("score", pa.float64())]))
    table = pa.table({
        "id": pa.array(["a", None]),
        "user_input": pa.array(["q1", "q2"]),
        "contexts": pa.array([[{"id": "d1", "text": "t", "score": 0.5}], None], type=ctx),
        "relevant": pa.array([[("d1", 2.0)], None], type=pa.map_(pa.string(), pa.float64())),
        "extra": pa.array([1, 2]),
    })
    path = tmp_path / "d.parquet"
    pq.write_table(table, path)
    a, b = read_samples(path)
    assert (a.id, a.query, a.contexts, a.relevant, a.metadata) == (
        "a", "q1", [Context(id="d1", text="t", score=0.5)], {"d1": 2.0}, {"extra": 1})
    assert (b.id, b.contexts, b.relevant) == ("2", [], None)  # nulls are missing; id = 1-based row


def test_parquet_list_of_strings(tmp_path):
    path = tmp_path / "d.pq"
    pq.write_table(pa.table({"query": ["q"], "contexts": [["c1", "c2"]], "relevant": [["c2"]]}), path)
    (s,) = read_samples(path)
    assert s.context_texts == ["c1", "c2"] and s.relevant == ["c2"]


def test_field_map_renames_columns(tmp_path):
    path = write_jsonl(tmp_path / "d.jsonl", [{"qid": "x", "question_text": "q", "docs": ["a"], "gold": ["a"]}])
    fmap = {"qid": "id", "question_text": "query", "docs": "retrieved_contexts", "gold": "relevant"}
    (s,) = read_samples(path, field_map=fmap)  # a target may be a RAGAS alias too
    assert (s.id, s.query, s.context_texts, s.relevant, s.metadata) == ("x", "q", ["a"], ["a"], {})


def test_field_map_on_csv(tmp_path):
    path = write_csv(tmp_path / "d.csv", ["question_text", "docs"], [["q", ["a", "b"]]])
    (s,) = read_samples(path, field_map={"question_text": "query", "docs": "contexts"})
    assert (s.query, s.context_texts) == ("q", ["a", "b"])


def test_field_map_with_unknown_target_is_a_parameter_error(tmp_path):
    path = write_jsonl(tmp_path / "d.jsonl", [{"query": "q"}])
    with pytest.raises(InvalidParameterError, match="expected a target among"):
        read_samples(path, field_map={"q": "qeury"})


def test_field_map_column_missing_from_csv_header(tmp_path):
    path = write_csv(tmp_path / "d.csv", ["query"], [["q"]])
    with pytest.raises(InputError, match=r"'question_text'.*its columns are: 'query'"):
        list(read_samples(path, field_map={"question_text": "query"}))


def test_format_override_and_detection(tmp_path):
    path = write_jsonl(tmp_path / "data.txt", [{"query": "q"}])
    assert [s.query for s in read_samples(path, format="jsonl")] == ["q"]
    with pytest.raises(InputError, match=r"data\.txt.*pass format="):
        read_samples(path)
    assert detect_format("a/b.JSONL.gz") == "jsonl"
    assert detect_format("b.ndjson") == "jsonl"
    assert detect_format("b.csv.gz") == "csv"
    assert detect_format("x", "parquet") == "parquet"
    with pytest.raises(InvalidParameterError, match="expected one of jsonl, json, csv, parquet, otel, got 'xml'"):
        detect_format("x", "xml")


def test_jsonl_is_read_line_by_line(tmp_path):
    # line 3 is malformed: a reader that parsed the whole file first would fail before yielding anything
    path = write_jsonl(tmp_path / "d.jsonl", [{"query": "a"}, {"query": "b"}, "{oops"])
    it = read_samples(path)
    assert next(it).query == "a"
    assert next(it).query == "b"
    with pytest.raises(InputError, match=r"d\.jsonl:3: malformed JSON"):
        next(it)


def _peak_bytes(items) -> tuple[int, int]:
    """(number of items consumed, peak Python memory while consuming them)."""
    tracemalloc.start()
    try:
        n = sum(1 for _ in items)
        return n, tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


N_BIG = 4_000


@pytest.fixture(scope="module")
def big_rows():
    """4,000 rows of about 5 KB each (about 20 MB of JSON text), built lazily."""

    def rows():
        for i in range(N_BIG):
            yield {"id": f"q{i}", "query": f"question number {i}",
                   "contexts": [{"id": f"d{i}-{j}", "text": f"chunk {i}.{j} " + "lorem ipsum " * 135,
                                 "score": 1 / (j + 1)} for j in range(3)],
                   "relevant": [f"d{i}-0"]}

    return rows


@pytest.mark.parametrize("suffix", [".jsonl", ".jsonl.gz", ".csv"])
def test_reading_a_large_file_uses_bounded_memory(tmp_path, big_rows, suffix):
    path = tmp_path / f"big{suffix}"
    if suffix == ".csv":
        write_csv(path, ["id", "query", "contexts", "relevant"],
                  [[r["id"], r["query"], r["contexts"], r["relevant"]] for r in big_rows()])
    else:
        opener = gzip.open if suffix.endswith(".gz") else open
        with opener(path, "wt", encoding="utf-8") as fh:
            for r in big_rows():
                fh.write(json.dumps(r) + "\n")
    text_size = sum(len(json.dumps(r)) for r in big_rows())  # about 20 MB whatever the file format
    n, peak = _peak_bytes(read_samples(path))
    assert n == N_BIG
    # holding every sample would take more than the text size; streaming keeps only the ids seen so far
    # (for the duplicate check, about 100 bytes a row) and the current row: well under a tenth
    assert peak < text_size / 10, (peak, text_size)


def test_parquet_is_read_by_record_batches(tmp_path):
    n_rows = 20_000
    rows = [{"id": f"q{i}", "query": f"question {i} " + "x" * 100, "relevant": [f"d{i}"],
             "contexts": [{"id": f"d{i}", "text": "lorem ipsum " * 20, "score": 0.5}]} for i in range(n_rows)]
    path = tmp_path / "big.parquet"
    pq.write_table(pa.Table.from_pylist(rows), path, row_group_size=2_000)
    del rows
    whole = pq.read_table(path)
    whole_bytes = whole.nbytes  # about 7 MB in Arrow memory
    del whole
    base = pa.total_allocated_bytes()
    peak = n = 0
    for _ in read_samples(path):
        n += 1
        if n % 100 == 0:
            peak = max(peak, pa.total_allocated_bytes() - base)
    assert n == n_rows
    # record batches of 1,024 rows: Arrow holds a row group or two at a time, never the whole table
    assert peak < whole_bytes / 4, (peak, whole_bytes)
