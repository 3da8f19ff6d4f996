"""`ragmeter eval` with a judge, a config file and the CI gate: real files, real loopback judge server."""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET

import pytest
from click.testing import CliRunner

from ragmeter.cli import main
from tests.judges.fake_server import Reply
from tests.metrics.generation.rules import judge_rule

ROWS = [
    {"id": "a", "query": "capital of France?", "answer": "Paris is the capital of France.",
     "contexts": [{"id": "d1", "text": "Paris is the capital of France."}, {"id": "d2", "text": "cheese"}],
     "relevant": ["d1"]},
    {"id": "b", "query": "capital of Spain?", "answer": "Madrid is the capital of Spain. It has 9 moons.",
     "contexts": [{"id": "d3", "text": "x"}, {"id": "d4", "text": "Madrid is the capital of Spain."}],
     "relevant": ["d4"]},
]


@pytest.fixture
def data(tmp_path):
    path = tmp_path / "rows.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in ROWS))
    return path


def run(*args):
    return CliRunner().invoke(main, [str(a) for a in args], catch_exceptions=False)


def test_gate_passes_and_fails(data, tmp_path):
    out = tmp_path / "out"
    # mrr: a -> 1, b -> 1/2 ; mean 0.75
    ok = run("eval", data, "-m", "mrr", "-o", out, "--fail-under", "mrr=0.7", "--no-report")
    assert ok.exit_code == 0, ok.output
    bad = run("eval", data, "-m", "mrr", "-o", out, "--fail-under", "mrr=0.8", "--no-report",
              "--junit", tmp_path / "gate.xml", "--markdown", tmp_path / "gate.md")
    assert bad.exit_code == 1
    assert "FAIL: mrr: mean 0.7500 not >= 0.8" in bad.output
    root = ET.parse(tmp_path / "gate.xml").getroot()
    assert root.get("failures") == "1"
    assert "| `mrr` | 0.7500 |" in (tmp_path / "gate.md").read_text()


def test_config_file_drives_the_run(data, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "ragmeter.yaml").write_text(
        "rag:\n  eval:\n    metrics: [mrr, 'recall@1']\n    output: from-config\n"
        "    gate:\n      fail_under: {mrr: 0.9}\n")
    res = run("eval", data, "--no-report")
    assert res.exit_code == 1  # the file's threshold applies
    summary = json.loads((tmp_path / "from-config" / "summary.json").read_text())
    assert list(summary["metrics"]) == ["mrr", "recall@1"]
    # a flag overrides the file
    res = run("eval", data, "--no-report", "--fail-under", "mrr=0.5")
    assert res.exit_code == 0


def test_bad_config_is_exit_2_naming_key_and_line(data, tmp_path):
    cfg = tmp_path / "c.yaml"
    cfg.write_text("rag:\n  eval:\n    metrics: [mrr]\n    concurency: 3\n")
    res = CliRunner().invoke(main, ["eval", str(data), "-c", str(cfg)])
    assert res.exit_code == 2
    assert "c.yaml:4" in res.output and "rag.eval.concurency" in res.output


def test_eval_with_loopback_judge(data, tmp_path, fake_llm):
    fake_llm.rule = judge_rule
    out = tmp_path / "out"
    res = run("eval", data, "-m", "faithfulness", "-m", "hallucination_rate", "-m", "context_recall",
              "--judge", f"openai:fake@{fake_llm.url}", "-o", out, "--no-report", "--json")
    assert res.exit_code == 0, res.output
    lines = [json.loads(x) for x in (out / "results.jsonl").read_text().splitlines()]
    # b: claims "Madrid is the capital of Spain." (in context) and "It has 9 moons." (not) -> 1/2, times
    # the answer checks: "Spain" is in the context, 9 is not ("Madrid" opens its sentence: no name) -> 1/4
    assert [x["metrics"]["faithfulness"]["score"] for x in lines] == [1.0, 0.25]
    summary = json.loads((out / "summary.json").read_text())
    assert summary["run"]["judge"]["calls"] >= 4 and summary["run"]["judge_spec"].startswith("openai:fake@")
    assert len(fake_llm.log) == 4  # 2 samples x (analysis + verdicts), shared by both metrics


def test_judge_errors_above_tolerance_exit_3(data, tmp_path, fake_llm):
    from tests.judges.fake_server import Reply

    fake_llm.rule = lambda call: Reply.malformed("no json here")
    res = run("eval", data, "-m", "faithfulness", "--judge", f"openai:fake@{fake_llm.url}",
              "-o", tmp_path / "o", "--no-report")
    assert res.exit_code == 3
    assert "2 of 2 samples errored" in res.output


def test_missing_key_fails_before_the_run(data, tmp_path, monkeypatch):
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    res = CliRunner().invoke(main, ["eval", str(data), "-m", "faithfulness", "--judge", "openai:gpt-4o-mini",
                                    "-o", str(tmp_path / "o")])
    assert res.exit_code == 2
    assert "OPENAI_API_KEY" in res.output
    assert not (tmp_path / "o").exists()


def test_init_writes_a_valid_config(tmp_path):
    path = tmp_path / "ragmeter.yaml"
    assert run("init", path).exit_code == 0
    assert "preset: retrieval" in path.read_text()
    assert CliRunner().invoke(main, ["init", str(path)]).exit_code == 2  # exists without --force


def test_judge_status_line():
    from ragmeter.cli.eval_cmd import judge_status

    stats = {"calls": 1200, "cache_hits": 40, "errors": {"JudgeTimeout": 2, "JudgeParseError": 1},
             "prompt_tokens": 50_000, "completion_tokens": 1_200, "cost": 0.01234}
    assert judge_status(stats) == "judge: 1,200 calls, 40 cached, 3 errors, 51,200 tokens, $0.0123"
    assert judge_status({"calls": 1, "cost": None}).endswith("0 tokens, cost unknown")
    # calls a metric recovered from are errors of the requests, not of the samples: counted apart
    over = {**stats, "errors": {"JudgeTimeout": 2, "JudgeContextOverflow": 3}, "recovered": {"JudgeContextOverflow": 3}}
    assert ", 2 errors (3 over the context window, re-sent to fit), " in judge_status(over)


def test_run_prints_judge_counters(data, tmp_path, fake_llm):
    fake_llm.rule = judge_rule
    res = run("eval", data, "-m", "faithfulness", "--judge", f"openai:fake@{fake_llm.url}",
              "-o", tmp_path / "o", "--no-report")
    # 2 samples x (analysis + verdicts) = 4 calls, nothing cached, no errors; the fake model has no price
    assert "judge: 4 calls, 0 cached, 0 errors" in res.output and "cost unknown, 0 retries" in res.output


def test_bad_rows_skipped_on_request_are_not_judge_errors_exit_0(data, tmp_path, fake_llm):
    # one bad row in three, skipped with --on-error skip: counted in errors, but the error-rate gate
    # (exit 3) is about judge and infrastructure failures, and the judge never failed
    fake_llm.rule = judge_rule
    data.write_text(data.read_text() + "{not json\n")
    res = run("eval", data, "-m", "faithfulness", "--judge", f"openai:fake@{fake_llm.url}",
              "-o", tmp_path / "o", "--no-report", "--on-error", "skip")
    assert res.exit_code == 0, res.output
    s = json.loads((tmp_path / "o" / "summary.json").read_text())
    assert s["metrics"]["faithfulness"]["errors"] == 1 and s["run"]["input_errors"] == 1
    assert "1 bad row(s) recorded as errored samples" in res.output
    # a judge failure on top of it is still a judge error: 1 of the 2 rows read is above 5%
    fake_llm.rule = lambda call: Reply.malformed("no json") if "Madrid" in call.all_text else judge_rule(call)
    res = run("eval", data, "-m", "faithfulness", "--judge", f"openai:fake@{fake_llm.url}",
              "-o", tmp_path / "o2", "--no-report", "--on-error", "skip", "--no-cache")
    assert res.exit_code == 3 and "1 of 2 samples errored" in res.output, res.output
