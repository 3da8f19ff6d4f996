"""Retrieval-only CSV takes the columnar path with the output of the Sample path, byte for byte.

Every test compares the columnar run (``evaluate(..., format="csv")``, what ``ragmeter
eval`` runs) with :func:`ragmeter.evaluate` over :func:`ragmeter.io.read_samples` on the same file:
Arrow's reading for plain blocks, the reader's rules for blocks Arrow refuses, the rest of the
file by the reader where quoting is not plain, and every row the kernels cannot take on the
Sample path.
"""

from __future__ import annotations

import csv
import gzip
import io
import json
from pathlib import Path
from typing import Any

import pytest

from ragmeter import evaluate
from ragmeter.engines import _csv
from ragmeter.errors import InputError
from ragmeter.io import read_samples
from tests.engines.test_engines_identical import _assert_same, _generated

pytest.importorskip("pyarrow")
METRICS = ["mrr", "ndcg@10", "recall@5", "map(rel_level=2)"]
ROOT = Path(__file__).resolve().parents[2]


def _check(tmp: Path, src: Path, metrics: list[str] = METRICS, **kw: Any) -> Any:
    """Run both paths on ``src`` (``on_error="skip"``); assert identical files, ids and bad rows."""
    local = evaluate(read_samples(src, on_error="skip", **kw), metrics, out_dir=str(tmp / f"{src.name}-local"),
                     keep_records=False)
    bad: list[InputError] = []
    run = evaluate(src, metrics, format="csv", out_dir=tmp / f"{src.name}-col", on_error="skip",
                            on_bad_row=bad.append, **kw)
    _assert_same(tmp / f"{src.name}-local", tmp / f"{src.name}-col")
    assert run.ids == local.ids
    assert len(bad) == local.run["input_errors"]
    return run


def _cell(v: Any, style: str) -> Any:
    if v is None or isinstance(v, str):
        return v
    return json.dumps(v) if style == "json" else repr(v)  # repr: what pandas to_csv writes for a list


def _row_cells(r: dict[str, Any], cols: tuple[str, ...], style: str, i: int) -> list[Any]:
    if style == "mixed":  # JSON and Python-literal rows alternate
        style = "json" if i % 2 else "python"
    return ["" if r.get(c) is None else _cell(r.get(c), style) for c in cols]


def _csv_text(rows: list[dict[str, Any]], style: str = "json", cols: tuple[str, ...] = ("id", "contexts", "relevant"),
              lineterminator: str = "\r\n") -> str:
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator=lineterminator)
    w.writerow(cols)
    w.writerows(_row_cells(r, cols, style, i) for i, r in enumerate(rows))
    return buf.getvalue()


def _rows(n: int, graded: bool) -> list[dict[str, Any]]:
    rows = _generated(n)
    if not graded:
        for r in rows:
            if isinstance(r.get("relevant"), dict):
                r["relevant"] = sorted(r["relevant"])
    return rows


@pytest.mark.parametrize(("style", "graded"), [("json", False), ("json", True), ("python", False), ("python", True)])
def test_generated_csv_identical_to_the_sample_path(tmp_path: Path, style: str, graded: bool) -> None:
    src = tmp_path / f"gen-{style}-{graded}.csv"
    src.write_text(_csv_text(_rows(3000, graded), style), encoding="utf-8")
    run = _check(tmp_path, src)
    # every row with contexts and labels matched by id is a kernel row: Arrow read every cell
    assert run.run["engine"]["columnar_rows"] == 3000


@pytest.mark.slow
def test_generated_20k_rows_identical_to_the_sample_path(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(_csv, "BLOCK_BYTES", 256 << 10)  # the file (~1.5 MB) is read in several blocks
    src = tmp_path / "gen20k.csv"
    src.write_text(_csv_text(_generated(20_000, seed=5), "mixed"), encoding="utf-8")
    assert src.stat().st_size > 4 * _csv.BLOCK_BYTES
    run = _check(tmp_path, src, ["mrr", "ndcg@10", "recall@5", "map", "precision@3"])
    assert run.ids[:4] == ["q0", "q1", "q2", "4"] and len(run) == 20_000
    assert run.run["engine"]["columnar_rows"] == 20_000


def test_blocks_split_at_record_boundaries_with_quoted_newlines(tmp_path: Path,
                                                                monkeypatch: pytest.MonkeyPatch) -> None:
    rows = _rows(400, graded=True)
    for i, r in enumerate(rows):
        if i % 7 == 0:
            r["query"] = f"line one, with a comma\nline two of {i}"  # a quoted newline: records span lines
    monkeypatch.setattr(_csv, "BLOCK_BYTES", 2048)  # many blocks, many boundaries inside records
    src = tmp_path / "multi.csv"
    src.write_text(_csv_text(rows, cols=("id", "query", "contexts", "relevant")), encoding="utf-8-sig")  # a BOM
    run = _check(tmp_path, src)
    assert run.run["engine"]["columnar_rows"] == 400


NASTY = [
    # (name, the row's cells as written after the header id,query,contexts,relevant, how its block
    # is read: "arrow", or "reader" where pyarrow.csv or pyarrow.json refuses the block)
    ("a Python literal", 'p1,q,"[{\'id\': \'d1\'}, {\'id\': \'d2\'}]","[\'d2\']"', "arrow"),
    ("a Python literal with an apostrophe", 'p2,q,"[{\'id\': \'d1\', \'text\': ""it\'s""}]","[\'d1\']"', "arrow"),
    ("a literal with a trailing comma", "p3,q,\"['d1', 'd2',]\",\"['d2']\"", "reader"),
    ("graded, Python", "p4,q,\"[{'id': 'd2'}, {'id': 'd1'}]\",\"{'d1': 2, 'd2': 0.5}\"", "arrow"),
    ("an empty relevant cell", 'p5,q,"[{""id"": ""d1""}]",', "arrow"),
    ("a blank relevant cell", 'p6,q,"[{""id"": ""d1""}]",   ', "arrow"),
    ("an empty contexts cell", 'p7,q,,"[""d1""]"', "arrow"),
    ("a plain-string contexts cell", 'p8,q,d1,"[""d1""]"', "arrow"),
    ("NaN score", 'p9,q,"[{""id"": ""d1"", ""score"": NaN}]","[""d1""]"', "arrow"),
    ("not JSON", 'p10,q,"[{""id"": d1}]","[""d1""]"', "reader"),
    ("an integer id", 'p11,q,"[{""id"": 3}]","[""3""]"', "reader"),
    ("a grade that is not a number", 'p12,q,"[{""id"": ""d1""}]","{""d1"": ""high""}"', "arrow"),
    ("an infinite grade", 'p13,q,"[{""id"": ""d1""}]","{""d1"": 1e400}"', "arrow"),
    ("a key given twice", 'p14,q,"[{""id"": ""d1""}]","{""d1"": 1, ""d1"": 3}"', "arrow"),
    ("an injection", 'p15,q,"[{""id"": ""d1""}], ""g"": [1]","[""d1""]"', "reader"),
    ("a duplicate id", 'p1,q,"[{""id"": ""d1""}]","[""d1""]"', "arrow"),
    ("text contexts", 'p17,q,"[""a passage"", ""another one""]","[""a passage""]"', "reader"),
    ("unknown context key", 'p18,q,"[{""id"": ""d1"", ""title"": ""t""}]","[""d1""]"', "reader"),
    ("a tab in a cell", 'p19,q,"[{""id"": ""d\tx""}]","[""d\tx""]"', "arrow"),
    ("a lone surrogate escape", 'p20,q,"[{""id"": ""\\ud800""}]","[""d1""]"', "arrow"),
    ("too many cells", 'p21,q,"[]","[]",extra', "reader"),
    ("too few cells", 'p22,q', "reader"),
    ("a whitespace-only line", "   ", "reader"),
    ("every field empty", ",,,", "arrow"),
    ("a list grade", 'p25,q,"[{""id"": ""d1""}]","[[""d1"", 1]]"', "reader"),
    ("no id", ',q,"[{""id"": ""d1""}, {""id"": ""d9""}]","[""d9""]"', "arrow"),
    ("an empty line", "", "arrow"),
]


def _nasty_file(tmp: Path, name: str, lines: list[str], n: int = 300, encoding_row: bytes | None = None) -> Path:
    plain = _csv_text(_rows(n, graded=False), cols=("id", "query", "contexts", "relevant"), lineterminator="\n")
    head, *body = plain.splitlines()
    parts = [x.encode("utf-8") for x in [head, *body[:100], *lines, *body[100:]]]
    if encoding_row is not None:
        parts.insert(len(parts) - 50, encoding_row)
    data = b"\n".join(parts) + b"\n"
    path = tmp / name
    path.write_bytes(data)
    return path


@pytest.mark.parametrize(("what", "line", "how"), NASTY, ids=[w for w, _, _ in NASTY])
def test_each_nasty_row_alone_in_a_plain_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, what: str, line: str,
                                              how: str) -> None:
    by_reader: list[int] = []
    parsed = _csv.CsvSource._parsed
    monkeypatch.setattr(_csv.CsvSource, "_parsed", lambda self, rows: by_reader.append(len(rows)) or parsed(self, rows))
    run = _check(tmp_path, _nasty_file(tmp_path, "one.csv", [line]))
    assert run.run["engine"]["columnar_rows"] >= 300  # the plain rows stay on the kernels
    assert bool(by_reader) == (how == "reader")


def test_all_nasty_rows_and_a_latin1_row(tmp_path: Path) -> None:
    latin1 = 'l1,caf\xe9,"[{""id"": ""d1""}]","[""d1""]"'.encode("latin-1")
    src = _nasty_file(tmp_path, "all.csv", [line for _, line, _ in NASTY], encoding_row=latin1)
    run = _check(tmp_path, src)
    local = list(read_samples(src, on_error="skip"))
    errors = [x for x in local if isinstance(x, InputError)]
    assert any("0xE9" in e.message and "column 'query'" in e.message for e in errors)  # the Latin-1 row, named
    assert all(e.path == str(src) and e.line is not None and "starts on file line" in e.message for e in errors)
    assert len(run) == len(local)  # every row kept, bad ones as errors


@pytest.mark.parametrize("rows", [['x1,say "hi",[],[]'], ['x2,"a"b,"[{""id"": ""d1""}]","[""d1""]"'],
                                  ['x3,q,"[]","[]"\rx4,q,"[]","[]"'], ['x5,"unterminated,[],[]']])
def test_irregular_quoting_reads_the_rest_by_the_reader(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                        rows: list[str]) -> None:
    # a quote inside an unquoted field (Python's csv keeps it as a character), text after a closing
    # quote, a lone carriage return, a quote never closed: only Python's parser says where such a
    # record ends, so the reader reads the rest of the file
    starts: list[int] = []
    by_reader = _csv.CsvSource._by_reader
    monkeypatch.setattr(_csv, "BLOCK_BYTES", 4096)
    monkeypatch.setattr(_csv.CsvSource, "_by_reader",
                        lambda self, stream, **kw: starts.append(kw["row"]) or by_reader(self, stream, **kw))
    _check(tmp_path, _nasty_file(tmp_path, "q.csv", rows))
    assert len(starts) == 1 and 0 < starts[0] <= 100  # the blocks before it were read by Arrow


def test_missing_columns_and_other_columns(tmp_path: Path) -> None:
    rows = _rows(200, graded=True)
    src = tmp_path / "norel.csv"  # no relevant column: every row undefined -> the run's error
    src.write_text(_csv_text(rows, cols=("id", "contexts")), encoding="utf-8")
    with pytest.raises(InputError) as fast:
        evaluate(src, METRICS, format="csv", out_dir=tmp_path / "o1")
    with pytest.raises(InputError) as slow:
        evaluate(read_samples(src), METRICS, out_dir=str(tmp_path / "o2"))
    assert fast.value.field == slow.value.field == "relevant"
    src = tmp_path / "docs.csv"  # contexts under another name: the message says which, and --map
    src.write_text(_csv_text(rows, cols=("id", "docs", "relevant")), encoding="utf-8")
    with pytest.raises(InputError) as fast:
        evaluate(src, METRICS, format="csv", out_dir=tmp_path / "o3", on_error="skip")
    with pytest.raises(InputError) as slow:
        evaluate(read_samples(src, on_error="skip"), METRICS, out_dir=str(tmp_path / "o4"))
    assert fast.value.message == slow.value.message and "--map docs=contexts" in fast.value.message
    for r in rows:
        r["retriever"], r["metadata"] = "bm25", {"run": 1} if r.get("id", "").endswith("1") else None
    src = tmp_path / "extra.csv"  # metadata column (JSON object) and an unknown column
    src.write_text(_csv_text(rows, cols=("retriever", "id", "metadata", "contexts", "relevant")), encoding="utf-8")
    _check(tmp_path, src)
    src = tmp_path / "ragas.csv"  # aliases and a field map
    src.write_text(_csv_text(rows, cols=("id", "contexts", "relevant")).replace("id,contexts,relevant",
                                                                               "qid,retrieved_contexts,gold", 1),
                   encoding="utf-8")
    _check(tmp_path, src, field_map={"qid": "id", "gold": "relevant"})


def test_bundled_examples_as_csv(tmp_path: Path) -> None:
    rows = [json.loads(line) for line in (ROOT / "examples" / "rag_samples.jsonl").read_text().splitlines() if line]
    cols = tuple(dict.fromkeys(k for r in rows for k in r))
    src = tmp_path / "examples.csv"
    src.write_text(_csv_text(rows, cols=cols), encoding="utf-8")
    _check(tmp_path, src, ["mrr", "ndcg@10", "precision@3", "recall@5", "hit_rate@3"])
    _check(tmp_path, ROOT / "examples" / "rag_samples_ragas.csv", ["mrr", "ndcg@10", "hit_rate@3"])


def test_gzip_bom_and_cli_path(tmp_path: Path) -> None:
    text = "\ufeff" + _csv_text(_rows(500, graded=True))
    src = tmp_path / "d.csv.gz"
    src.write_bytes(gzip.compress(text.encode("utf-8")))
    _check(tmp_path, src)
    run = evaluate(src, METRICS, out_dir=tmp_path / "cli")
    assert run.run["engine"]["path"] == "columnar" and run.run["engine"]["columnar_rows"] == 500


def test_bad_row_raises_with_file_row_and_field(tmp_path: Path) -> None:
    src = _nasty_file(tmp_path, "bad.csv", ['b1,q,"[{""id"": d1}]","[""d1""]"'])
    with pytest.raises(InputError) as fast:
        evaluate(src, METRICS, out_dir=tmp_path / "o")
    with pytest.raises(InputError) as slow:
        list(read_samples(src))
    assert str(fast.value) == str(slow.value)
    assert fast.value.path == str(src) and fast.value.line == 101 and fast.value.field == "contexts"
    assert "CSV row 101 starts on file line 102" in str(fast.value)
