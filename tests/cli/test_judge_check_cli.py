"""``ragmeter judge-check`` end to end on the loopback server: table, JSON, the record a later
``eval`` shows in summary.json and the report, ``calibrate --judge-check``, exit codes."""

from __future__ import annotations

import itertools
import json
from pathlib import Path

from click.testing import CliRunner

from ragmeter.cli import main
from tests.judges.test_judge_check import BAD, GOOD, M, labelled_rows, say, write_rows


def run(*args: str):
    return CliRunner().invoke(main, list(args), catch_exceptions=False)


def test_check_then_eval_shows_it_on_record(fake_llm, tmp_path):
    data = write_rows(tmp_path / "labelled.jsonl", labelled_rows())
    cache = tmp_path / "cache"
    spec = f"openai:fake@{fake_llm.url}"
    fake_llm.rule = say(GOOD)
    res = run("judge-check", "--judge", spec, "--data", str(data), "--metrics", M, "-o", str(tmp_path / "jc.json"),
              "--cache-dir", str(cache))
    assert res.exit_code == 0, res.output
    assert "usable" in res.output and "verdict rule: usable when AUROC >= 0.75" in res.output
    out = json.loads((tmp_path / "jc.json").read_text())
    (rep,) = out["metrics"]
    assert out["kind"] == "ragmeter-judge-check" and rep["metric"] == M and rep["verdict"] == "usable"
    assert rep["auroc"] == 1.0 and out["thresholds"]["min_auroc"] == 0.75 and len(out["rows"][M]) == 12
    assert out["record"] and (cache / "judge-checks").is_dir()
    assert out["label_rules"] == {}  # no --label: the built-in rule, kept on record as such
    entry = json.loads(Path(out["record"]).read_text())["metrics"][M]
    assert (entry["label"], entry["label_rule"]) == ("faithful", "built-in")

    # an eval with the same judge and cache dir finds the check on record
    res = run("eval", str(data), "-m", M, "-m", "hallucination_rate(mode=direct)", "--judge", spec,
              "--cache-dir", str(cache), "-o", str(tmp_path / "run"), "-q", "--no-embedder")
    assert res.exit_code == 0, res.output
    info = json.loads((tmp_path / "run" / "summary.json").read_text())["run"]["judge_check"]
    rows = {r["metric"]: r for r in info["metrics"]}
    assert rows[M]["verdict"] == "usable" and rows[M]["auroc"] == 1.0 and rows[M]["auroc_ci"] == [1.0, 1.0]
    assert (rows[M]["label"], rows[M]["label_rule"]) == ("faithful", "built-in")
    assert rows["hallucination_rate(mode=direct)"]["verdict"] == "none"  # never checked with this judge
    assert info["status"] == "partial" and "ragmeter judge-check" in info["note"]
    assert "Judge check" in (tmp_path / "run" / "report.html").read_text()

    # calibrate takes the judge-check's labelled rows directly: 12 labelled, the run's 12 unlabelled
    res = run("calibrate", str(tmp_path / "run"), "--judge-check", str(tmp_path / "jc.json"), "-m", M,
              "--format", "json")
    assert res.exit_code == 0, res.output
    cal = json.loads(res.output)["metrics"][M]
    assert cal["n_labelled"] == 12 and cal["n_unlabelled"] == 12
    assert cal["agreement"]["accuracy"] == 1.0


def test_eval_without_a_check_says_none_was_run(fake_llm, tmp_path):
    data = write_rows(tmp_path / "labelled.jsonl", labelled_rows())
    fake_llm.rule = say(GOOD)
    res = run("eval", str(data), "-m", M, "--judge", f"openai:fake@{fake_llm.url}", "--cache-dir",
              str(tmp_path / "c"), "-o", str(tmp_path / "run"), "-q", "--no-embedder")
    assert res.exit_code == 0, res.output
    info = json.loads((tmp_path / "run" / "summary.json").read_text())["run"]["judge_check"]
    assert info["status"] == "none" and info["metrics"] == [
        {"metric": M, "verdict": "none", "note": "not checked with this judge"}]


def test_a_changed_prompt_makes_the_record_stale(fake_llm, tmp_path, monkeypatch):
    data = write_rows(tmp_path / "labelled.jsonl", labelled_rows())
    spec, cache = f"openai:fake@{fake_llm.url}", str(tmp_path / "c")
    fake_llm.rule = say(GOOD)
    assert run("judge-check", "--judge", spec, "--data", str(data), "--metrics", M, "--cache-dir", cache).exit_code == 0
    from ragmeter.judges import record

    real = record.prompt_versions()
    monkeypatch.setattr(record, "prompt_versions", lambda: {**real, "direct_faithfulness": "99"})
    assert run("eval", str(data), "-m", M, "--judge", spec, "--cache-dir", cache, "-o", str(tmp_path / "run"), "-q",
               "--no-embedder").exit_code == 0
    info = json.loads((tmp_path / "run" / "summary.json").read_text())["run"]["judge_check"]
    assert info["status"] == "none" and info["metrics"][0]["verdict"] == "stale"


def test_strict_exits_1_when_a_metric_is_not_usable(fake_llm, tmp_path):
    data = write_rows(tmp_path / "labelled.jsonl", labelled_rows())
    fake_llm.rule = say(GOOD | BAD)  # never separates
    res = run("judge-check", "--judge", f"openai:fake@{fake_llm.url}", "--data", str(data), "--metrics", M,
              "--strict", "--no-cache")
    assert res.exit_code == 1
    assert "not usable: AUROC 0.500 < 0.75" in res.output


def test_bad_labels_exit_2_naming_file_line_field(fake_llm, tmp_path):
    rows = labelled_rows()
    del rows[1]["labels"]
    data = write_rows(tmp_path / "labelled.jsonl", rows)
    res = CliRunner().invoke(main, ["judge-check", "--judge", f"openai:fake@{fake_llm.url}", "--data", str(data),
                                    "--metrics", M, "--no-cache"])
    assert res.exit_code == 2
    assert "labelled.jsonl" in res.output and ":2" in res.output and "labels" in res.output
    assert not fake_llm.log


def test_concurrency_option(fake_llm, tmp_path):
    data = write_rows(tmp_path / "labelled.jsonl", labelled_rows())
    fake_llm.rule = say(GOOD)
    res = run("judge-check", "--judge", f"openai:fake@{fake_llm.url}", "--data", str(data), "--metrics", M,
              "--concurrency", "1", "--no-cache")
    assert res.exit_code == 0, res.output
    res = CliRunner().invoke(main, ["judge-check", "--judge", f"openai:fake@{fake_llm.url}", "--concurrency", "x"])
    assert res.exit_code == 2 and "expected 'auto' or an integer" in res.output


def test_judge_dying_mid_check_writes_finished_metrics_and_exits_3(tmp_path, monkeypatch):
    import ragmeter.judges.judge as judge_module
    from tests.judges.test_unreachable import _dying_server

    monkeypatch.setattr(judge_module, "FAILED_IN_A_ROW", 3)  # pauses 0.5 + 1 s, not 0.5 + ... + 8 s
    data = write_rows(tmp_path / "labelled.jsonl", labelled_rows())
    server = _dying_server(answers=12)  # answers the first metric's 12 calls, then dies
    try:
        res = run("judge-check", "--judge", f"openai:m@{server.url}", "--data", str(data), "--metrics",
                  f"{M},hallucination_rate", "-o", str(tmp_path / "jc.json"), "--no-cache", "--concurrency", "1")
    finally:
        server.stop()
    assert res.exit_code == 3, res.output
    out = json.loads((tmp_path / "jc.json").read_text())
    assert [r["metric"] for r in out["metrics"]] == [M]
    assert "unreachable" in out["stopped"] and "hallucination_rate" in out["stopped"]


def test_eval_concurrency_switch_auto_or_fixed(tmp_path, fake_llm):
    from ragmeter.cli._backends import judge_config
    from ragmeter.config import EvalConfig

    spec = f"openai:m@{fake_llm.url}"
    auto = judge_config(EvalConfig(judge=spec)).build()
    assert auto.adaptive is True and auto.concurrency == 16  # the default: adaptive up to 16
    fixed = judge_config(EvalConfig(judge=spec, concurrency=3)).build()
    assert fixed.adaptive is False and fixed.concurrency == 3
    # from the command line: a fixed 1 against the server never has 2 in flight
    data = write_rows(tmp_path / "labelled.jsonl", labelled_rows())
    fake_llm.rule = say(GOOD)
    fake_llm.latency = 0.05
    res = run("eval", str(data), "-m", M, "--judge", spec, "--concurrency", "1", "--no-cache", "-o",
              str(tmp_path / "o"), "-q", "--no-embedder", "--no-report")
    assert res.exit_code == 0, res.output
    times = sorted(e.time for e in fake_llm.log)  # when each request reached the server; each takes 0.05 s
    assert len(times) == 12 and all(b - a >= 0.045 for a, b in itertools.pairwise(times))
    res = CliRunner().invoke(main, ["eval", str(data), "-m", M, "--judge", spec, "--concurrency", "0"])
    assert res.exit_code == 2 and "expected 'auto' or an integer 1-1024" in res.output


def test_a_check_against_a_user_label_rule_says_so_on_record(fake_llm, tmp_path):
    data = write_rows(tmp_path / "labelled.jsonl", labelled_rows())
    spec, cache = f"openai:fake@{fake_llm.url}", str(tmp_path / "c")
    fake_llm.rule = say(GOOD)
    res = run("judge-check", "--judge", spec, "--data", str(data), "--metrics", M, "--label", f"{M}=faithful",
              "--cache-dir", cache)
    assert res.exit_code == 0, res.output
    assert run("eval", str(data), "-m", M, "--judge", spec, "--cache-dir", cache, "-o", str(tmp_path / "run"), "-q",
               "--no-embedder").exit_code == 0
    info = json.loads((tmp_path / "run" / "summary.json").read_text())["run"]["judge_check"]
    (row,) = info["metrics"]
    assert row["verdict"] == "usable" and (row["label"], row["label_rule"]) == ("faithful", "user")
