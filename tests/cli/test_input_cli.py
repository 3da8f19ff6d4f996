"""``ragmeter eval`` on inputs that do not say what the user thinks (issue 11): exit codes, the one-line
messages, and what ``summary.json`` records."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

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

    monkeypatch.setattr(eval_cmd, "evaluate_file", broken)
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

    monkeypatch.setattr(eval_cmd, "evaluate_file", interrupted)
    data = _jsonl(tmp_path / "d.jsonl", [{"id": "a", "contexts": [{"id": "x"}], "relevant": ["x"]}])
    res = _run(str(data), "-m", "mrr", "-o", str(tmp_path / "o"), "--no-report")
    assert res.exit_code == 130 and "interrupted" in res.output
