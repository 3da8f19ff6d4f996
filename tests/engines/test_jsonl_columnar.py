"""Retrieval-only JSONL takes the columnar path (``evaluate(format="jsonl")``) with the output of the
Sample path, byte for byte: Arrow's JSON parser for plain blocks, the reader's line-by-line rules
for blocks it refuses, and every row the kernels cannot take on the Sample path."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from ragmeter import evaluate
from ragmeter.errors import InputError
from ragmeter.io import read_samples
from tests.engines.test_engines_identical import _assert_same, _generated

pytest.importorskip("pyarrow")
METRICS = ["mrr", "ndcg@10", "recall@5", "map(rel_level=2)"]
#: Rows the kernels must not take (each worded by the Sample path), and two they may.
ODD: list[dict[str, Any]] = [
    {"id": "e1", "contexts": [{"id": "a"}], "relevant": ["a"], "query": 5},  # query not a string
    {"id": 7, "contexts": [{"id": "a"}], "relevant": ["a"]},  # an integer id
    {"id": "e3", "contexts": [{"id": "a", "score": "x"}], "relevant": ["a"]},  # score not a number
    {"id": "e4", "contexts": [{"id": "a", "title": "t"}], "relevant": ["a"]},  # unknown context key
    {"id": "e5", "contexts": ["some text a"], "relevant": ["a"]},  # a text context
    {"id": "e6", "contexts": [{"id": "a"}], "relevant": [1]},  # a label that is not a string
    {"id": "e7", "retrieved_contexts": [{"id": "a"}], "relevant": ["a"]},  # an alias first seen here
    {"id": "e1", "contexts": [{"id": "a"}], "relevant": ["a"]},  # a duplicate id
    {"id": "e9", "contexts": [{"id": 3}], "relevant": ["3"]},  # an integer context id
    {"id": "e10", "contexts": [{"id": "a", "score": 2}], "relevant": ["a"], "retriever": "bm25"},  # kept as metadata
]


def _file(tmp: Path, name: str, rows: list[dict[str, Any]], odd: list[dict[str, Any]], bad: bool) -> Path:
    lines = [json.dumps(r) for r in rows[:30]] + (["", "{not json"] if bad else [])
    lines += [json.dumps(r) for r in odd] + [json.dumps(r) for r in rows[30:]]
    path = tmp / name
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def _check(tmp: Path, src: Path) -> Any:
    local = evaluate(read_samples(src, on_error="skip"), METRICS, out_dir=str(tmp / f"{src.stem}-local"),
                     keep_records=False)
    bad: list[InputError] = []
    run = evaluate(src, METRICS, format="jsonl", out_dir=tmp / f"{src.stem}-col", on_error="skip",
                            on_bad_row=bad.append)
    _assert_same(tmp / f"{src.stem}-local", tmp / f"{src.stem}-col")
    assert run.ids == local.ids
    assert len(bad) == local.run["input_errors"]
    return run


@pytest.mark.parametrize("graded", [False, True])
def test_jsonl_columnar_identical_to_the_sample_path(tmp_path: Path, graded: bool) -> None:
    rows = _generated(1000)
    if not graded:  # labels as lists of ids: Arrow's JSON parser takes those blocks
        for r in rows:
            if "relevant" in r:
                r["relevant"] = sorted(r["relevant"])
    for k, odd in enumerate(ODD):  # each odd row alone in an otherwise plain block
        run = _check(tmp_path, _file(tmp_path, f"one{k}-{graded}.jsonl", rows, [odd], bad=False))
        assert run.run["engine"]["columnar_rows"] >= 1000
    run = _check(tmp_path, _file(tmp_path, f"all-{graded}.jsonl", rows, ODD, bad=True))
    # the plain rows and the second e1 (the first one is a bad row, so its id is free); e10 keeps its
    # "retriever" as metadata, written beside its results by the Sample path
    assert run.run["engine"]["columnar_rows"] == 1001
    assert run.ids[30] == f"{tmp_path / f'all-{graded}.jsonl'}:32"  # the malformed line, where it was
    assert run.ids[3] == "4" and run.ids[44] == "46"  # no id: its line number (blank line counted)


def test_cli_path_takes_jsonl_columnar_and_a_bad_line_raises_with_its_line(tmp_path: Path) -> None:
    src = _file(tmp_path, "x.jsonl", _generated(100), [], bad=True)
    with pytest.raises(InputError) as info:
        evaluate(src, METRICS, out_dir=tmp_path / "out")
    assert info.value.line == 32 and info.value.path == str(src)
    src = _file(tmp_path, "y.jsonl", _generated(100), [], bad=False)
    run = evaluate(src, METRICS, out_dir=tmp_path / "out2")
    assert run.run["engine"]["path"] == "columnar" and run.run["engine"]["columnar_rows"] == 100


@pytest.mark.parametrize("read_bytes", [1, 7, 64, 1 << 23])
def test_lines_split_across_reads_and_blocks_keep_their_numbers(tmp_path, monkeypatch, read_bytes):
    """Blank and whitespace-only lines, CRLF, a BOM, a line starting with spaces and a last line
    without a newline, read a few bytes at a time into blocks of 3 lines: the rows, their line
    numbers (ids of rows without one) and the results equal the Sample path's."""
    from ragmeter.engines import _jsonl

    monkeypatch.setattr(_jsonl, "READ_BYTES", read_bytes)
    monkeypatch.setattr(_jsonl, "BLOCK_LINES", 3)
    rows = [json.dumps({"contexts": [{"id": f"d{i % 4}"}, {"id": f"d{(i + 1) % 4}"}], "relevant": [f"d{i % 3}"]})
            for i in range(11)]
    text = ("\ufeff" + rows[0] + "\n\n" + rows[1] + "\r\n   \n" + rows[2] + "\n\t\r\n" + "  " + rows[3] + "\n"
            + "\n".join(rows[4:10]) + "\n \n\n" + rows[10])
    path = tmp_path / "d.jsonl"
    path.write_bytes(text.encode("utf-8"))
    blocks = list(_jsonl._blocks(str(path)))
    # line 2 empty, 4 spaces, 6 a tab and CR, 14 a space, 15 empty: 11 rows on 16 lines
    assert [b.positions for b in blocks] == [[1, 3, 5], [7, 8, 9], [10, 11, 12], [13, 16]]
    lines = [b.data[b.offsets[i]:b.offsets[i + 1]] for b in blocks for i in range(len(b.positions))]
    assert lines[0] == rows[0].encode() + b"\n" and lines[1] == rows[1].encode() + b"\r\n"
    assert lines[3] == b"  " + rows[3].encode() + b"\n" and lines[-1] == rows[10].encode() + b"\n"
    fast = evaluate(path, ["mrr", "ndcg@3"], format="jsonl", out_dir=tmp_path / "fast")
    slow = evaluate(read_samples(path), ["mrr", "ndcg@3"], out_dir=str(tmp_path / "slow"), keep_records=False)
    assert len(fast) == len(slow) == 11
    assert (tmp_path / "fast" / "results.jsonl").read_bytes() == (tmp_path / "slow" / "results.jsonl").read_bytes()
    assert [json.loads(x)["id"] for x in (tmp_path / "fast" / "results.jsonl").read_text().splitlines()] == [
        "1", "3", "5", "7", "8", "9", "10", "11", "12", "13", "16"]


def test_a_truncated_gzip_stops_where_the_reader_stops(tmp_path):
    """A .jsonl.gz cut in half: the columnar path raises the reader's InputError (exit 2, not an
    internal error) naming the same last complete line, and writes the rows before it."""
    import gzip

    lines = [json.dumps({"id": f"q{i}", "contexts": [{"id": "d1"}, {"id": f"d{i % 5}"}], "relevant": ["d1"]})
             for i in range(20000)]
    packed = gzip.compress(("\n".join(lines) + "\n").encode())
    path = tmp_path / "cut.jsonl.gz"
    path.write_bytes(packed[:len(packed) // 2])
    with pytest.raises(InputError) as slow:
        evaluate(read_samples(path), ["mrr"], out_dir=str(tmp_path / "slow"))
    with pytest.raises(InputError) as fast:
        evaluate(path, ["mrr"], format="jsonl", out_dir=tmp_path / "fast")
    assert "cannot decompress the gzip file after this line" in str(fast.value)
    assert fast.value.line == slow.value.line and 1000 < fast.value.line < 20000
    written = (tmp_path / "fast" / "results.jsonl").read_text().splitlines()
    assert len(written) == fast.value.line  # every complete line before the break was scored
    assert [json.loads(x)["id"] for x in written[:3]] == ["q0", "q1", "q2"]
