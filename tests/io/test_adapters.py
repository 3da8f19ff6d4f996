"""Inputs as users hold them (ragmeter.io.adapters): paths, dicts, DataFrames, HF Datasets, RAGAS and
DeepEval objects all reach ``evaluate``; a bad row names the source, the row, the field and the index.

The Hugging Face ``datasets`` tests use the real library (a test dependency). RAGAS and DeepEval are
NOT imported here (their installs pull langchain / grpc and a pytest plugin): their tests use plain
classes with the same attribute names; bench/adapters_real_libs.py runs the same checks against the
real RAGAS 0.4.3 and DeepEval classes (docs/input-format.md gives the command and its output).
"""

from __future__ import annotations

import doctest
import json
import math
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path

import pytest

import ragmeter
from ragmeter import InputError, Sample
from ragmeter.errors import InvalidParameterError
from ragmeter.io import adapters, as_samples, read_samples

# Text rows (the shape RAGAS / DeepEval users have): relevance is the label text found among the
# retrieved texts (docs/input-format.md, text matching rule).
#   1: the labelled text is retrieved at rank 2 -> RR = 1/2
#   2: at rank 1                                -> RR = 1
#   3: at rank 3                                -> RR = 1/3
# mean mrr = (1/2 + 1 + 1/3) / 3 = 11/18
HAMLET = "Hamlet is a tragedy written by William Shakespeare."
PARIS = "Paris is the capital of France."
NILE = "The Nile flows north into the Mediterranean Sea."
WATER = "Water boils at one hundred degrees Celsius at sea level."
TEXT_ROWS = [
    {"query": "Who wrote Hamlet?", "answer": "Shakespeare.", "reference": "William Shakespeare",
     "contexts": [PARIS, HAMLET], "relevant": [HAMLET]},
    {"query": "Where does the Nile flow?", "answer": "North.", "reference": "North to the Mediterranean",
     "contexts": [NILE], "relevant": [NILE]},
    {"query": "When does water boil?", "answer": "At 100 C.", "reference": "100 degrees Celsius",
     "contexts": ["Gold is a chemical element with symbol Au.", "Copper conducts electricity well.", WATER],
     "relevant": [WATER]},
]
RR = [1 / 2, 1.0, 1 / 3]
MEAN_MRR = 11 / 18
RAGAS_NAMES = {"query": "user_input", "answer": "response", "contexts": "retrieved_contexts",
               "reference": "reference", "relevant": "reference_contexts"}
DEEPEVAL_NAMES = {"query": "input", "answer": "actual_output", "contexts": "retrieval_context",
                  "reference": "expected_output", "relevant": "context"}


def renamed(rows, names):
    return [{names[k]: v for k, v in r.items()} for r in rows]


def mrr_scores(run):
    return [float(x) for x in run.scores["mrr"]]


def assert_text_run(run, ids=("1", "2", "3")):
    assert run.ids == list(ids)
    assert mrr_scores(run) == pytest.approx(RR)
    assert run.summary()["mrr"]["mean"] == pytest.approx(MEAN_MRR)


# ---- paths, dicts, lists ---------------------------------------------------------------------------


def test_evaluate_accepts_a_path_as_str_and_as_Path(tmp_path):
    # before: AttributeError: 'str' object has no attribute 'line'
    path = tmp_path / "rows.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in TEXT_ROWS), encoding="utf-8")
    assert_text_run(ragmeter.evaluate(str(path), ["mrr"]))
    assert_text_run(ragmeter.evaluate(path, ["mrr"]))


def test_a_missing_path_is_an_input_error_naming_it(tmp_path):
    with pytest.raises(InputError, match="no such file") as exc:
        ragmeter.evaluate(str(tmp_path / "nope.jsonl"), ["mrr"])
    assert exc.value.path == str(tmp_path / "nope.jsonl")


def test_evaluate_accepts_one_dict():
    # before: iterating the dict gave its keys (str), and the run failed on them
    run = ragmeter.evaluate(TEXT_ROWS[0], ["mrr"])
    assert run.ids == ["1"]
    assert mrr_scores(run) == pytest.approx([0.5])


def test_a_bad_dict_in_a_list_names_row_field_and_index():
    rows = [TEXT_ROWS[0], TEXT_ROWS[1], {**TEXT_ROWS[2], "contexts": 7}]
    # before: pydantic's ValidationError with neither the row nor the index
    with pytest.raises(InputError) as exc:
        ragmeter.evaluate(rows, ["mrr"])
    err = exc.value
    assert (err.path, err.line, err.field) == ("samples", 3, "contexts")
    assert "expected a list" in err.message and "got int" in err.message
    assert "(samples[2])" in str(err)


def test_dicts_follow_the_file_rules_duplicate_ids_are_rejected():
    rows = [{**TEXT_ROWS[0], "id": "x"}, {**TEXT_ROWS[1], "id": "x"}]
    with pytest.raises(InputError, match="duplicate sample id 'x': row 1 has it too") as exc:
        ragmeter.evaluate(rows, ["mrr"])
    assert (exc.value.line, exc.value.field) == (2, "id")


def test_on_error_skip_records_the_bad_row_and_keeps_the_others():
    rows = [TEXT_ROWS[0], {**TEXT_ROWS[1], "contexts": 7}, TEXT_ROWS[2]]
    run = ragmeter.evaluate(as_samples(rows, on_error="skip"), ["mrr"])
    assert run.ids == ["1", "samples:2", "3"]
    assert run.summary()["mrr"] == {**run.summary()["mrr"], "n": 2, "errors": 1}
    assert run.summary()["mrr"]["mean"] == pytest.approx((1 / 2 + 1 / 3) / 2)


def test_an_unsupported_object_is_refused_before_the_run():
    # before: TypeError: 'int' object is not iterable, from deep inside the run
    with pytest.raises(InvalidParameterError, match=r"expected a path, a dict, a list of dicts.*got int"):
        ragmeter.evaluate(42, ["mrr"])
    with pytest.raises(InputError, match=r"samples:2: expected a dict, a Sample.*got int \(samples\[1\]\)"):
        list(as_samples([TEXT_ROWS[0], 5]))


def test_aevaluate_takes_the_same_inputs():
    import asyncio

    # before: aevaluate took Samples only (a dict failed with AttributeError: 'dict' ... 'id')
    run = asyncio.run(ragmeter.aevaluate(TEXT_ROWS, ["mrr"]))
    assert_text_run(run)


def test_samples_and_reader_items_pass_through_unchanged(tmp_path):
    samples = [Sample.from_record(r, default_id=f"s{i}") for i, r in enumerate(TEXT_ROWS)]
    assert list(as_samples(samples)) == samples
    bad = InputError("bad", path="f.jsonl", line=4)
    assert list(as_samples([samples[0], bad])) == [samples[0], bad]  # recorded later, not raised here


# ---- DeepEval and RAGAS names in dicts and files ---------------------------------------------------


def test_deepeval_named_dicts_map_context_to_relevant():
    run = ragmeter.evaluate(renamed(TEXT_ROWS, DEEPEVAL_NAMES), ["mrr"])
    assert_text_run(run)


def test_ragas_named_dicts():
    assert_text_run(ragmeter.evaluate(renamed(TEXT_ROWS, RAGAS_NAMES), ["mrr"]))


def test_context_outside_a_deepeval_row_stays_a_plain_column():
    # a file's own "context" column is usually the retrieved context: never read as labels silently
    (s,) = as_samples({"query": "q", "contexts": [PARIS], "context": [PARIS]})
    assert s.relevant is None and s.metadata == {"context": [PARIS]}
    (d,) = as_samples({"input": "q", "retrieval_context": [PARIS], "context": [PARIS]})
    assert d.relevant == [PARIS] and d.metadata == {}
    # a field_map entry for it wins over the DeepEval reading
    (m,) = as_samples({"input": "q", "retrieval_context": [PARIS], "context": "x"}, field_map={"context": "reference"})
    assert m.reference == "x" and m.relevant is None


def test_deepeval_named_jsonl_works_from_the_cli(tmp_path):
    from click.testing import CliRunner

    from ragmeter.cli import main

    data = tmp_path / "deepeval.jsonl"
    data.write_text("".join(json.dumps(r) + "\n" for r in renamed(TEXT_ROWS, DEEPEVAL_NAMES)), encoding="utf-8")
    # before: exit 2, "no recognised field ... found: 'input', 'actual_output', ..."
    res = CliRunner().invoke(main, ["eval", str(data), "-m", "mrr", "-o", str(tmp_path / "out"), "-q"])
    assert res.exit_code == 0, res.output
    summary = json.loads((tmp_path / "out" / "summary.json").read_text())
    assert summary["metrics"]["mrr"]["mean"] == pytest.approx(MEAN_MRR)


# ---- pandas ---------------------------------------------------------------------------------------


def test_a_dataframe_with_ragas_columns_and_nan_cells():
    import pandas as pd

    df = pd.DataFrame(renamed(TEXT_ROWS, RAGAS_NAMES))
    df.loc[1, "response"] = float("nan")  # a missing cell is an absent field, not a float
    samples = list(as_samples(df))
    assert samples[1].answer is None and samples[0].answer == "Shakespeare."
    assert_text_run(ragmeter.evaluate(df, ["mrr"]))


def test_a_dataframe_read_from_parquet_has_numpy_cells(tmp_path):
    import pandas as pd

    rows = [{**r, "id": 10 + i, "contexts": [{"id": f"d{i}{j}", "text": t, "score": 1.0 / (j + 1)}
                                              for j, t in enumerate(r["contexts"])]}
            for i, r in enumerate(TEXT_ROWS)]
    pd.DataFrame(rows).to_parquet(tmp_path / "rows.parquet")
    df = pd.read_parquet(tmp_path / "rows.parquet")
    assert type(df.loc[0, "contexts"]).__name__ == "ndarray"  # what makes the adapter needed
    run = ragmeter.evaluate(df, ["mrr"])
    assert_text_run(run, ids=("10", "11", "12"))


def test_a_named_dataframe_index_gives_the_ids():
    import pandas as pd

    df = pd.DataFrame(TEXT_ROWS, index=pd.Index(["q-a", "q-b", "q-c"], name="qid"))
    assert ragmeter.evaluate(df, ["mrr"]).ids == ["q-a", "q-b", "q-c"]
    assert ragmeter.evaluate(df.reset_index(drop=True), ["mrr"]).ids == ["1", "2", "3"]


def test_a_bad_dataframe_row_names_row_field_and_iloc():
    import pandas as pd

    rows = [TEXT_ROWS[0], TEXT_ROWS[1], {**TEXT_ROWS[2], "contexts": "Water boils."}]
    with pytest.raises(InputError) as exc:
        ragmeter.evaluate(pd.DataFrame(rows), ["mrr"])
    err = exc.value
    assert (err.path, err.line, err.field) == ("DataFrame", 3, "contexts")
    assert str(err).startswith("DataFrame:3: field 'contexts': expected a list")
    assert str(err).endswith("(df.iloc[2])")


def test_a_long_dataframe_is_read_in_chunks_in_order(monkeypatch):
    import pandas as pd

    monkeypatch.setattr(adapters, "FRAME_CHUNK_ROWS", 2)
    df = pd.DataFrame([TEXT_ROWS[i % 3] for i in range(7)])
    run = ragmeter.evaluate(df, ["mrr"])
    assert run.ids == [str(i) for i in range(1, 8)]
    assert mrr_scores(run) == pytest.approx([RR[i % 3] for i in range(7)])


# ---- Hugging Face datasets (the real library) -----------------------------------------------------


def test_a_hugging_face_dataset():
    import datasets

    ds = datasets.Dataset.from_list(renamed(TEXT_ROWS, RAGAS_NAMES))
    assert_text_run(ragmeter.evaluate(ds, ["mrr"]))
    # a numpy-formatted dataset is read as Python objects all the same
    assert_text_run(ragmeter.evaluate(ds.with_format("numpy"), ["mrr"]))
    assert_text_run(ragmeter.evaluate(datasets.Dataset.from_list(renamed(TEXT_ROWS, DEEPEVAL_NAMES)), ["mrr"]))


def test_a_bad_hugging_face_row_names_row_field_and_index():
    import datasets

    ds = datasets.Dataset.from_list([{**r, "id": "same"} for r in TEXT_ROWS[:2]])
    with pytest.raises(InputError) as exc:
        ragmeter.evaluate(ds, ["mrr"])
    assert (exc.value.path, exc.value.line, exc.value.field) == ("Dataset", 2, "id")
    assert str(exc.value).endswith("(ds[1])")


def test_a_dataset_dict_asks_for_a_split():
    import datasets

    dd = datasets.DatasetDict({"test": datasets.Dataset.from_list(TEXT_ROWS)})
    with pytest.raises(InvalidParameterError, match=r"DatasetDict of splits \['test'\]: pass one split, e.g. "
                                                    r"data\['test'\]"):
        ragmeter.evaluate(dd, ["mrr"])


# ---- RAGAS-shaped and DeepEval-shaped objects (plain classes with the libraries' attribute names) --


@dataclass
class SingleTurnSample:  # RAGAS 0.4.3's field names (ragas.dataset_schema.SingleTurnSample)
    user_input: str | None = None
    retrieved_contexts: list[str] | None = None
    reference_contexts: list[str] | None = None
    retrieved_context_ids: list[str] | None = None
    reference_context_ids: list[str] | None = None
    response: str | None = None
    multi_responses: list[str] | None = None
    reference: str | None = None
    rubrics: dict[str, str] | None = None
    persona_name: str | None = None
    query_style: str | None = None
    query_length: str | None = None


@dataclass
class MultiTurnSample:
    user_input: list = field(default_factory=list)
    reference: str | None = None


@dataclass
class EvaluationDataset:  # RAGAS: .samples
    samples: list


@dataclass
class LLMTestCase:  # DeepEval's field names (deepeval.test_case.LLMTestCase)
    input: str
    actual_output: str | None = None
    expected_output: str | None = None
    context: list[str] | None = None
    retrieval_context: list[str] | None = None
    additional_metadata: dict | None = None
    name: str | None = None


@dataclass
class DeepEvalDataset:  # DeepEval's EvaluationDataset: .test_cases / .goldens
    test_cases: list = field(default_factory=list)
    goldens: list = field(default_factory=list)


def ragas_samples(rows=TEXT_ROWS):
    return [SingleTurnSample(**renamed([r], RAGAS_NAMES)[0]) for r in rows]


def deepeval_cases(rows=TEXT_ROWS):
    return [LLMTestCase(**renamed([r], DEEPEVAL_NAMES)[0]) for r in rows]


def test_ragas_samples_and_evaluation_dataset():
    samples = ragas_samples()
    assert_text_run(ragmeter.evaluate(samples, ["mrr"]))
    assert_text_run(ragmeter.evaluate(EvaluationDataset(samples), ["mrr"]))
    (one,) = as_samples(samples[0])
    assert (one.query, one.answer, one.reference) == ("Who wrote Hamlet?", "Shakespeare.", "William Shakespeare")
    assert one.relevant == [HAMLET] and one.context_texts == [PARIS, HAMLET]


def test_ragas_context_ids_become_context_and_label_ids():
    s = SingleTurnSample(user_input="q", retrieved_contexts=[PARIS, HAMLET], retrieved_context_ids=["p", "h"],
                         reference_context_ids=["h"], persona_name="student")
    (got,) = as_samples([s])
    assert [(c.id, c.text) for c in got.contexts] == [("p", PARIS), ("h", HAMLET)]
    assert got.relevant == ["h"] and got.metadata == {"persona_name": "student"}
    assert mrr_scores(ragmeter.evaluate([s], ["mrr"])) == [0.5]  # "h" at rank 2


def test_ragas_bad_sample_names_the_attribute_and_multi_turn_is_refused():
    bad = SingleTurnSample(user_input="q", retrieved_contexts="one string")
    with pytest.raises(InputError) as exc:
        ragmeter.evaluate(EvaluationDataset([*ragas_samples()[:1], bad]), ["mrr"])
    assert (exc.value.path, exc.value.line, exc.value.field) == ("EvaluationDataset", 2, "contexts")
    assert "(dataset.samples[1]) [SingleTurnSample.retrieved_contexts]" in str(exc.value)
    with pytest.raises(InputError, match=r"a multi-turn sample .*expected a single-turn sample"):
        list(as_samples([MultiTurnSample(user_input=[{"content": "hi"}])]))


def test_deepeval_test_cases_and_dataset():
    cases = deepeval_cases()
    assert_text_run(ragmeter.evaluate(cases, ["mrr"]))
    assert_text_run(ragmeter.evaluate(DeepEvalDataset(test_cases=cases), ["mrr"]))
    assert_text_run(ragmeter.evaluate(DeepEvalDataset(goldens=cases), ["mrr"]))  # goldens when no test cases
    case = LLMTestCase(input="q", actual_output="a", retrieval_context=[PARIS], additional_metadata={"run": 3},
                       name="case-1")
    (s,) = as_samples(case)
    assert (s.query, s.answer, s.context_texts, s.relevant) == ("q", "a", [PARIS], None)
    assert s.metadata == {"run": 3, "name": "case-1"}


def test_deepeval_bad_case_names_the_attribute():
    cases = [*deepeval_cases()[:2], LLMTestCase(input="q", actual_output="a", retrieval_context=[PARIS, 3])]
    with pytest.raises(InputError) as exc:
        ragmeter.evaluate(cases, ["mrr"])
    assert (exc.value.line, exc.value.field) == (3, "contexts[1]")
    assert str(exc.value).endswith("(samples[2]) [LLMTestCase.retrieval_context]")


# ---- to_pandas(inputs=True) -----------------------------------------------------------------------


def test_to_pandas_with_inputs_puts_inputs_and_reasons_beside_the_scores():
    import pandas as pd

    rows = [{**TEXT_ROWS[0], "metadata": {"retriever": "bm25"}}, {"query": "no contexts here"}, TEXT_ROWS[2]]
    # before: TypeError: to_pandas() got an unexpected keyword argument 'inputs'
    df = ragmeter.evaluate(rows, ["mrr", "precision@1"]).to_pandas(inputs=True)
    assert list(df.columns) == ["query", "answer", "contexts", "reference", "relevant", "metadata",
                                "mrr", "mrr_reason", "precision@1", "precision@1_reason"]
    assert list(df.index) == ["1", "2", "3"] and df.index.name == "id"
    assert df.loc["1", "query"] == "Who wrote Hamlet?" and df.loc["1", "contexts"] == [PARIS, HAMLET]
    assert df.loc["1", "relevant"] == [HAMLET] and df.loc["1", "metadata"] == {"retriever": "bm25"}
    # absent, not empty (pandas shows a missing string as NaN)
    assert df.loc["2", "contexts"] is None and pd.isna(df.loc["2", "answer"])
    assert df.loc["1", "mrr"] == 0.5 and df.loc["1", "precision@1"] == 0.0
    assert df.loc["3", "mrr"] == pytest.approx(1 / 3)
    assert math.isnan(df.loc["2", "mrr"]) and df.loc["2", "mrr_reason"] == "undefined: no contexts field"
    assert df.loc["1", "mrr_reason"].startswith("relevant at rank(s) [2]")


def test_to_pandas_inputs_show_context_ids_and_leave_bad_rows_blank():
    import pandas as pd

    rows = [{"id": "a", "contexts": [{"id": "d1"}, {"id": "d2", "text": "two"}], "relevant": ["d2"]},
            {"id": "b", "contexts": 5}]
    run = ragmeter.evaluate(as_samples(rows, on_error="skip"), ["mrr"])
    df = run.to_pandas(inputs=True)
    assert list(df.columns[:4]) == ["query", "answer", "contexts", "context_ids"]
    assert df.loc["a", "contexts"] == ["", "two"] and df.loc["a", "context_ids"] == ["d1", "d2"]
    bad = df.loc["samples:2"]
    assert bad["contexts"] is None and pd.isna(bad["query"]) and pd.isna(bad["answer"])
    assert bad["mrr_reason"].startswith("error: samples:2: field 'contexts'")


def test_to_pandas_inputs_needs_a_run_that_kept_them(tmp_path):
    run = ragmeter.evaluate(TEXT_ROWS, ["mrr"], keep_records=False)
    with pytest.raises(ValueError, match="kept no inputs"):
        run.to_pandas(inputs=True)
    ragmeter.evaluate(TEXT_ROWS, ["mrr"]).save(tmp_path / "run")
    loaded = ragmeter.RunResult.load(tmp_path / "run")
    with pytest.raises(ValueError, match="a loaded run"):
        loaded.to_pandas(inputs=True)
    assert list(loaded.to_pandas().columns) == ["mrr"]  # the plain table as before


# ---- the module itself ----------------------------------------------------------------------------


def test_docstring_examples():
    result = doctest.testmod(adapters, optionflags=doctest.NORMALIZE_WHITESPACE)
    assert result.attempted >= 4 and result.failed == 0


def test_no_adapter_imports_its_library():
    code = ("import sys, ragmeter, ragmeter.io.adapters; "
            "print([m for m in ('datasets', 'ragas', 'deepeval', 'polars') if m in sys.modules])")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True,
                         cwd=Path(__file__).parent)
    assert out.stdout.strip() == "[]"


def test_read_samples_output_is_unchanged_by_the_adapter(tmp_path):
    path = tmp_path / "rows.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in TEXT_ROWS), encoding="utf-8")
    assert list(as_samples(path)) == list(read_samples(path))
