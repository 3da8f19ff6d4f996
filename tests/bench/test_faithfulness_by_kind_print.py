"""bench/faithfulness_by_kind.py: its printed rows and its results file."""

from __future__ import annotations

import json

import pytest

from .loader import load_bench


def test_a_row_with_an_auroc_and_no_interval_prints(capsys):
    bench = load_bench("faithfulness_by_kind")
    row = {"metric": "faithfulness", "kind": "short", "n": 2, "auroc": 1.0, "low": None, "high": None}
    bench._print([row, {**row, "auroc": 0.75, "low": 0.5, "high": 1.0}, {**row, "auroc": None}])
    lines = capsys.readouterr().out.splitlines()
    assert "1.000 [   n/a    ]" in lines[0] and "0.750 [0.50, 1.00]" in lines[1] and "n/a" in lines[2]


def test_the_results_file_holds_each_kind_as_soon_as_it_is_measured(tmp_path, monkeypatch):
    """A run stopped during its second kind keeps the first kind's row and records in --out."""
    bench = load_bench("faithfulness_by_kind")
    real, calls = bench.ragmeter.evaluate, []

    def evaluate(*args, **kwargs):
        calls.append(1)
        if len(calls) == 2:
            raise KeyboardInterrupt
        return real(*args, **kwargs)

    monkeypatch.setattr(bench.ragmeter, "evaluate", evaluate)
    out = tmp_path / "r.json"
    monkeypatch.setattr("sys.argv", ["faithfulness_by_kind.py", "--judge", "none", "--metrics", "fact_consistency",
                                     "--split", "design", "--kinds", "short,dialogue", "--out", str(out)])
    with pytest.raises(KeyboardInterrupt):
        bench.main()
    saved = json.loads(out.read_text())
    assert [(r["kind"], r["n"]) for r in saved["rows"]] == [("short", 20)]
    assert len(saved["records"]["fact_consistency"]) == 20


def test_selected_keeps_the_kinds_and_split_asked_for():
    from types import SimpleNamespace

    bench = load_bench("faithfulness_by_kind")
    samples = [SimpleNamespace(metadata={"kind": k, "split": sp})
               for k, sp in [("short", "design"), ("short", "heldout"), ("dialogue", "design"), ("summary", "design")]]
    assert bench.selected(samples, "short, dialogue", "design") == [0, 2]
    assert bench.selected(samples, "all", "design") == [0, 2, 3]
    assert bench.selected(samples, "short", "all") == [0, 1]
    assert bench.selected(samples, "all", "all") == [0, 1, 2, 3]


def test_a_kind_with_no_row_in_the_file_is_a_usage_error_before_any_metric_runs(monkeypatch, capsys):
    """faithfulness_short_more.jsonl holds short answers only: --kinds short,dialogue would print a
    dialogue row of n=0 as if it had been measured."""
    bench = load_bench("faithfulness_by_kind")
    ran = []
    monkeypatch.setattr(bench.ragmeter, "evaluate", lambda *a, **k: ran.append(1))
    data = bench.DATA.parent / "faithfulness_short_more.jsonl"
    monkeypatch.setattr("sys.argv", ["faithfulness_by_kind.py", "--metrics", "fact_consistency", "--split", "design",
                                     "--kinds", "short,dialogue", "--data", str(data)])
    with pytest.raises(SystemExit) as e:
        bench.main()
    assert e.value.code == 2 and ran == []
    err = capsys.readouterr().err
    assert "faithfulness_short_more.jsonl" in err and "dialogue" in err and "design" in err


def test_each_row_holds_the_prompt_and_written_tokens_the_server_counted(tmp_path, monkeypatch):
    """Every reply of the loopback judge counts 100 prompt and 7 written tokens: a row's are 100
    and 7 per request."""
    from dataclasses import replace

    from tests.judges.fake_server import FakeLLMServer, Reply
    from tests.metrics.generation.rules import judge_rule

    def rule(call):
        reply = judge_rule(call)
        reply = reply if isinstance(reply, Reply) else Reply.json(reply)
        return replace(reply, usage=(100, 7))

    bench = load_bench("faithfulness_by_kind")
    out = tmp_path / "r.json"
    with FakeLLMServer(rule) as server:
        monkeypatch.setattr("sys.argv", ["faithfulness_by_kind.py", "--judge", f"openai:fake@{server.url}",
                                         "--metrics", "faithfulness", "--split", "design", "--kinds", "short",
                                         "--cache", str(tmp_path / "cache"), "--out", str(out)])
        bench.main()
        sent = len(server.log)
    [row] = json.loads(out.read_text())["rows"]
    assert row["requests"] == sent > 20
    assert (row["prompt_tokens"], row["completion_tokens"]) == (100 * sent, 7 * sent)
