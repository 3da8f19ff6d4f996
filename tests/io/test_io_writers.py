"""write_samples: what is written reads back equal, in JSONL, gzip JSONL and Parquet."""

from __future__ import annotations

import json

import pyarrow.parquet as pq
import pytest

from ragmeter.errors import InvalidParameterError
from ragmeter.io import read_samples, sample_record, write_samples
from ragmeter.types import Context, Sample

SAMPLES = [
    Sample(id="a", query="q1", answer="ans", reference="ref",
           contexts=[Context(id="d1", text="t1", score=0.25), Context(text="t2")],
           relevant={"d1": 2.0, "d9": 0.0}, metadata={"team": "core", "n": 3}),
    Sample(id="b", query="q2", relevant=["t2"]),
    Sample(id="c", contexts=[Context(id="only-id")]),
]


@pytest.mark.parametrize("name", ["out.jsonl", "out.jsonl.gz", "out.parquet"])
def test_round_trip(tmp_path, name):
    path = tmp_path / name
    assert write_samples(SAMPLES, path) == 3
    assert list(read_samples(path)) == SAMPLES


def test_jsonl_lines_leave_unset_fields_out(tmp_path):
    path = tmp_path / "out.jsonl"
    write_samples(SAMPLES, path)
    lines = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]
    # "b" has no contexts: absent stays absent (an empty list would read back as "retrieved nothing")
    assert lines[1] == {"id": "b", "query": "q2", "relevant": ["t2"]}
    assert lines[2]["contexts"] == [{"id": "only-id"}]
    assert sample_record(SAMPLES[0])["metadata"] == {"team": "core", "n": 3}


def test_parquet_schema(tmp_path):
    path = tmp_path / "out.parquet"
    write_samples(SAMPLES, path)
    table = pq.read_table(path)
    assert table.column_names == ["id", "query", "answer", "contexts", "reference", "relevant", "metadata"]
    # relevant is JSON-encoded (a column cannot hold both a list and a mapping)
    assert table.column("relevant").to_pylist() == ['{"d1": 2.0, "d9": 0.0}', '["t2"]', None]


def test_dicts_are_converted_and_numbered(tmp_path):
    path = tmp_path / "out.jsonl"
    write_samples([{"question": "q"}, {"id": "x", "query": "r"}], path)
    assert [(s.id, s.query) for s in read_samples(path)] == [("1", "q"), ("x", "r")]


def test_empty_parquet_is_written_with_its_schema(tmp_path):
    path = tmp_path / "none.parquet"
    assert write_samples([], path) == 0
    assert pq.read_table(path).num_rows == 0


def test_bad_items_and_formats(tmp_path):
    with pytest.raises(InvalidParameterError, match="item 2: expected a Sample or a dict, got int"):
        write_samples([SAMPLES[0], 5], tmp_path / "x.jsonl")  # type: ignore[list-item]
    with pytest.raises(InvalidParameterError, match=r"expected a \.jsonl or \.parquet path"):
        write_samples(SAMPLES, tmp_path / "x.csv")
