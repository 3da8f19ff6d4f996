"""TREC file I/O: round trips (plain and gzipped), every input form, and bad lines reported precisely."""

from __future__ import annotations

import gzip

import numpy as np
import pandas as pd
import pyarrow as pa
import pytest

from ragmeter.errors import EmptyInputError, InputError
from ragmeter.trec import Qrels, Run
from ragmeter.trec.ids import ArrowIds

QRELS = {"301": {"FT-1": 1, "FT-2": 0, "FT-3": 2.5, "FT-4": -1}, "302": {"LA-9": 1}}
RUN = {"301": {"FT-1": 2.5, "FT-3": 2.5, "XX": -0.125}, "302": {"LA-9": 1e-300, "LA-1": 0.1 + 0.2}}


@pytest.mark.parametrize("suffix", [".txt", ".txt.gz"])
def test_qrels_round_trip(tmp_path, suffix):
    path = tmp_path / f"qrels{suffix}"
    Qrels.from_dict(QRELS).save(path)
    if suffix.endswith(".gz"):
        assert gzip.decompress(path.read_bytes()).startswith(b"301 0 FT-1 1\n")
    else:
        assert path.read_text().splitlines()[:3] == ["301 0 FT-1 1", "301 0 FT-2 0", "301 0 FT-3 2.5"]
    back = Qrels.from_file(path)
    assert back.to_dict() == QRELS
    assert back.rels.dtype == np.float64 and back.qid_codes.dtype == np.int64


@pytest.mark.parametrize("suffix", [".run", ".run.gz"])
def test_run_round_trip_is_exact_and_ranked(tmp_path, suffix):
    path = tmp_path / f"r{suffix}"
    Run.from_dict(RUN, name="myrun").save(path)
    text = gzip.decompress(path.read_bytes()).decode() if suffix.endswith(".gz") else path.read_text()
    lines = text.splitlines()
    # ranks follow trec_eval's order: score descending, ties by docid descending (FT-3 before FT-1)
    assert lines[:3] == ["301 Q0 FT-3 1 2.5 myrun", "301 Q0 FT-1 2 2.5 myrun", "301 Q0 XX 3 -0.125 myrun"]
    back = Run.from_file(path)
    assert back.name == "myrun"
    assert back.to_dict() == RUN  # scores survive exactly (repr round-trips floats)


def test_dataframe_and_arrow_round_trip():
    run = Run.from_dict(RUN)
    df = run.to_dataframe()
    assert list(df.columns) == ["qid", "docid", "score"]
    assert Run.from_pandas(df).to_dict() == RUN
    assert Run.from_pandas(pa.Table.from_pandas(df)).to_dict() == RUN
    qdf = Qrels.from_dict(QRELS).to_dataframe()
    assert list(qdf.columns) == ["qid", "docid", "rel"]
    assert Qrels.from_pandas(pa.Table.from_pandas(qdf)).to_dict() == QRELS


def test_categorical_columns_from_pandas_and_arrow():
    rdf, qdf = Run.from_dict(RUN).to_dataframe(), Qrels.from_dict(QRELS).to_dataframe()
    for cols in ({"qid": "category"}, {"docid": "category"}, {"qid": "category", "docid": "category"}):
        assert Run.from_pandas(rdf.astype(cols)).to_dict() == RUN
        assert Run.from_pandas(pa.Table.from_pandas(rdf.astype(cols))).to_dict() == RUN
        assert Qrels.from_pandas(qdf.astype(cols)).to_dict() == QRELS
        assert Qrels.from_pandas(pa.Table.from_pandas(qdf.astype(cols))).to_dict() == QRELS
    missing = qdf.astype({"docid": "category"})
    missing.loc[0, "docid"] = None
    for frame in (missing, pa.Table.from_pandas(missing)):
        with pytest.raises(InputError, match="expected a docid on every row"):
            Qrels.from_pandas(frame)


def test_reads_trec_eval_quirks(tmp_path):
    path = tmp_path / "run"
    path.write_text("# a comment\n\n301\tQ0  d1 1   0.5 tagA extra junk\n301 Q0 d2 2 0.25 tagB\n")
    run = Run.from_file(path)
    assert run.docids.tolist() == ["d1", "d2"]
    assert run.scores.tolist() == [0.5, 0.25]
    assert run.name == "tagB"  # the tag of the last line, as trec_eval


def test_spaces_tabs_and_trailing_blanks_read_as_the_line_parser_does(tmp_path):
    plain, odd = tmp_path / "plain", tmp_path / "odd"
    plain.write_text("1 Q0 d1 1 0.5 t\n1 Q0 d2 2 0.25 t\n2 Q0 d1 1 3 t\n")
    odd.write_text("1\tQ0\td1\t1\t0.5\tt\n1 Q0 d2 2 0.25 t \n\n2  Q0 d1 1 3 t\n")
    a, b = Run.from_file(plain), Run.from_file(odd)
    assert a.to_dict() == b.to_dict() == {"1": {"d1": 0.5, "d2": 0.25}, "2": {"d1": 3.0}}


@pytest.mark.parametrize("space", ["\t", "\x0b", "\x0c", "\x1c", "\x1f", "\u00a0", "\u2003", "\u3000", "\x85"])
def test_any_whitespace_inside_a_field_splits_it_as_the_line_parser_does(tmp_path, space):
    # one space-separated field holding another whitespace character: Arrow alone would keep it whole
    run = tmp_path / "run"
    run.write_text(f"1 Q0 d1 1 0.5 tagA{space}extra\n1 Q0 d2 2 0.25 tagB{space}extra\n", encoding="utf-8")
    assert Run.from_file(run).name == "tagB"
    qrels = tmp_path / "qrels"
    qrels.write_text(f"1 0 d1 1\n1 0 d2{space}x 1\n", encoding="utf-8")
    with pytest.raises(InputError) as err:
        Qrels.from_file(qrels)
    assert (err.value.path, err.value.line, err.value.field) == (str(qrels), 2, None)
    assert "expected 4 whitespace-separated fields (qid iter docid rel), got 5" in str(err.value)


def test_non_ascii_ids_without_unicode_spaces_read_as_the_line_parser_does(tmp_path):
    path = tmp_path / "run"
    path.write_text("q\u00e9 Q0 d\u4e2d 1 1e-3 t\u00e9\nq\u00e9 Q0 d\U0001f600 2 -2.5E+2 t\u00e9\n", encoding="utf-8")
    run = Run.from_file(path)
    assert run.to_dict() == {"q\u00e9": {"d\u4e2d": 1e-3, "d\U0001f600": -250.0}} and run.name == "t\u00e9"


def test_scores_are_read_exactly_as_python_reads_them(tmp_path):
    texts = ["0.1", "1e-300", "2.2250738585072011e-308", "123456789012345678901234567890", "0.30000000000000004",
             "-7.25e+02", "1.0000000000000002", "9007199254740993"]
    path = tmp_path / "run"
    path.write_text("".join(f"1 Q0 d{i} {i} {t} tag\n" for i, t in enumerate(texts)))
    assert dict(zip(Run.from_file(path).docids.tolist(), Run.from_file(path).scores.tolist(), strict=True)) == {
        f"d{i}": float(t) for i, t in enumerate(texts)}


def test_ids_are_kept_as_text(tmp_path):
    path = tmp_path / "qrels"
    path.write_text("007 0 NA 1\n007 0 null 0\n")
    qrels = Qrels.from_file(path)
    assert qrels.qid.tolist() == ["007", "007"]
    assert qrels.docids.tolist() == ["NA", "null"]


@pytest.mark.parametrize(
    ("content", "line", "field", "fragment"),
    [
        ("1 0 d1 1\n1 0 d2 x\n", 2, "rel", "expected a number, got 'x'"),
        ("1 0 d1 1\n1 0 d2\n", 2, "rel", "expected 4 whitespace-separated fields"),
        ("1 0 d1 1 extra\n", 1, None, "got 5"),
        ("1 0 d1 nan\n", 1, "rel", "expected a number"),
        # one space too many: the fields must not shift into place (4 fields with one empty)
        ("1 0 d1 1\n1  d2 1\n", 2, "rel", "expected 4 whitespace-separated fields"),
        ("1 0 d1 1\n 1 d2 1\n", 2, "rel", "expected 4 whitespace-separated fields"),
    ],
)
def test_bad_qrels_line(tmp_path, content, line, field, fragment):
    path = tmp_path / "bad.qrels"
    path.write_text(content)
    with pytest.raises(InputError) as err:
        Qrels.from_file(path)
    e = err.value
    assert (e.path, e.line, e.field) == (str(path), line, field)
    assert fragment in str(e)
    assert str(e).startswith(f"{path}:{line}: ")


@pytest.mark.parametrize(
    ("content", "line", "field"),
    [
        ("1 Q0 d1 1 0.5 t\n1 Q0 d2 2 high t\n", 2, "score"),
        ("1 Q0 d1 1 0.5 t\n\n1 Q0 d2 2 0.4\n", 3, "tag"),
        ("1 Q0 d1\n", 1, "rank"),
        ("1 Q0 d1 1 0.5 t\n1 Q0  d2 2 0.4\n", 2, "tag"),  # 5 fields, not 6 with an empty one
    ],
)
def test_bad_run_line(tmp_path, content, line, field):
    path = tmp_path / "bad.run.gz"
    path.write_bytes(gzip.compress(content.encode()))
    with pytest.raises(InputError) as err:
        Run.from_file(path)
    assert (err.value.path, err.value.line, err.value.field) == (str(path), line, field)
    assert f":{line}: field '{field}'" in str(err.value)


def test_missing_empty_and_binary_files(tmp_path):
    with pytest.raises(InputError, match="no such file"):
        Qrels.from_file(tmp_path / "nope")
    (tmp_path / "empty").write_text("\n")
    with pytest.raises(EmptyInputError):
        Run.from_file(tmp_path / "empty")
    (tmp_path / "bin").write_bytes(b"1 0 d\xff 1\n")
    with pytest.raises(InputError, match="UTF-8") as err:
        Qrels.from_file(tmp_path / "bin")
    assert err.value.line == 1


def test_bad_columns_and_values():
    with pytest.raises(InputError, match="missing score"):
        Run.from_pandas(pd.DataFrame({"qid": ["1"], "docid": ["d"]}))
    with pytest.raises(InputError, match="expected a number"):
        Run.from_dict({"1": {"d": "high"}})
    with pytest.raises(InputError) as err:
        Qrels.from_pandas(pd.DataFrame({"qid": ["1", "1"], "docid": ["a", "b"], "rel": [1.0, None]}))
    assert (err.value.line, err.value.field) == (2, "rel")


@pytest.mark.parametrize(("make", "data", "fragment"), [
    (Qrels.from_dict, {"q0": {"a": 1}, "q1": {"d0": 2, "d1": float("inf")}},
     "query 'q1', docid 'd1': expected a finite"),
    (Qrels.from_dict, {"q1": {"d1": float("nan")}}, "query 'q1', docid 'd1': expected a finite"),
    (Run.from_dict, {"q1": {"d0": 0.3}, "q2": {"d1": 0.2, "d2": float("nan")}},
     "query 'q2', docid 'd2': expected a finite score"),
])
def test_dicts_with_nan_or_infinite_grades_are_refused_naming_query_and_docid(make, data, fragment):
    # as the file and frame readers do: an infinite grade made ndcg NaN
    with pytest.raises(InputError, match=fragment):
        make(data)


@pytest.mark.parametrize(("make", "value", "fragment"), [
    (Run.from_dict, float("inf"), "expected a finite score, got inf"),
    (Run.from_dict, -float("inf"), "expected a finite score, got -inf"),
    (Run.from_dict, 10**400, "expected a finite score, got an integer of 401 digits"),
    (Qrels.from_dict, 10**400, "expected a finite relevance grade, got an integer of 401 digits"),
], ids=["inf", "-inf", "huge-score", "huge-grade"])
def test_an_infinite_score_or_one_beyond_a_float_is_refused(make, value, fragment):
    # two scores a float holds as infinity (1e999 and 2e999) would tie: no ranking can be trusted
    with pytest.raises(InputError, match=fragment):
        make({"q": {"a": value, "b": 1.0}})


def test_a_run_file_score_beyond_a_float_is_refused_naming_the_line(tmp_path):
    path = tmp_path / "run.txt"
    path.write_text("q1 Q0 d0 1 3.5 r\nq1 Q0 d1 2 1e999 r\nq1 Q0 d2 3 2e999 r\n")
    with pytest.raises(InputError, match="expected a finite score, got '1e999'") as err:
        Run.from_file(path)
    assert (err.value.line, err.value.field) == (2, "score")


def test_non_string_ids_are_converted():
    run = Run.from_dict({1: {2: 0.5}})
    assert run.qids.tolist() == ["1"] and run.docids.tolist() == ["2"]


def test_comments_quotes_and_carriage_returns_read_as_the_line_parser_does(tmp_path):
    path = tmp_path / "qrels"
    # a comment line with as many words as a judgement, '#' and '"' inside ids, a lone carriage return
    path.write_text('#q 0 d 1\n1 0 d#1 1\n1 0 "d2" 0\n', encoding="utf-8")
    assert Qrels.from_file(path).to_dict() == {"1": {"d#1": 1, '"d2"': 0}}
    path.write_bytes(b"1 0 d1 1\r1 0 d2 1\n")
    with pytest.raises(InputError) as err:
        Qrels.from_file(path)
    assert err.value.line == 1 and "got 8" in str(err.value)


def test_a_dict_docid_given_as_int_and_as_str_is_a_duplicate_as_in_a_file(tmp_path):
    from ragmeter.trec import evaluate

    # 1 and "1" are one TREC docid: listed twice in a query, as the file q1 Q0 1 ... twice is refused
    qrels = {"q1": {"1": 1, "2": 1}}
    with pytest.raises(InputError, match=r"query 'q1': docid '1' appears twice in the run") as e:
        evaluate(qrels, {"q1": {1: 0.5, "1": 0.4, "2": 0.3}}, ["P_5"])
    assert e.value.field == "docid"
    with pytest.raises(InputError, match="appears twice in the run"):  # the qrels read from a file
        (tmp_path / "q.txt").write_text("q1 0 1 1\nq1 0 2 1\n")
        evaluate(tmp_path / "q.txt", {"q1": {"1": 0.5, 1: 0.4}}, ["P_5"])
    # all str (or all int) docids: no duplicate possible, nothing refused; P_5 = 2 relevant / 5
    assert evaluate(qrels, {"q1": {1: 0.5, 2: 0.4}}, ["P_5"]).values["P_5"].tolist() == [0.4]


@pytest.mark.parametrize("which", ["qrels", "run"])
def test_a_dict_qid_given_as_int_and_as_str_is_refused(which):
    qrels, run = {"1": {"a": 1}}, {"1": {"a": 0.5}}
    (qrels if which == "qrels" else run)[1] = {"b": 1}
    with pytest.raises(InputError, match=r"query '1' is given twice") as e:
        Qrels.from_dict(qrels) if which == "qrels" else Run.from_dict(run)
    assert e.value.field == "qid"


PANDAS_PROBE = r"""
import sys
from ragmeter.trec import evaluate

qrels, run = sys.argv[1], sys.argv[2]
res = evaluate(qrels, run, ["map", "P_2", "ndcg_cut_3", "recip_rank", "num_rel_ret"])
print(res.aggregate()["map"], "pandas" in sys.modules)
"""


def test_trec_files_read_by_arrow_never_import_pandas(tmp_path):
    """pyarrow's ``to_numpy()`` and ``pa.array()`` import pandas (~0.4 s): reading TREC files, breaking ties
    by docid and confirming joins on the strings read Arrow's buffers instead."""
    import subprocess
    import sys

    (tmp_path / "qrels").write_text("q1 0 d1 1\nq1 0 d2 0\nq1 0 d3 2\nq2 0 é 1\nq2 0 d4 1\n", encoding="utf-8")
    (tmp_path / "run").write_text("q1 Q0 d1 1 0.5 t\nq1 Q0 d3 2 0.5 t\nq1 Q0 d9 3 0.2 t\n"
                                  "q2 Q0 d4 1 0.9 t\nq2 Q0 é 2 0.9 t\n", encoding="utf-8")
    out = subprocess.run([sys.executable, "-c", PANDAS_PROBE, str(tmp_path / "qrels"), str(tmp_path / "run")],
                         capture_output=True, text=True, check=True).stdout.split()
    # q1: d3 (rel) ranks above d1 (rel) on the tie (docid descending): AP = 1; q2: é > d4, AP = 1
    assert out == ["1.0", "False"]


def test_qids_split_over_blocks_or_interleaved_read_as_pytrec_eval_does(tmp_path):
    """A run file's qids are numbered block by block (a qid listed again later keeps its number) or, when
    they are interleaved, dictionary-encoded: both give pytrec_eval's numbers."""
    pytrec_eval = pytest.importorskip("pytrec_eval")
    from ragmeter.trec import trec_evaluate

    qrels = {"q1": {"a": 1, "c": 2}, "q2": {"x": 1}, "q3": {"b": 1}}
    blocks = [(q, d, s) for q, docs in (("q1", "abce"), ("q2", "xywv"), ("q1", "fghi"), ("q3", "bzkl"))
              for d, s in zip(docs, (0.5, 0.25, 0.75, 0.125), strict=True)]  # 4 blocks of 16 rows
    interleaved = blocks[::2] + blocks[1::2]
    (tmp_path / "qrels").write_text("".join(f"{q} 0 {d} {r}\n" for q, docs in qrels.items() for d, r in docs.items()))
    for name, rows in (("blocks", blocks), ("interleaved", interleaved)):
        path = tmp_path / name
        path.write_text("".join(f"{q} Q0 {d} 1 {s} t\n" for q, d, s in rows))
        assert isinstance(Run.from_file(path).docids, ArrowIds)  # Arrow's reader took it
        run: dict[str, dict[str, float]] = {}
        for q, d, s in rows:
            run.setdefault(q, {})[d] = s
        expected = pytrec_eval.RelevanceEvaluator(qrels, {"map", "P.2"}).evaluate(run)
        got = trec_evaluate(str(tmp_path / "qrels"), str(path), ["map", "P_2"], per_query=True)
        assert got == {m: {q: v[m] for q, v in expected.items()} for m in ("map", "P_2")}


@pytest.mark.parametrize("lines", [
    "q1 Q0 a 1 3 t\nq1 Q0 b 2 2 t\nq2 Q0 a 1 3 t\nq2 Q0 b 2 2 t\nq3 Q0 d 1 3 t\nq3 Q0 d 2 2 t\n",  # equal depths
    "q1 Q0 a 1 3 t\nq3 Q0 d 1 3 t\nq1 Q0 b 2 2 t\nq3 Q0 d 2 2 t\n",  # q3's two lines in two blocks
    "q1 Q0 a 1 3 t\nq3 Q0 e 1 3 t\nq3 Q0 d 2 2 t\nq3 Q0 d 3 1 t\n",  # unequal depths
])
def test_a_duplicate_docid_in_any_query_of_a_run_file_is_refused(tmp_path, lines):
    from ragmeter.trec import trec_evaluate

    (tmp_path / "run").write_text(lines)
    with pytest.raises(InputError, match="query 'q3': docid 'd' appears twice in the run"):
        trec_evaluate({"q1": {"a": 1}, "q3": {"d": 1}}, str(tmp_path / "run"), ["map"])
