"""``ragmeter eval``: real files in, documented files out, hand-computed numbers, exit codes."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner
from rich.console import Console

from ragmeter.cli import main
from ragmeter.cli.eval_cmd import parse_field_map, skipped_message, summary_table
from ragmeter.errors import InvalidParameterError
from ragmeter.judges.registry import get_backend_info

# Three queries with labelled relevant ids:
#   a: retrieved d1 d2 d3, relevant {d2, d3}: first relevant at rank 2 -> RR = 1/2;
#      top 2 = {d1, d2} holds 1 of 2 relevant -> recall@2 = 1/2
#   b: retrieved d4 d5,    relevant {d4}:     RR = 1/1 = 1; recall@2 = 1/1 = 1
#   c: retrieved d6 d7 d8, relevant {d8, d9}: RR = 1/3; top 2 holds 0 of 2 -> recall@2 = 0
# mean mrr = (1/2 + 1 + 1/3) / 3 = (11/6) / 3 = 11/18 = 0.6111...; mean recall@2 = (1/2 + 1 + 0) / 3 = 1/2
TINY = [
    {"id": "a", "query": "qa", "contexts": [{"id": "d1"}, {"id": "d2"}, {"id": "d3"}], "relevant": ["d2", "d3"]},
    {"id": "b", "query": "qb", "contexts": [{"id": "d4"}, {"id": "d5"}], "relevant": ["d4"]},
    {"id": "c", "query": "qc", "contexts": [{"id": "d6"}, {"id": "d7"}, {"id": "d8"}], "relevant": ["d8", "d9"]},
]
RR = {"a": 1 / 2, "b": 1.0, "c": 1 / 3}
RECALL2 = {"a": 1 / 2, "b": 1.0, "c": 0.0}


def _write(path: Path, rows: list) -> Path:
    path.write_text("".join((r if isinstance(r, str) else json.dumps(r)) + "\n" for r in rows), encoding="utf-8")
    return path


def _counts(row: dict) -> dict:
    """The documented summary keys of one metric (later format versions may add more)."""
    return {k: row[k] for k in ("mean", "n", "undefined", "errors")}


def _run(*args: str):
    return CliRunner().invoke(main, ["eval", *args], catch_exceptions=False)


@pytest.fixture
def tiny(tmp_path) -> Path:
    return _write(tmp_path / "tiny.jsonl", TINY)


def test_hand_computed_mrr_and_recall_at_2(tmp_path, tiny):
    out = tmp_path / "out"
    res = _run(str(tiny), "-m", "mrr", "-m", "recall@2", "-o", str(out))
    assert res.exit_code == 0, res.output
    summary = json.loads((out / "summary.json").read_text(encoding="utf-8"))
    assert _counts(summary["metrics"]["mrr"]) == {"mean": pytest.approx(11 / 18), "n": 3, "undefined": 0,
                                                  "errors": 0}
    assert _counts(summary["metrics"]["recall@2"]) == {"mean": pytest.approx(0.5), "n": 3, "undefined": 0,
                                                       "errors": 0}
    lines = [json.loads(x) for x in (out / "results.jsonl").read_text(encoding="utf-8").splitlines()]
    assert [r["id"] for r in lines] == ["a", "b", "c"]
    assert {r["id"]: r["metrics"]["mrr"]["score"] for r in lines} == pytest.approx(RR)
    assert {r["id"]: r["metrics"]["recall@2"]["score"] for r in lines} == pytest.approx(RECALL2)


def test_output_files_follow_the_documented_format(tmp_path, tiny):
    out = tmp_path / "out"
    assert _run(str(tiny), "-m", "mrr", "-o", str(out)).exit_code == 0
    for line in (out / "results.jsonl").read_text(encoding="utf-8").splitlines():
        rec = json.loads(line)
        assert set(rec) == {"id", "metrics"}
        assert set(rec["metrics"]) == {"mrr"}
        assert set(rec["metrics"]["mrr"]) == {"score", "reason", "error", "details", "version"}
    summary = json.loads((out / "summary.json").read_text(encoding="utf-8"))
    assert {"format", "metrics", "run"} <= set(summary)
    assert summary["format"] == 1
    assert summary["run"]["data"] == str(tiny) and summary["run"]["on_error"] == "raise"
    assert summary["run"]["metrics"] == {"mrr": {"version": "1"}}


def test_table_and_paths_are_printed(tmp_path, tiny):
    out = tmp_path / "out"
    res = _run(str(tiny), "-m", "mrr", "-o", str(out), "--format", "table")
    assert "ragmeter summary" in res.stdout
    assert "0.6111" in res.stdout  # 11/18 to four places
    # stdout is not a terminal here: with no --format it gets the Markdown table
    res = _run(str(tiny), "-m", "mrr", "-o", str(out))
    assert "| `mrr` | 0.6111 |" in res.stdout
    assert f"3 samples -> {out / 'results.jsonl'} and {out / 'summary.json'}" in res.stdout


def test_json_prints_summary_json(tmp_path, tiny):
    out = tmp_path / "out"
    res = _run(str(tiny), "-m", "mrr", "-o", str(out), "--json")
    assert res.exit_code == 0
    printed = json.loads(res.stdout)  # stdout holds nothing but the JSON
    assert printed == json.loads((out / "summary.json").read_text(encoding="utf-8"))


def test_quiet_prints_nothing(tmp_path, tiny):
    res = _run(str(tiny), "-m", "mrr", "-o", str(tmp_path / "out"), "--quiet")
    assert res.exit_code == 0
    assert res.stdout == "" and res.stderr == ""
    assert (tmp_path / "out" / "summary.json").exists()


def test_default_metrics_come_from_the_data(tmp_path, tiny):
    out = tmp_path / "out"
    assert _run(str(tiny), "-o", str(out), "--quiet").exit_code == 0
    summary = json.loads((out / "summary.json").read_text(encoding="utf-8"))
    # labelled ids and contexts allow every retrieval metric; each default appears once
    for name in ("mrr", "recall@5", "ndcg@5", "map", "precision@5", "hit_rate@5", "r_precision"):
        assert summary["metrics"][name]["n"] == 3
    assert summary["metrics"]["mrr"]["mean"] == pytest.approx(11 / 18)
    assert "skipped_metrics" in summary["run"]


BAD_ROW = '{"id": "x", "contexts": "[oops"}'


def test_skip_keeps_good_rows_and_records_the_bad_one(tmp_path):
    data = _write(tmp_path / "mixed.jsonl", [TINY[0], BAD_ROW, TINY[1], TINY[2]])
    out = tmp_path / "out"
    res = _run(str(data), "-m", "mrr", "-o", str(out), "--on-error", "skip")
    assert res.exit_code == 0
    assert "warning: 1 bad row(s) recorded as errored samples" in res.stderr
    assert f"{data}:2: field 'contexts': could not decode the JSON-encoded contexts" in res.stderr
    lines = [json.loads(x) for x in (out / "results.jsonl").read_text(encoding="utf-8").splitlines()]
    assert [r["id"] for r in lines] == ["a", f"{data}:2", "b", "c"]
    bad = lines[1]["metrics"]["mrr"]
    assert bad["score"] is None
    assert bad["error"]["type"] == "InputError"
    assert (bad["error"]["line"], bad["error"]["field"]) == (2, "contexts")
    assert {r["id"]: r["metrics"]["mrr"]["score"] for r in lines if r["id"] in RR} == pytest.approx(RR)
    summary = json.loads((out / "summary.json").read_text(encoding="utf-8"))
    # n + undefined + errors = 4 rows; the mean is over the 3 good ones: 11/18 as above
    assert _counts(summary["metrics"]["mrr"]) == {"mean": pytest.approx(11 / 18), "n": 3, "undefined": 0,
                                                  "errors": 1}


def test_bad_row_without_skip_is_exit_2_naming_line_and_field(tmp_path):
    data = _write(tmp_path / "mixed.jsonl", [TINY[0], BAD_ROW])
    res = _run(str(data), "-m", "mrr", "-o", str(tmp_path / "out"))
    assert res.exit_code == 2
    assert res.stderr.startswith(f"ragmeter: error: {data}:2: field 'contexts': ")
    assert res.stdout == ""


def test_unknown_metric_suggests_close_matches(tmp_path, tiny):
    res = _run(str(tiny), "-m", "ndgc@5", "-o", str(tmp_path / "out"))
    assert res.exit_code == 2
    assert "unknown metric 'ndgc'. Did you mean: ndcg?" in res.stderr


@pytest.mark.parametrize(
    ("content", "message"),
    [(None, "no such file"), ("", "the file is empty"), ('{"foo": 1}\n', "no recognised field")],
)
def test_bad_input_files_exit_2(tmp_path, content, message):
    data = tmp_path / "d.jsonl"
    if content is not None:
        data.write_text(content, encoding="utf-8")
    res = _run(str(data), "-o", str(tmp_path / "out"))
    assert res.exit_code == 2
    assert message in res.stderr and str(data) in res.stderr


def test_no_computable_metric_is_exit_2(tmp_path):
    data = _write(tmp_path / "q.jsonl", [{"query": "only a query"}])
    res = _run(str(data), "-o", str(tmp_path / "out"))
    assert res.exit_code == 2
    assert "no metric can be computed from this data" in res.stderr


def test_usage_errors_exit_2(tmp_path, tiny):
    res = _run(str(tiny), "--on-error", "ignore")
    assert res.exit_code == 2 and "'ignore' is not one of 'raise', 'skip'" in res.stderr
    res = _run(str(tiny), "--map", "nonsense", "-o", str(tmp_path / "out"))
    assert res.exit_code == 2 and "--map: expected COLUMN=FIELD" in res.stderr
    # a negative price is a usage error naming the flag, not an internal error
    res = _run(str(tiny), "--judge-price", "m=-1,2", "-o", str(tmp_path / "out"))
    assert res.exit_code == 2 and "--judge-price" in res.stderr and "non-negative" in res.stderr


def test_map_and_format_options(tmp_path):
    data = tmp_path / "custom.txt"
    data.write_text("question_text,docs,gold\nq,\"[\"\"x\"\", \"\"y\"\"]\",\"[\"\"y\"\"]\"\n", encoding="utf-8")
    out = tmp_path / "out"
    res = _run(str(data), "--input-format", "csv", "--map", "question_text=query", "--map", "docs=contexts",
               "--map", "gold=relevant", "-m", "mrr", "-o", str(out), "--json")
    assert res.exit_code == 0, res.output
    # contexts x, y; relevant y at rank 2 -> RR = 1/2
    assert json.loads(res.stdout)["metrics"]["mrr"]["mean"] == pytest.approx(0.5)


def test_parse_field_map():
    assert parse_field_map(("a=query", " b = contexts ")) == {"a": "query", "b": "contexts"}
    with pytest.raises(InvalidParameterError):
        parse_field_map(("=query",))


def test_skipped_message():
    assert skipped_message([]) is None
    msg = skipped_message(["faithfulness", "answer_similarity"])
    assert msg is not None
    assert "Skipped 2 metric(s) that need an LLM judge or an embedder: faithfulness, answer_similarity" in msg


def test_skipped_message_names_the_extra_only_for_the_judge_that_needs_it():
    # before: "ollama:llama3.1 for a local model; both need the judges extra", while ollama: runs on
    # the core install (Ollama's native API over aiohttp)
    assert get_backend_info("openai").extra == "judges" and get_backend_info("ollama").extra is None
    msg = skipped_message(["faithfulness"])
    assert msg is not None and "openai:gpt-4o-mini, which needs the judges extra, or ollama:llama3.1" in msg
    assert msg.count("judges extra") == 1


def _render(summary: dict) -> str:
    console = Console(record=True, width=120)
    console.print(summary_table(summary))
    return console.export_text()


def test_summary_table_cells():
    text = _render({"metrics": {"mrr": {"mean": 2 / 3, "n": 3, "undefined": 1, "errors": 2},
                                "map": {"mean": None, "n": 0, "undefined": 6, "errors": 0}}})
    assert "│ mrr    │ 0.6667 │ 3 │         1 │      2 │" in text
    assert "│ map    │      - │ 0 │         6 │      0 │" in text
    with_ci = _render({"metrics": {"mrr": {"mean": 0.5, "n": 4, "undefined": 0, "errors": 0, "ci": [0.25, 0.75]},
                                   "map": {"mean": None, "n": 0, "undefined": 1, "errors": 0, "ci": None}}})
    assert "[0.2500, 0.7500]" in with_ci
    assert with_ci.splitlines()[-2].rstrip().endswith(" - │")  # no interval without a score


def test_console_script_runs(tmp_path, tiny):
    exe = Path(sys.executable).with_name("ragmeter")
    if not exe.exists():
        pytest.skip("the ragmeter console script is not installed next to this Python")
    out = tmp_path / "out"
    proc = subprocess.run([str(exe), "eval", str(tiny), "-m", "mrr", "-o", str(out), "--json"],
                          capture_output=True, text=True, timeout=120, env={**os.environ, "NO_COLOR": "1"})
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout)["metrics"]["mrr"]["n"] == 3
