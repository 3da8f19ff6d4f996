"""Issue #14 §1: what ``ragmeter`` writes survives CI logs and pipes (formats, widths, closed pipes,
the job summary, JUnit) and the gate's names are checked before the run."""

from __future__ import annotations

import fcntl
import json
import os
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
from click.testing import CliRunner

from ragmeter.cli import main

# The same three queries as test_eval_cli.TINY: mrr = (1/2 + 1 + 1/3) / 3 = 11/18 = 0.6111;
# recall@2 = (1/2 + 1 + 0) / 3 = 0.5000 (hand-computed there).
TINY = [
    {"id": "a", "query": "qa", "contexts": [{"id": "d1"}, {"id": "d2"}, {"id": "d3"}], "relevant": ["d2", "d3"]},
    {"id": "b", "query": "qb", "contexts": [{"id": "d4"}, {"id": "d5"}], "relevant": ["d4"]},
    {"id": "c", "query": "qc", "contexts": [{"id": "d6"}, {"id": "d7"}, {"id": "d8"}], "relevant": ["d8", "d9"]},
]
CLI = [sys.executable, "-c", "import sys; from ragmeter.cli import main; sys.exit(main())"]
F_SETPIPE_SZ = 1031  # Linux fcntl: set a pipe's capacity


@pytest.fixture
def tiny(tmp_path) -> Path:
    path = tmp_path / "tiny.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in TINY), encoding="utf-8")
    return path


def _env(**extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in ("GITHUB_STEP_SUMMARY", "COLUMNS")}
    src = str(Path(__file__).resolve().parents[2] / "src")
    env["PYTHONPATH"] = src + os.pathsep + env.get("PYTHONPATH", "")
    return {**env, "NO_COLOR": "1", **extra}


def _cli(*args: str, env: dict[str, str] | None = None, cwd: Path | None = None) -> subprocess.CompletedProcess:
    return subprocess.run([*CLI, *args], capture_output=True, text=True, timeout=300, env=env or _env(), cwd=cwd)


def _run(*args: object, env: dict[str, str] | None = None):
    return CliRunner().invoke(main, [str(a) for a in args], catch_exceptions=False, env=env)


@pytest.mark.parametrize("fmt", [[], ["--format", "table"]])
def test_piped_output_has_full_numbers_at_any_width(tiny, tmp_path, fmt):
    # stdout not a terminal: the table fits $COLUMNS by splitting its columns, never by cutting a number
    out = tmp_path / "out"
    runs = [_cli("eval", str(tiny), "-m", "mrr", "-m", "recall@2", "-o", str(out), "--no-report", *fmt,
                 env=_env(COLUMNS=str(width))) for width in (40, 200)]
    ci = json.loads((out / "summary.json").read_text())["metrics"]["mrr"]["ci"]
    for proc, width in zip(runs, (40, 200), strict=True):
        assert proc.returncode == 0, proc.stderr
        assert "…" not in proc.stdout
        assert "0.6111" in proc.stdout and "0.5000" in proc.stdout
        assert f"[{ci[0]:.4f}, {ci[1]:.4f}]" in proc.stdout  # the interval, whole
        assert max(len(line) for line in proc.stdout.splitlines() if " -> " not in line) <= width
    if not fmt:  # not a terminal, no --format: the Markdown table, in one piece at 200 columns
        assert "| `mrr` | 0.6111 |" in runs[0].stdout
        assert runs[1].stdout.count("| metric |") == 1 < runs[0].stdout.count("| metric |")


def test_format_json_and_markdown(tiny, tmp_path):
    out = tmp_path / "out"
    res = _run("eval", tiny, "-m", "mrr", "-o", out, "--no-report", "--format", "json")
    assert res.exit_code == 0
    assert json.loads(res.stdout) == json.loads((out / "summary.json").read_text())  # stdout: only the JSON
    md = _run("eval", tiny, "-m", "mrr", "-o", out, "--no-report", "--format", "markdown").stdout.splitlines()
    assert md[0] == "| metric | mean | 95% CI | n | undefined | errors |"
    assert md[2].startswith("| `mrr` | 0.6111 | [") and md[2].endswith("| 3 | 0 | 0 |")
    bad = _run("eval", tiny, "--format", "csv")
    assert bad.exit_code == 2 and "--input-format csv" in bad.output


def test_markdown_dash_writes_to_stdout(tiny, tmp_path, monkeypatch):
    # the bug guarded against: --markdown - wrote a file named "-" in the working directory
    monkeypatch.chdir(tmp_path)
    res = _run("eval", tiny, "-m", "mrr", "-o", tmp_path / "out", "--no-report", "--markdown", "-",
               "--fail-under", "mrr=0.7")
    assert res.exit_code == 1  # 0.6111 < 0.7
    assert not (tmp_path / "-").exists()
    # stdout holds the Markdown alone, the gate's verdict first: the failed check with its interval
    assert res.stdout.startswith("**Quality gate FAILED (exit 1)**: 1 of 1 checks failed\n")
    assert "- ❌ mrr: mean 0.6111 not >= 0.7, 95% CI [" in res.stdout.split("| metric |")[0]
    assert "Diagnosis: " in res.stdout.split("| metric |")[0]
    assert "| `mrr` | 0.6111 |" in res.stdout
    assert "samples ->" not in res.stdout  # the notes went to stderr


def _pipe_to_head(args: list[str]) -> tuple[int, str, str]:
    """Run ``ragmeter ARGS | head -1`` through a real pipe of 4 KiB, so the writer is still writing
    when head exits; return the writer's exit code and stderr, and what head printed."""
    r, w = os.pipe()
    fcntl.fcntl(w, F_SETPIPE_SZ, 4096)
    writer = subprocess.Popen([*CLI, *args], stdout=w, stderr=subprocess.PIPE, text=True, env=_env())
    head = subprocess.Popen(["head", "-1"], stdin=r, stdout=subprocess.PIPE, text=True)
    os.close(r)
    os.close(w)
    first, _ = head.communicate(timeout=300)
    _, err = writer.communicate(timeout=300)
    return writer.returncode, err, first


def test_metrics_piped_to_head_exits_0_without_a_traceback():
    # the bug guarded against: "ragmeter: error: [Errno 32] Broken pipe", exit 2
    code, err, first = _pipe_to_head(["metrics"])
    assert "ragmeter metrics" in first
    assert code == 0
    assert err == ""


def test_eval_piped_to_head_still_writes_everything_and_gates(tmp_path):
    # 200 metrics: a Markdown summary of ~13 KB, three times the pipe, so head -1 leaves while
    # ragmeter is still writing; before #14 rich exited with 1 at the broken pipe (the gate's code,
    # whatever the gate said) before report.html was written
    rows = [{"id": f"q{i}", "query": "q", "contexts": [{"id": "d1"}, {"id": "d2"}], "relevant": ["d2"]}
            for i in range(40)]
    data = tmp_path / "rows.jsonl"
    data.write_text("".join(json.dumps(r) + "\n" for r in rows))
    out = tmp_path / "out"
    metrics = [a for k in range(1, 51) for m in ("ndcg", "precision", "recall", "hit_rate") for a in ("-m", f"{m}@{k}")]
    code, err, first = _pipe_to_head(["eval", str(data), *metrics, "-m", "mrr", "-o", str(out),
                                      "--fail-under", "mrr=0.4"])
    assert first.strip()
    assert "Traceback" not in err and "Broken pipe" not in err
    assert "pass: mrr: mean 0.5000 >= 0.4" in err  # mrr = 1/2 on every row: the gate ran and passed
    assert code == 0
    assert (out / "report.html").exists() and (out / "summary.json").exists()


def test_step_summary_is_appended_when_github_sets_it(tiny, tmp_path):
    summary_file = tmp_path / "step_summary.md"
    summary_file.write_text("earlier step\n")
    res = _run("eval", tiny, "-m", "mrr", "-o", tmp_path / "out", "--no-report", "--fail-under", "mrr=0.5",
               env={"GITHUB_STEP_SUMMARY": str(summary_file)})
    assert res.exit_code == 0
    text = summary_file.read_text()
    assert text.startswith("earlier step\n")  # appended, as GitHub expects
    assert "| `mrr` | 0.6111 |" in text
    assert "**Quality gate passed**" in text and "mrr: mean 0.6111 >= 0.5" in text
    # without the variable nothing is written anywhere but OUTDIR
    assert _run("eval", tiny, "-m", "mrr", "-o", tmp_path / "o2", "--no-report").exit_code == 0
    assert summary_file.read_text() == text


def test_junit_has_one_testcase_per_threshold(tiny, tmp_path):
    junit = tmp_path / "gate.xml"
    res = _run("eval", tiny, "-m", "mrr", "-m", "recall@2", "-o", tmp_path / "out", "--no-report",
               "--fail-under", "mrr=0.6", "--fail-under", "recall@2=0.6", "--junit", junit)
    assert res.exit_code == 1  # recall@2 = 0.5 < 0.6
    suite = ET.parse(junit).getroot()
    assert suite.tag == "testsuite" and suite.get("tests") == "2" and suite.get("failures") == "1"
    cases = {c.get("name"): c for c in suite.findall("testcase")}
    assert set(cases) == {"mrr", "recall@2"}
    assert all(c.get("classname") == "ragmeter.threshold" for c in cases.values())
    assert cases["mrr"].find("failure") is None
    failure = cases["recall@2"].find("failure")
    assert failure is not None and failure.get("message") == "recall@2: mean 0.5000 not >= 0.6"


def test_unknown_gate_name_is_exit_2_before_the_run(tiny, tmp_path):
    # the bug guarded against: the whole run, then "FAIL: ndgc@5: not in this run", exit 1
    out = tmp_path / "out"
    res = _run("eval", tiny, "-m", "mrr", "-o", out, "--fail-under", "ndgc@5=0.5")
    assert res.exit_code == 2
    assert "--fail-under ndgc@5" in res.output and "ndcg" in res.output  # the close match
    assert not out.exists()  # nothing ran


def test_gated_metric_not_asked_for_is_added_to_the_run(tiny, tmp_path):
    # the bug guarded against: -m mrr --fail-under recall@2=... ran mrr only and failed "recall@2: not in this run"
    out = tmp_path / "out"
    res = _run("eval", tiny, "-m", "mrr", "-o", out, "--no-report", "--fail-under", "recall@2=0.4")
    assert res.exit_code == 0, res.output
    summary = json.loads((out / "summary.json").read_text())["metrics"]
    assert list(summary) == ["mrr", "recall@2"]
    assert summary["recall@2"]["mean"] == pytest.approx(0.5)
    # another spelling of the same metric is not a second one
    res = _run("eval", tiny, "-m", "recall@2", "-o", out, "--no-report", "--fail-under", "Recall(rel_level=1)@2=0.4")
    assert res.exit_code == 0, res.output
    assert list(json.loads((out / "summary.json").read_text())["metrics"]) == ["recall@2"]


def test_gated_metric_is_added_to_the_data_chosen_defaults(tiny, tmp_path):
    # no -m: the data decides (ndcg@5, mrr, ...), and ndcg@10 is not a default; before #14 the gate
    # failed after the run with "ndcg@10: not in this run"
    out = tmp_path / "out"
    res = _run("eval", tiny, "-o", out, "--no-report", "--fail-under", "ndcg@10=0.6")
    assert res.exit_code == 0, res.output
    summary = json.loads((out / "summary.json").read_text())
    assert {"mrr", "ndcg@5"} <= set(summary["metrics"])  # the defaults are all still there
    # binary gains: a = (1/log2 3 + 1/log2 4) / (1 + 1/log2 3), c = (1/log2 4) / (1 + 1/log2 3);
    # a + c = 1 exactly, b = 1, so the mean is 2/3
    assert summary["metrics"]["ndcg@10"]["mean"] == pytest.approx(2 / 3)
    assert "pass: ndcg@10: mean 0.6667 >= 0.6" in res.output


def test_no_progress_lines_in_a_log_for_a_short_run(tiny, tmp_path):
    # stderr is a pipe here: no bar, no control codes, and no plain line before 30 s have passed
    proc = _cli("eval", str(tiny), "-m", "mrr", "-o", str(tmp_path / "out"), "--no-report")
    assert proc.returncode == 0, proc.stderr
    assert "evaluating" not in proc.stderr and "\x1b[" not in proc.stderr
