"""Every subcommand that prints a table fits 80 columns in a pipe (and honours $COLUMNS), whole numbers.

Each command runs as users run it, in a subprocess whose stdout is a pipe, on the bundled 72-row
validation file (long metric names such as ``semantic_similarity(normalize=baseline)`` included).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from importlib import resources
from pathlib import Path

import pytest
from rich.cells import cell_len

from ragmeter.cli._output import fit_markdown

CLI = [sys.executable, "-c", "import sys; from ragmeter.cli import main; sys.exit(main())"]
DATA = Path(str(resources.files("ragmeter") / "data" / "validation" / "judge_validation.jsonl"))
#: Offline metrics with long names and many columns' worth of numbers.
METRICS = ["rouge_l", "token_f1", "hit_rate@5", "mrr", "ndcg@5", "precision@5", "context_precision",
           "lexical_faithfulness", "fact_consistency", "ndcg(gain=linear)@10"]


def _env(columns: int | None = 80) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in ("GITHUB_STEP_SUMMARY", "COLUMNS")}
    env["PYTHONPATH"] = str(Path(__file__).resolve().parents[2] / "src") + os.pathsep + env.get("PYTHONPATH", "")
    env["NO_COLOR"] = "1"
    if columns is not None:
        env["COLUMNS"] = str(columns)
    return env


def _cli(*args: object, columns: int | None = 80) -> subprocess.CompletedProcess[str]:
    return subprocess.run([*CLI, *map(str, args)], capture_output=True, text=True, timeout=300, env=_env(columns))


def widest(text: str) -> int:
    """The widest line's width on screen; eval's lines naming the files it wrote (``N samples -> PATH
    and PATH``, ``report -> PATH``) are left out: a path is printed whole, to be copied, and its
    length is the user's choice."""
    return max((cell_len(line) for line in text.splitlines() if " -> " not in line), default=0)


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """Three runs of the 72 rows: as bundled, with each row's contexts reversed (a worse ranking),
    and with each answer cut to its first 5 words; plus a labels file for calibrate."""
    tmp = tmp_path_factory.mktemp("widths")
    rows = [json.loads(line) for line in DATA.read_text(encoding="utf-8").splitlines() if line.strip()]
    variants = {"base": rows,
                "reversed": [{**r, "contexts": r["contexts"][::-1],
                              "labels": {**r["labels"], "context_relevance": r["labels"]["context_relevance"][::-1]}}
                             for r in rows],
                "short": [{**r, "answer": " ".join(r["answer"].split()[:5])} for r in rows]}
    out: dict[str, Path] = {}
    for name, data in variants.items():
        path = tmp / f"{name}.jsonl"
        path.write_text("".join(json.dumps(r) + "\n" for r in data), encoding="utf-8")
        args = ["eval", path, "-o", tmp / name, "--no-report"] + [x for m in METRICS for x in ("-m", m)]
        proc = _cli(*args)
        assert proc.returncode == 0, proc.stderr
        out[name] = tmp / name
        out[f"{name}.stdout"] = proc.stdout  # type: ignore[assignment]
    labels = tmp / "labels.csv"
    labels.write_text("id,metric,label\n" + "".join(f"{r['id']},lexical_faithfulness,{int(r['labels']['faithful'])}\n"
                                                      for r in rows), encoding="utf-8")
    out["labels"] = labels
    out["data"] = tmp / "base.jsonl"
    return out


def test_eval_summary_fits_80_columns_with_every_number(runs: dict[str, Path]) -> None:
    text = str(runs["base.stdout"])
    assert widest(text) <= 80, text
    summary = json.loads((runs["base"] / "summary.json").read_text())["metrics"]
    for name, row in summary.items():
        assert f"`{name}`" in text
        assert f"{row['mean']:.4f}" in text and f"[{row['ci'][0]:.4f}, {row['ci'][1]:.4f}]" in text


@pytest.mark.parametrize("extra", [["--format", "table"], ["--format", "markdown"], ["--fail-under", "mrr=0.9"],
                                   ["--markdown", "-", "--fail-under", "rouge_l=0.9"]])
def test_eval_variants_fit(runs: dict[str, Path], tmp_path: Path, extra: list[str]) -> None:
    proc = _cli("eval", runs["data"], "-o", tmp_path / "o", "--no-report", *(x for m in METRICS for x in ("-m", m)),
                *extra)
    assert proc.returncode in (0, 1), proc.stderr
    assert proc.stdout.strip() and "…" not in proc.stdout
    assert widest(proc.stdout) <= 80, proc.stdout
    assert "ndcg(gain=linear)@10" in proc.stdout  # the longest name, whole on one line


def test_dry_run_prints_no_box_into_a_pipe(runs: dict[str, Path]) -> None:
    proc = _cli("eval", runs["data"], "--judge", "openai:gpt-4o-mini", "--dry-run", "-m", "faithfulness",
                "-m", "answer_relevancy")
    assert proc.returncode == 0, proc.stderr
    assert not any(ch in proc.stdout for ch in "┏┃│━─"), proc.stdout
    assert "| `faithfulness` |" in proc.stdout
    assert widest(proc.stdout) <= 80, proc.stdout


@pytest.mark.parametrize("fmt", [[], ["--format", "table"]])
def test_stats_commands_fit(runs: dict[str, Path], fmt: list[str]) -> None:
    commands = [["compare", runs["base"], runs["reversed"]],
                ["compare", runs["base"], runs["reversed"], runs["short"]],
                ["diagnose", runs["reversed"]],
                ["calibrate", runs["base"], "-l", runs["labels"], "-m", "lexical_faithfulness"]]
    for cmd in commands:
        proc = _cli(*cmd, *fmt)
        assert proc.returncode == 0, (cmd, proc.stderr)
        assert proc.stdout.strip() and "…" not in proc.stdout
        assert widest(proc.stdout) <= 80, (cmd, proc.stdout)


@pytest.mark.parametrize("args", [["metrics"], ["metrics", "--format", "table"], ["metrics", "--trec"],
                                  ["metrics", "--trec", "--format", "table"]])
def test_metrics_fits_and_never_breaks_a_name(args: list[str]) -> None:
    proc = _cli(*args)
    assert proc.returncode == 0, proc.stderr
    assert widest(proc.stdout) <= 80, proc.stdout
    if "--trec" not in args:
        for name in ("context_precision_llm", "semantic_similarity", "lexical_faithfulness", "hallucination_rate"):
            assert name in proc.stdout  # whole, on one line
    assert len(proc.stdout.splitlines()) < 200


def test_columns_is_honoured(runs: dict[str, Path]) -> None:
    wide = _cli("compare", runs["base"], runs["reversed"], "--format", "table", columns=200)
    narrow = _cli("compare", runs["base"], runs["reversed"], "--format", "table", columns=100)
    assert 100 < widest(wide.stdout) <= 200 and widest(narrow.stdout) <= 100


def test_metrics_json_has_the_reference_levels() -> None:
    rows = {r["name"]: r for r in json.loads(_cli("metrics", "--format", "json").stdout)}
    assert rows["recall"]["reference_level"] == 0.5 and rows["rouge_l"]["reference_level"] is None


def test_fit_markdown_splits_tables_and_wraps_lines() -> None:
    long = "- " + " ".join(["word"] * 40)
    table = ("| metric | a | b | c |\n|---|---:|---:|---:|\n| `" + "m" * 30 + "` | "
             + " | ".join(["0.123456"] * 3) + " |")
    # the key cell is 32 wide, each number 8: key + two numbers = 32 + 16 + 3 * 3 + 1 = 58 columns
    out = fit_markdown(long + "\n\n" + table, 60)
    lines = out.splitlines()
    assert widest(out) <= 60
    assert lines[1].startswith("  word")  # a list item's continuation is indented under its text
    assert out.count("| metric |") == 2 and out.count("`" + "m" * 30 + "`") == 2  # the key column repeated
    assert out.count("0.123456") == 3
