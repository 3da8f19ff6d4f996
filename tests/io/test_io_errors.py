"""read_samples on bad input: every message names the file, the line or row, the field and what was expected."""

from __future__ import annotations

import gzip
import json
import os

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from pydantic import ValidationError

from ragmeter.errors import EmptyInputError, InputError, InvalidParameterError
from ragmeter.io import read_samples
from ragmeter.io.records import from_validation_error, loc_to_field
from ragmeter.types import Sample

from ._helpers import write_csv, write_jsonl

GOOD = {"id": "ok", "query": "q", "contexts": ["c"], "relevant": ["c"]}


def _error(path, **kwargs) -> InputError:
    with pytest.raises(InputError) as info:
        list(read_samples(path, **kwargs))
    return info.value


@pytest.mark.parametrize(
    ("row", "field", "expected"),
    [
        ({"query": "q", "contexts": 5}, "contexts",
         "expected a list of strings or {id, text, score} objects, got int"),
        ({"query": "q", "contexts": [{"id": "a"}, {"id": "b"}, {"id": "c", "score": "high"}]},
         "contexts[2].score", "expected a number, got str 'high'"),
        ({"query": "q", "relevant": {"d1": "2"}}, "relevant", "grade of 'd1': expected a number, got '2'"),
        ({"query": 5}, "query", "expected a string, got int 5"),
        ({"query": "q", "answer": ["a"]}, "answer", "expected a string, got list ['a']"),
        ({"query": "q", "contexts": [{"txt": "a"}]}, "contexts[0]",
         "a context needs an 'id' or a 'text' (its other keys: 'txt'"),
        ({"query": "q", "contexts": [{"score": 1.0}]}, "contexts[0]", "a context needs an 'id' or a 'text'"),
        ({"query": "q", "contexts": [3.5]}, "contexts[0]", "expected a string or an {id, text, score} object"),
        ({"query": "q", "relevant": 3}, "relevant", "expected a list of ids/texts or a mapping id -> grade"),
        ({"query": "q", "metadata": [1]}, "metadata", "expected an object (mapping), got list"),
        ({"id": 1.5, "query": "q"}, "id", "expected a string, got float 1.5"),
        ({"question": "a", "query": "b"}, "query", "given twice, as 'question' and as 'query'"),
    ],
)
def test_wrong_type_names_file_line_and_field(tmp_path, row, field, expected):
    path = write_jsonl(tmp_path / "bad.jsonl", [GOOD, row])
    err = _error(path)
    assert (err.path, err.line, err.field) == (str(path), 2, field)
    assert expected in err.message
    assert str(err).startswith(f"{path}:2: field {field!r}: ")


def test_several_problems_in_one_row_are_all_named(tmp_path):
    path = write_jsonl(tmp_path / "bad.jsonl", [{"query": 1, "answer": 2}])
    err = _error(path)
    assert err.field == "query"
    assert "also field 'answer': expected a string, got int 2" in err.message


def test_malformed_json_line(tmp_path):
    path = write_jsonl(tmp_path / "bad.jsonl", [GOOD, {"id": "b", "query": "q"}, '{"query": "q",'])
    err = _error(path)
    assert (err.line, err.field) == (3, None)
    assert err.message.startswith("malformed JSON: Expecting property name enclosed in double quotes")
    assert "expected one JSON object per line" in err.message


def test_a_line_that_is_not_an_object(tmp_path):
    err = _error(write_jsonl(tmp_path / "bad.jsonl", [[1, 2]]))
    assert err.line == 1 and "expected a JSON object (one sample per line), got list" in err.message


def test_invalid_utf8_line(tmp_path):
    path = tmp_path / "bad.jsonl"
    path.write_bytes(b'{"query": "a"}\n{"query": "\xff"}\n{"query": "c"}\n')
    err = _error(path)
    assert err.line == 2 and "not UTF-8" in err.message
    # with skip, the lines around it still read
    items = list(read_samples(path, on_error="skip"))
    assert [type(x).__name__ for x in items] == ["Sample", "InputError", "Sample"]


def test_row_without_any_recognised_field(tmp_path):
    err = _error(write_jsonl(tmp_path / "bad.jsonl", [{"id": "a", "question_text": "q", "docs": []}]))
    assert err.line == 1 and err.field is None
    assert "no recognised field: expected at least one of query, answer, contexts, reference, relevant" in str(err)
    assert "found: 'id', 'question_text', 'docs'" in str(err)
    assert "--map col=query" in str(err)


def test_a_row_with_only_a_query_is_accepted(tmp_path):
    # no single field is required: each metric reads what it needs and is undefined without it
    (s,) = read_samples(write_jsonl(tmp_path / "q.jsonl", [{"query": "only a query"}]))
    assert s.query == "only a query"


def test_duplicate_id_names_both_lines(tmp_path):
    path = write_jsonl(tmp_path / "dup.jsonl", [GOOD, {"id": "b", "query": "x"}, {"id": "ok", "query": "y"}])
    err = _error(path)
    assert (err.line, err.field) == (3, "id")
    assert "duplicate sample id 'ok': line 1 has it too" in err.message


def test_explicit_id_colliding_with_a_default_id(tmp_path):
    # row 1 has no id, so it gets "1"; row 2 says "1" explicitly
    path = write_jsonl(tmp_path / "dup.jsonl", [{"query": "a"}, {"id": 1, "query": "b"}])
    err = _error(path)
    assert err.line == 2 and "duplicate sample id '1': line 1 has it too" in err.message


def test_skip_yields_errors_in_place_and_goes_on(tmp_path):
    path = write_jsonl(tmp_path / "mixed.jsonl", [
        {"id": "a", "query": "q", "contexts": ["x"]},
        "not json",
        {"id": "c", "query": "q", "contexts": 7},
        {"id": "a", "query": "again"},
        {"id": "e", "query": "q"},
    ])
    items = list(read_samples(path, on_error="skip"))
    assert [x.id if isinstance(x, Sample) else (x.line, x.field) for x in items] == [
        "a", (2, None), (3, "contexts"), (4, "id"), "e"]


def test_on_error_must_be_raise_or_skip(tmp_path):
    with pytest.raises(InvalidParameterError, match="expected 'raise' or 'skip', got 'ignore'"):
        read_samples(write_jsonl(tmp_path / "d.jsonl", [GOOD]), on_error="ignore")  # type: ignore[arg-type]


def test_missing_file_and_directory(tmp_path):
    with pytest.raises(InputError, match=r"nope\.jsonl: no such file"):
        read_samples(tmp_path / "nope.jsonl")
    folder = tmp_path / "dir.jsonl"
    folder.mkdir()
    with pytest.raises(InputError, match=r"dir\.jsonl: is a directory"):
        read_samples(folder)


@pytest.mark.skipif(os.name != "posix" or os.geteuid() == 0, reason="root reads any file")
def test_unreadable_file(tmp_path):
    path = write_jsonl(tmp_path / "locked.jsonl", [GOOD])
    path.chmod(0)
    with pytest.raises(InputError, match="cannot read the file"):
        read_samples(path)


@pytest.mark.parametrize(
    ("name", "content"),
    [("e.jsonl", ""), ("e.jsonl", "\n  \n\n"), ("e.json", "[]"), ("e.json", '{"samples": []}'),
     ("e.csv", "query,contexts\n"), ("e.csv", "")],
)
def test_empty_input(tmp_path, name, content):
    path = tmp_path / name
    path.write_text(content, encoding="utf-8")
    with pytest.raises(EmptyInputError) as info:
        list(read_samples(path, on_error="skip"))  # file-level problems raise even with skip
    assert info.value.path == str(path)
    assert "expected at least one" in str(info.value)


def test_empty_parquet(tmp_path):
    path = tmp_path / "e.parquet"
    pq.write_table(pa.table({"query": pa.array([], type=pa.string())}), path)
    with pytest.raises(EmptyInputError):
        list(read_samples(path))


def test_corrupt_gzip(tmp_path):
    path = tmp_path / "d.jsonl.gz"
    data = gzip.compress(("\n".join(json.dumps(GOOD | {"id": str(i)}) for i in range(2000)) + "\n").encode())
    path.write_bytes(data[: len(data) // 2])  # truncated
    with pytest.raises(InputError, match="cannot decompress the gzip file"):
        list(read_samples(path))


def test_json_file_malformed_and_wrong_shape(tmp_path):
    path = tmp_path / "d.json"
    path.write_text('[\n  {"query": "a"},\n  {"query": }\n]', encoding="utf-8")
    err = _error(path)
    assert err.line == 3 and "malformed JSON" in err.message and "expected a JSON list" in err.message
    path.write_text('{"rows": []}', encoding="utf-8")
    assert 'expected a list of sample objects or {"samples": [...]}, got an object with keys' in str(_error(path))
    path.write_text('[{"query": "a"}, 3]', encoding="utf-8")
    err = _error(path)
    assert err.line == 2 and "expected a JSON object (one sample per row), got int" in err.message


def test_csv_bad_cells_name_row_and_file_line(tmp_path):
    path = write_csv(tmp_path / "d.csv", ["id", "query", "contexts"], [
        ["a", "q", ["x"]],
        ["b", "multi\nline query", ["y"]],  # a quoted cell spanning two file lines
        ["c", "q", "[not json"],
    ])
    err = _error(path)
    # row 3 = the third record; the header is line 1 and row 2 spans lines 3-4, so row 3 starts on line 5
    assert (err.line, err.field) == (3, "contexts")
    assert "could not decode the JSON-encoded contexts" in err.message
    assert "(CSV row 3 starts on file line 5)" in err.message


def test_csv_plain_string_where_a_list_is_expected(tmp_path):
    path = write_csv(tmp_path / "d.csv", ["query", "relevant"], [["q", "d1, d2"]])
    err = _error(path)
    assert (err.line, err.field) == (1, "relevant")
    assert "expected a list or a mapping (JSON-encoded in CSV), got a plain string" in err.message


def test_csv_wrong_number_of_cells(tmp_path):
    path = tmp_path / "d.csv"
    path.write_text('query,answer\nq1,a1\nq2,a2,extra\n', encoding="utf-8")
    err = _error(path)
    assert err.line == 2 and "expected 2 cells (one per header column), got 3" in err.message


def test_csv_header_problems(tmp_path):
    path = tmp_path / "d.csv"
    path.write_text("query,query\nq,q\n", encoding="utf-8")
    assert "duplicated column(s) 'query'" in str(_error(path))
    path.write_text("question,user_input\nq,q\n", encoding="utf-8")
    assert "more than one column gives field(s) 'query'" in str(_error(path))
    path.write_text("foo,bar\n1,2\n", encoding="utf-8")
    assert "no recognised field" in str(_error(path))


def test_parquet_wrong_column_type_names_row_and_field(tmp_path):
    path = tmp_path / "d.parquet"
    pq.write_table(pa.table({"query": ["a", "b", "c"], "contexts": [["x"], ["y"], ["z"]],
                             "reference": pa.array([None, None, 3])}), path)
    err = _error(path)
    assert (err.path, err.line, err.field) == (str(path), 3, "reference")
    assert "expected a string, got int 3" in err.message


def test_not_a_parquet_file(tmp_path):
    path = tmp_path / "d.parquet"
    path.write_text("query\nq\n", encoding="utf-8")
    err = _error(path)
    assert err.path == str(path) and "cannot read the Parquet file" in err.message


@pytest.mark.parametrize(
    ("loc", "field"),
    [(("contexts", 2, "score"), "contexts[2].score"), (("relevant", "list[str]", 0), "relevant[0]"),
     (("id",), "id"), ((), "")],
)
def test_loc_to_field(loc, field):
    assert loc_to_field(loc) == field


def test_from_validation_error_keeps_the_line():
    with pytest.raises(ValidationError) as info:
        Sample.model_validate({"id": "x", "contexts": [{"id": "a", "score": "n/a"}]})
    err = from_validation_error(info.value, path="f.jsonl", line=9)
    assert str(err) == "f.jsonl:9: field 'contexts[0].score': expected a number, got str 'n/a'"


def test_a_row_whose_fields_are_all_empty(tmp_path):
    path = write_csv(tmp_path / "d.csv", ["id", "query", "contexts"], [["a", "q", ["x"]], ["b", "", ""]])
    err = _error(path)
    assert (err.line, err.field) == (2, None)
    assert "every field is empty (null or an empty cell): 'query', 'contexts'" in err.message
