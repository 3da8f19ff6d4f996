"""The bundled examples: the README's first command works on them and gives the hand-checked numbers."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from ragmeter.cli import main
from ragmeter.io import read_samples

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"


def test_readme_command_on_the_example_dataset(tmp_path):
    out = tmp_path / "out"
    res = CliRunner().invoke(main, ["eval", str(EXAMPLES / "rag_samples.jsonl"), "-o", str(out)])
    assert res.exit_code == 0, res.output
    assert "| `mrr` | 0.6842 |" in res.stdout  # not a terminal: the Markdown table (13/19 below)
    lines = [json.loads(x) for x in (out / "results.jsonl").read_text(encoding="utf-8").splitlines()]
    assert [r["id"] for r in lines] == [f"nb-{i:03d}" for i in range(1, 21)]
    summary = json.loads((out / "summary.json").read_text(encoding="utf-8"))
    # Reciprocal ranks, from the ids/labels in the file (first relevant rank r -> 1/r):
    #   rank 1 (RR 1):   nb-001 002 003 005 006 009 010 013 015 017  -> 10 x 1   = 10
    #   rank 2 (RR 1/2): nb-004 007 011 012 019 020                  ->  6 x 1/2 = 3
    #   none   (RR 0):   nb-008 (label not retrieved), nb-014 (no context contains the reference),
    #                    nb-018 (empty context list)
    #   undefined:       nb-016 (neither labels nor a reference)
    # mean = 13 / 19 = 0.68421...
    mrr = summary["metrics"]["mrr"]
    assert (mrr["n"], mrr["undefined"], mrr["errors"]) == (19, 1, 0)
    assert mrr["mean"] == pytest.approx(13 / 19)
    # recall needs labels: the 4 reference-only rows (nb-012..015) and nb-016 are undefined
    assert summary["metrics"]["recall@5"]["undefined"] == 5
    by_id = {r["id"]: r["metrics"] for r in lines}
    assert by_id["nb-011"]["mrr"]["details"]["matched_by"] == [None, "text"]  # a text label
    assert by_id["nb-015"]["mrr"]["details"]["relevance_from"] == "reference"


def test_ragas_csv_example_evaluates(tmp_path):
    res = CliRunner().invoke(main, ["eval", str(EXAMPLES / "rag_samples_ragas.csv"), "-m", "mrr",
                                    "-o", str(tmp_path / "out"), "--json"])
    assert res.exit_code == 0, res.output
    mrr = json.loads(res.stdout)["metrics"]["mrr"]
    # rows 1..5: labelled text at rank 1 (1); reference in context 2 (1/2); reference in context 2
    # (1/2); labelled text not retrieved (0); reference in context 1 (1) -> (1 + .5 + .5 + 0 + 1) / 5 = 0.6
    assert (mrr["n"], mrr["mean"]) == (5, pytest.approx(0.6))


def test_example_files_read_cleanly():
    samples = list(read_samples(EXAMPLES / "rag_samples.jsonl"))
    assert len(samples) == 20
    assert sum(1 for s in samples if not s.contexts) == 1
    assert any(isinstance(s.relevant, dict) for s in samples)
    assert any(isinstance(s.relevant, list) for s in samples)
    assert sum(1 for s in samples if s.relevant is None and s.reference) == 4
    assert samples[0].metadata == {"retriever": "hybrid", "latency_ms": 412}


def test_trec_example_files_are_well_formed():
    qrels = [line.split() for line in (EXAMPLES / "trec" / "qrels.txt").read_text().splitlines()]
    run = [line.split() for line in (EXAMPLES / "trec" / "run.txt").read_text().splitlines()]
    assert all(len(f) == 4 and f[3].lstrip("-").isdigit() for f in qrels)
    assert all(len(f) == 6 and f[1] == "Q0" for f in run)
    assert {f[0] for f in qrels} == {f[0] for f in run} and len({f[0] for f in run}) == 5
    scores = [(f[0], f[4]) for f in run]
    assert len(scores) > len(set(scores)), "the run has a tie in scores"
