"""``ragmeter eval --dry-run`` sends nothing, needs no API key, writes no
results, prints the call / token / cost estimate per metric and exits 0."""

from __future__ import annotations

import json
from pathlib import Path

from click.testing import CliRunner

from ragmeter.cli import main
from ragmeter.judges.counters import dry_run_estimate


def write_rows(path: Path, n: int) -> Path:
    rows = [{"id": f"r{i}", "query": f"q{i}?", "answer": f"Answer number {i}.",
             "contexts": [{"id": "d1", "text": f"Answer number {i}."}, {"id": "d2", "text": "x"}], "relevant": ["d1"]}
            for i in range(n)]
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


def test_dry_run_needs_no_key_sends_nothing_writes_nothing(tmp_path, monkeypatch, fake_llm):
    # before: "needs an API key" (exit 2); with a key: a FAIL table, results full of JudgeDryRun, exit 3
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    monkeypatch.chdir(tmp_path)
    data = write_rows(tmp_path / "rows.jsonl", 5)
    out = tmp_path / "o"
    res = CliRunner().invoke(main, ["eval", str(data), "-m", "faithfulness", "-m", "context_relevancy", "-m", "mrr",
                                    "--judge", "openai:gpt-4o-mini", "--dry-run", "-o", str(out), "--json"],
                             catch_exceptions=False)
    assert res.exit_code == 0, res.output
    assert not out.exists() and len(fake_llm.log) == 0
    est = json.loads(res.output)
    rows = {r["metric"]: r for r in est["estimate"]}
    # one analysis call per sample (5 distinct answers); one one-word call per chunk (2 chunks a
    # sample, distinct queries)
    assert rows["faithfulness"]["calls"] == 5 and rows["context_relevancy"]["calls"] == 10
    assert rows["total"]["calls"] == 15 and rows["total"]["prompt_tokens"] > 0
    # the run's plan counts the calls that need an earlier reply too: faithfulness's verdicts (one
    # per sample, each answer one sentence), an estimate
    assert (est["planned_calls"], est["planned_exact"]) == (5 * 2 + 10, False)
    # gpt-4o-mini has a built-in price: the prompt-only cost is tokens x input price
    assert rows["total"]["cost_low"] is not None and rows["total"]["cost_high"] > rows["total"]["cost_low"]


def test_dry_run_table_and_exit_0_against_a_local_server(tmp_path, fake_llm):
    data = write_rows(tmp_path / "rows.jsonl", 3)
    res = CliRunner().invoke(main, ["eval", str(data), "-m", "faithfulness", "--judge", f"openai:m@{fake_llm.url}",
                                    "--dry-run", "-o", str(tmp_path / "o")], catch_exceptions=False)
    assert res.exit_code == 0, res.output
    assert "nothing sent, nothing written" in res.output and "faithfulness" in res.output
    assert "run's plan: ~6 judge calls" in " ".join(res.output.split())
    assert "FAIL" not in res.output and not (tmp_path / "o").exists() and len(fake_llm.log) == 0


def test_dry_run_estimate_by_hand():
    stats = {"by_tag": {"a": {"dry_run_calls": 2, "estimated_prompt_tokens": 1000, "cache_hits": 1},
                        "b": {"dry_run_calls": 0, "estimated_prompt_tokens": 0, "cache_hits": 0}}}
    rows = dry_run_estimate(stats, (2.0, 8.0), 100)
    # a: 1000 tokens x $2/1M = 0.002; high adds 2 calls x 100 tokens x $8/1M = 0.0016
    assert rows == [
        {"metric": "a", "calls": 2, "cache_hits": 1, "prompt_tokens": 1000, "cost_low": 0.002, "cost_high": 0.0036},
        {"metric": "total", "calls": 2, "cache_hits": 1, "prompt_tokens": 1000, "cost_low": 0.002,
         "cost_high": 0.0036},
    ]
    assert dry_run_estimate(stats, None, 100)[0]["cost_low"] is None
