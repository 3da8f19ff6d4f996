"""One run, whatever the source and wherever it is scored: every source (rows, JSONL, CSV, Parquet)
given to the one entry, ``ragmeter.evaluate``, x every engine (``local``: this process, the
columnar fast path for a file and retrieval metrics; ``ray``: a Ray actor pool, its columnar path
for Parquet) x every case (clean, a bad row with
``on_error="raise"``, a bad row skipped, an unreachable judge, a judged metric) writes the same
``results.jsonl`` and ``summary.json``, byte for byte once the timing fields and the engine's own
description are set aside.

The reference of a case is this process scoring the rows as the adapters read them (an iterator
of samples); each cell, the rows as a list of dicts included, is
compared to it after its source's name is replaced by the reference's (a bad row's id and message
name the file and its line or row: JSONL counts lines, the other formats rows, and each row here
is on line = row). The expected rows were worked out by hand: a bad row with ``raise`` keeps
every row before it and the summary says the run was aborted; with ``skip`` it is one errored row
among the others; an unreachable judge stops the run after the row whose call declared it so.
"""

from __future__ import annotations

import csv
import json
from pathlib import Path
from typing import Any

import pytest

from ragmeter import evaluate
from ragmeter.backend_config import JudgeConfig
from ragmeter.errors import InputError, JudgeUnreachable
from ragmeter.io import as_samples
from tests.metrics.generation.rules import judge_rule

pytest.importorskip("pyarrow")

SOURCES = ("rows", "jsonl", "csv", "parquet")
EXECUTORS = ("local", "ray", "processes")
CASES = ("clean", "bad-raise", "bad-skip", "unreachable", "judged")
RETRIEVAL = ["mrr", "recall@2"]
N = 8
BAD_AT = 5  # the 1-based row whose id repeats row 2's
#: nothing listens here (the port range of this test module, never bound)
DEAD_URL = "http://127.0.0.1:18399/v1"


def _rows(case: str) -> list[dict[str, Any]]:
    rows = []
    for i in range(1, N + 1):
        ctx = [{"id": f"d{(i + j) % 5}", "text": f"Passage {(i + j) % 5} [rating {(3 * i + j) % 11}]."}
               for j in range(3)]
        rows.append({"id": f"q{i}", "query": f"question {i}?", "answer": f"Passage {i % 5}.",
                     "contexts": ctx, "relevant": [f"d{(i + 1) % 5}"]})
    if case.startswith("bad"):
        rows[BAD_AT - 1]["id"] = "q2"
    return rows


def _write(source: str, rows: list[dict[str, Any]], folder: Path) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    if source == "jsonl":
        path = folder / "data.jsonl"
        path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    elif source == "csv":
        path = folder / "data.csv"
        with path.open("w", newline="", encoding="utf-8") as fh:
            w = csv.writer(fh)
            w.writerow(list(rows[0]))
            for r in rows:
                w.writerow([json.dumps(v) if isinstance(v, list | dict) else v for v in r.values()])
    else:
        import pyarrow as pa
        import pyarrow.parquet as pq

        path = folder / "data.parquet"
        pq.write_table(pa.Table.from_pylist(rows), path)
    return path


def _stripped_summary(text: str) -> dict[str, Any]:
    summary = json.loads(text)
    run = summary["run"]
    for key in ("started", "seconds", "engine", "judge"):
        run.pop(key, None)
    run.get("judge_check", {}).pop("record", None)  # a path in this test's cache dir
    return summary


def _outputs(out: Path, name: str | None) -> tuple[str, dict[str, Any]]:
    """``results.jsonl`` and the summary of ``out``, ``name`` (the source's path) written as "SOURCE"."""
    lines = (out / "results.jsonl").read_text(encoding="utf-8")
    summary = (out / "summary.json").read_text(encoding="utf-8")
    if name is not None:
        lines, summary = lines.replace(name, "SOURCE"), summary.replace(name, "SOURCE")
    return lines, _stripped_summary(summary)


def _judge_config(case: str, url: str) -> JudgeConfig | None:
    if case == "judged":
        return JudgeConfig(f"openai:fake-model@{url}", cache=False, timeout=5.0, concurrency=4)
    if case == "unreachable":  # one call at a time and no retry: the third refused call declares it
        return JudgeConfig(f"openai:fake-model@{DEAD_URL}", cache=False, timeout=5.0, concurrency=1,
                           max_retries=0, adaptive=False)
    return None


def _metrics(case: str) -> list[str]:
    return [*RETRIEVAL, "faithfulness"] if case in ("judged", "unreachable") else RETRIEVAL


def _run(source: str, executor: str, case: str, folder: Path, url: str,
         reference: bool = False) -> tuple[Path, str | None, BaseException | None]:
    """Run one cell (``reference``: the rows as the adapters read them, an iterator of samples);
    the output folder, the source's name as messages give it, what was raised."""
    rows = _rows(case)
    on_error = "skip" if case == "bad-skip" else "raise"
    out = folder / "out"
    data: Any = rows if source == "rows" else _write(source, rows, folder)
    read: dict[str, Any] = {"on_error": on_error}
    if reference:
        data, read = as_samples(rows, on_error=on_error), {}
    name = None if source == "rows" else str(data)
    raised: BaseException | None = None
    try:
        evaluate(data, _metrics(case), engine=executor, judge=_judge_config(case, url), embedder=None,
                 out_dir=out, keep_records=False, **read)
    except (InputError, JudgeUnreachable) as exc:
        raised = exc
    return out, name, raised


@pytest.fixture(scope="module")
def reference(tmp_path_factory: pytest.TempPathFactory, _fake_llm_session: Any) -> dict[str, Any]:
    """The rows-in-this-process run of every case, checked by hand against the case's rules."""
    _fake_llm_session.rule = judge_rule
    refs: dict[str, Any] = {}
    for case in CASES:
        out, _, raised = _run("rows", "local", case, tmp_path_factory.mktemp(f"ref-{case}"), _fake_llm_session.url,
                              reference=True)
        refs[case] = (_outputs(out, None), raised)
    return refs


def _ids(lines: str) -> list[str]:
    return [json.loads(x)["id"] for x in lines.splitlines()]


def test_reference_runs_follow_the_rules(reference: dict[str, Any]) -> None:
    (clean, clean_summary), _ = reference["clean"]
    assert _ids(clean) == [f"q{i}" for i in range(1, N + 1)]
    assert "aborted" not in clean_summary["run"]
    # row i's label d(i+1)%5 is context j=1 of its three (d(i)%5, d(i+1)%5, d(i+2)%5): mrr 1/2, recall@2 1
    assert clean_summary["metrics"]["mrr"]["mean"] == 0.5 and clean_summary["metrics"]["recall@2"]["mean"] == 1.0

    (lines, summary), raised = reference["bad-raise"]
    assert isinstance(raised, InputError) and "duplicate sample id 'q2'" in str(raised)
    assert _ids(lines) == [f"q{i}" for i in range(1, BAD_AT)]  # every row before the bad one
    assert summary["run"]["aborted"]["type"] == "InputError"

    (lines, summary), raised = reference["bad-skip"]
    assert raised is None and _ids(lines)[BAD_AT - 1] == f"samples:{BAD_AT}" and len(_ids(lines)) == N
    assert summary["run"]["input_errors"] == 1

    (lines, summary), raised = reference["unreachable"]
    assert isinstance(raised, JudgeUnreachable)
    assert _ids(lines) == ["q1", "q2", "q3"]  # the third refused call declared it: no row after it
    assert summary["run"]["aborted"]["type"] == "JudgeUnreachable"

    (lines, summary), raised = reference["judged"]
    assert raised is None and summary["metrics"]["faithfulness"]["n"] == N
    assert summary["metrics"]["faithfulness"]["errors"] == 0


def _without_bad_row(lines: str, summary: dict[str, Any]) -> tuple[list[str], dict[str, Any]]:
    """The good rows' lines and the summary without the bad row's message (which names the source
    its own way: "line 2" in JSONL, "row 2" elsewhere, "(samples[4])" for rows in memory)."""
    good = [x for x in lines.splitlines() if ":" not in json.loads(x)["id"]]
    summary = json.loads(json.dumps(summary))
    for key in ("message", "path"):
        summary["run"].get("aborted", {}).pop(key, None)
    return good, summary


@pytest.mark.parametrize("case", CASES)
@pytest.mark.parametrize("executor", EXECUTORS)
@pytest.mark.parametrize("source", SOURCES)
def test_every_source_and_executor_writes_the_reference(source: str, executor: str, case: str,
                                                        reference: dict[str, Any], ray_cluster: Any,
                                                        _fake_llm_session: Any, tmp_path: Path) -> None:
    _fake_llm_session.rule = judge_rule
    (want_lines, want_summary), want_raised = reference[case]
    out, name, raised = _run(source, executor, case, tmp_path, _fake_llm_session.url)
    assert type(raised) is type(want_raised)
    lines, summary = _outputs(out, name)
    if not case.startswith("bad") or source == "rows":
        assert lines == want_lines
        assert summary["run"] == want_summary["run"]
        assert summary == want_summary
        return
    assert _without_bad_row(lines, summary) == _without_bad_row(want_lines, want_summary)
    # the bad row, as this source words it, is the same whichever executor scored it
    here, _ = _run(source, "local", case, tmp_path / "local", _fake_llm_session.url)[0:2]
    assert (lines, summary) == _outputs(here, str(tmp_path / "local" / Path(name or "").name))


def test_parquet_whose_context_texts_are_all_null_is_scored_as_rows_are(tmp_path: Path) -> None:
    """A Parquet file whose ``contexts.text`` field is of Arrow's null type (every text null)."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    ctx = pa.list_(pa.struct([("id", pa.string()), ("text", pa.null())]))
    table = pa.table({"id": ["a", "b"],
                      "contexts": pa.array([[{"id": "d1", "text": None}, {"id": "d2", "text": None}],
                                            [{"id": "d2", "text": None}]], ctx),
                      "relevant": pa.array([["d2"], ["d3"]], pa.list_(pa.string()))})
    path = tmp_path / "null-texts.parquet"
    pq.write_table(table, path)
    run = evaluate(path, ["mrr"], out_dir=tmp_path / "out")
    assert run.run["engine"]["path"] == "columnar"
    assert run.scores["mrr"].tolist() == [0.5, 0.0]  # d2 at rank 2 of row a; d3 not retrieved in row b
    assert _outputs(tmp_path / "out", None)[0] == _outputs_of_rows(table.to_pylist(), tmp_path / "rows")


def _outputs_of_rows(rows: list[dict[str, Any]], out: Path) -> str:
    evaluate(rows, ["mrr"], out_dir=str(out), keep_records=False)
    return (out / "results.jsonl").read_text(encoding="utf-8")
