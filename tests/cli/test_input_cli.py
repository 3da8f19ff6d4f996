"""``ragmeter eval`` on inputs that do not say what the user thinks: exit codes, the one-line
messages, and what ``summary.json`` records."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from click.testing import CliRunner

from ragmeter import evaluate
from ragmeter.cli import main


def _run(*args: str, env: dict[str, str] | None = None):
    return CliRunner().invoke(main, ["eval", *args], env=env)


def _jsonl(path: Path, rows: list[dict]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path


def test_renamed_contexts_is_exit_2_naming_the_field_and_the_map(tmp_path):
    data = _jsonl(tmp_path / "d.jsonl", [{"id": f"q{i}", "query": "x", "docs": [{"id": "a"}], "relevant": ["a"]}
                                        for i in range(3)])
    res = _run(str(data), "-m", "ndcg@5", "-m", "mrr", "-o", str(tmp_path / "o"), "--no-report")
    assert res.exit_code == 2, res.output
    assert "no row has a 'contexts' field, which ndcg@5, mrr need(s)" in res.output
    assert "did you mean 'docs'? use --map docs=contexts" in res.output
    assert "Traceback" not in res.output
    # the suggested fix works, under the documented alias too
    res = _run(str(data), "-m", "mrr", "-o", str(tmp_path / "o2"), "--no-report", "--field-map", "docs=contexts")
    assert res.exit_code == 0, res.output
    assert json.loads((tmp_path / "o2" / "summary.json").read_text())["metrics"]["mrr"]["mean"] == 1.0


def test_labels_that_can_never_match_print_one_warning_line(tmp_path):
    rows = [{"id": f"q{i}", "contexts": ["some passage text"], "relevant": [f"doc{i}"]} for i in range(4)]
    rows.append({"id": "ok", "contexts": [{"id": "d1"}], "relevant": ["d1"]})
    res = _run(str(_jsonl(tmp_path / "d.jsonl", rows)), "-m", "mrr", "-o", str(tmp_path / "o"), "--no-report")
    assert res.exit_code == 0, res.output
    warnings = [ln for ln in res.output.splitlines() if "can never match" in ln]
    assert len(warnings) == 1 and warnings[0].startswith("warning: 4 sample(s)")
    summary = json.loads((tmp_path / "o" / "summary.json").read_text())
    assert summary["metrics"]["mrr"]["undefined"] == 4 and summary["metrics"]["mrr"]["mean"] == 1.0


@pytest.mark.parametrize("row", [
    '{"id": "q\\ud800", "contexts": [{"id": "a"}], "relevant": ["a"]}',
    '{"id": "d", "contexts": ' + "[" * 100_000 + "]" * 100_000 + "}",
    '{"id": ' + "7" * 5000 + ', "contexts": [{"id": "a"}], "relevant": ["a"]}',
    '{"id": "i", "contexts": [{"id": "a"}], "relevant": {"a": Infinity}}',
])
def test_hostile_rows_are_counted_never_a_traceback(tmp_path, row):
    data = tmp_path / "d.jsonl"
    data.write_text(row + '\n{"id": "ok", "contexts": [{"id": "a"}], "relevant": {"a": 1}}\n', encoding="utf-8")
    res = _run(str(data), "-m", "ndcg@5", "-o", str(tmp_path / "o"), "--no-report", "--on-error", "skip")
    assert res.exit_code == 0, res.output
    lines = (tmp_path / "o" / "results.jsonl").read_text(encoding="utf-8").splitlines()
    s = json.loads((tmp_path / "o" / "summary.json").read_text())["metrics"]["ndcg@5"]
    assert len(lines) == 2 and (s["n"], s["errors"]) == (1, 1) and s["mean"] == 1.0
    res = _run(str(data), "-m", "ndcg@5", "-o", str(tmp_path / "o2"), "--no-report")
    assert res.exit_code == 2 and "d.jsonl:1:" in res.output and "Traceback" not in res.output


def test_yaml_with_a_python_tag_or_a_recursive_alias_is_exit_2_naming_file_and_line(tmp_path):
    data = _jsonl(tmp_path / "d.jsonl", [{"id": "a", "contexts": [{"id": "x"}], "relevant": ["x"]}])
    for text, what, line in [("rag:\n  eval: !!python/object/apply:os.getcwd []\n", "YAML tag", 2),
                             ("rag:\n  eval:\n    fields: &a {x: *a}\n", "recursive alias", 3)]:
        cfg = tmp_path / "c.yaml"
        cfg.write_text(text)
        res = _run(str(data), "-c", str(cfg), "-m", "mrr", "-o", str(tmp_path / "o"), "--no-report")
        assert res.exit_code == 2, res.output
        assert f"{cfg}:{line}:" in res.output and what in res.output and "Traceback" not in res.output


def test_an_internal_error_is_exit_4_never_1(tmp_path, monkeypatch):
    import ragmeter.cli.eval_cmd as eval_cmd

    def broken(*a, **k):
        raise KeyError("boom")

    monkeypatch.setattr(eval_cmd, "evaluate", broken)
    data = _jsonl(tmp_path / "d.jsonl", [{"id": "a", "contexts": [{"id": "x"}], "relevant": ["x"]}])
    res = _run(str(data), "-m", "mrr", "-o", str(tmp_path / "o"), "--no-report")
    assert res.exit_code == 4
    assert "internal error: KeyError" in res.output and "this is a bug, please report it" in res.output.lower()


def test_a_config_variable_outside_the_spec_and_credential_fields_is_exit_2(tmp_path):
    data = _jsonl(tmp_path / "d.jsonl", [{"id": "a", "docs": [{"id": "x"}], "relevant": ["x"]}])
    cfg = tmp_path / "ragmeter.yaml"
    cfg.write_text("rag:\n  eval:\n    fields: {docs: '${TARGET_FIELD}'}\n")
    res = _run(str(data), "-c", str(cfg), "-m", "mrr", "-o", str(tmp_path / "o"), "--no-report",
               env={"TARGET_FIELD": "contexts"})
    assert res.exit_code == 2, res.output
    assert f"{cfg}:3" in res.output and "${TARGET_FIELD} in rag.eval.fields.docs" in res.output
    assert not (tmp_path / "o").exists()


def test_ctrl_c_is_exit_130_never_the_gate_code(tmp_path, monkeypatch):
    import ragmeter.cli.eval_cmd as eval_cmd

    def interrupted(*a, **k):
        raise KeyboardInterrupt

    monkeypatch.setattr(eval_cmd, "evaluate", interrupted)
    data = _jsonl(tmp_path / "d.jsonl", [{"id": "a", "contexts": [{"id": "x"}], "relevant": ["x"]}])
    res = _run(str(data), "-m", "mrr", "-o", str(tmp_path / "o"), "--no-report")
    assert res.exit_code == 130 and "interrupted" in res.output


def _huge_grade_file(path: Path, fmt: str) -> str:
    """Three rows, the second's grade an integer of 400 digits (beyond a float); returns where the
    bad row is named (``file:line``)."""
    grade = "9" * 400
    rows = [("q1", '{"d1": 1}'), ("q2", '{"d1": ' + grade + "}"), ("q3", '{"d2": 2}')]
    ctx = {"q1": '[{"id": "d1"}]', "q2": '[{"id": "d1"}]', "q3": '[{"id": "d2"}]'}
    if fmt == "jsonl":
        path.write_text("".join(f'{{"id": "{i}", "contexts": {ctx[i]}, "relevant": {g}}}\n' for i, g in rows),
                        encoding="utf-8")
        return f"{path.name}:2:"
    if fmt == "csv":
        cell = [f'{i},"{ctx[i].replace(chr(34), 2 * chr(34))}","{g.replace(chr(34), 2 * chr(34))}"\n'
                for i, g in rows]
        path.write_text("id,contexts,relevant\n" + "".join(cell), encoding="utf-8")
        return f"{path.name}:2:"  # row 2 (on file line 3, which the message says too)
    pq.write_table(pa.table({"id": [i for i, _ in rows], "contexts": [ctx[i] for i, _ in rows],
                             "relevant": [g for _, g in rows]}), path)
    return f"{path.name}:2:"  # row 2


@pytest.mark.parametrize("fmt", ["jsonl", "csv", "parquet"])
def test_a_grade_too_large_for_a_float_is_that_rows_input_error(tmp_path, fmt):
    data = tmp_path / f"d.{fmt}"
    where = _huge_grade_file(data, fmt)
    res = _run(str(data), "-m", "ndcg@5", "-o", str(tmp_path / "o"), "--no-report")
    assert res.exit_code == 2, res.output
    line = next(ln for ln in res.output.splitlines() if where in ln)
    assert "relevant" in line and "finite relevance grade" in line and "Traceback" not in res.output
    res = _run(str(data), "-m", "ndcg@5", "-o", str(tmp_path / "s"), "--no-report", "--on-error", "skip")
    assert res.exit_code == 0, res.output
    s = json.loads((tmp_path / "s" / "summary.json").read_text())["metrics"]["ndcg@5"]
    assert (s["n"], s["errors"], s["mean"]) == (2, 1, 1.0)  # q1 and q3 rank their one relevant doc first
    ids = [json.loads(ln)["id"] for ln in (tmp_path / "s" / "results.jsonl").read_text().splitlines()]
    assert ids[0] == "q1" and ids[1].endswith(where[:-1]) and ids[2] == "q3"  # a bad row is named by place


def test_without_metrics_a_misnamed_contexts_field_gets_the_same_hint_as_with_them(tmp_path):
    rows = [{"id": f"q{i}", "query": "x", "answer": "Paris is the capital.", "reference": "Paris",
             "docs": [{"id": "a"}], "relevant": ["a"]} for i in range(3)]
    data = _jsonl(tmp_path / "d.jsonl", rows)
    hint = "no row has a 'contexts' field; did you mean 'docs'? use --map docs=contexts"
    res = _run(str(data), "-o", str(tmp_path / "o"), "--no-report", "--no-embedder")
    assert res.exit_code == 0, res.output
    assert "warning: " + hint in res.output
    assert json.loads((tmp_path / "o" / "summary.json").read_text())["run"]["field_hints"][0].startswith(hint)
    with pytest.warns(UserWarning, match=re.escape(hint)):
        evaluate(rows, embedder=None)
