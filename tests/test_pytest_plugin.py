"""The pytest plugin, run in a real pytest subprocess on a generated test file."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import ragmeter


def _run(tmp_path, body: str) -> subprocess.CompletedProcess[str]:
    (tmp_path / "test_rag.py").write_text(textwrap.dedent(body))
    # the plugin of the ragmeter under test, whichever copy the interpreter has installed
    src = str(Path(ragmeter.__file__).resolve().parents[1])
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(p for p in (src, os.environ.get("PYTHONPATH")) if p)}
    return subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", str(tmp_path)],
                          capture_output=True, text=True, cwd=tmp_path, timeout=120, env=env)


ROWS = """
ROWS = [
    {"id": "good", "query": "q", "contexts": [{"id": "d1"}], "relevant": ["d1"]},
    {"id": "late", "query": "q", "contexts": [{"id": "x"}, {"id": "y"}, {"id": "d1"}], "relevant": ["d1"]},
]
"""


def test_fixture_passes_when_threshold_met(tmp_path):
    proc = _run(tmp_path, ROWS + """
def test_rag(ragmeter_eval):
    run = ragmeter_eval(ROWS, metrics=["mrr"], fail_under={"mrr": 0.6})
    assert abs(run.summary()["mrr"]["mean"] - (1 + 1/3) / 2) < 1e-12
""")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "1 passed" in proc.stdout


def test_failure_message_lists_worst_samples(tmp_path):
    proc = _run(tmp_path, ROWS + """
def test_rag(ragmeter_eval):
    ragmeter_eval(ROWS, fail_under={"mrr": 0.9})
""")
    assert proc.returncode == 1
    assert "ragmeter quality gate failed" in proc.stdout
    assert "mrr: mean 0.6667 not >= 0.9" in proc.stdout
    # the worst sample comes first, with its score and reason
    worst = proc.stdout.index("late: 0.333")
    assert worst < proc.stdout.index("good: 1.000")
    assert "relevant at rank(s) [3]" in proc.stdout


EMBED_ROWS = [
    {"id": "same", "query": "q", "answer": "The cat sat on the mat.", "reference": "The cat sat on the mat."},
    {"id": "apart", "query": "q", "answer": "Paris is the capital of France.",
     "reference": "Photosynthesis turns light into chemical energy."},
]


def test_assert_scores_uses_the_default_embedder_of_evaluate():
    """``assert_scores`` used to pass embedder=None (semantic_similarity then had no embedder);
    its default is now evaluate()'s embedder="auto", the offline MiniLM model when installed."""
    import numpy as np
    import pytest

    from ragmeter import evaluate
    from ragmeter.embedders import DEFAULT_SPEC, default_available
    from ragmeter.pytest_plugin import assert_scores

    if not default_available():
        pytest.skip("the offline MiniLM embedder package is not installed")
    run = assert_scores(EMBED_ROWS, ["semantic_similarity"])
    explicit = evaluate(EMBED_ROWS, ["semantic_similarity"], embedder=DEFAULT_SPEC)
    got = run.scores["semantic_similarity"]
    assert not np.isnan(got).any()
    np.testing.assert_allclose(got, explicit.scores["semantic_similarity"], rtol=1e-6)
    assert got[0] == pytest.approx(1.0, abs=1e-4) and got[1] < 0.5  # identical texts vs unrelated ones


def test_fixture_with_no_embedder_configured_uses_the_default(tmp_path):
    from ragmeter.embedders import default_available

    if not default_available():
        import pytest

        pytest.skip("the offline MiniLM embedder package is not installed")
    proc = _run(tmp_path, f"""
ROWS = {EMBED_ROWS!r}

def test_rag(ragmeter_eval, monkeypatch):
    monkeypatch.delenv("RAGMETER_EMBEDDER", raising=False)
    run = ragmeter_eval(ROWS, metrics=["semantic_similarity"], fail_under={{"semantic_similarity": 0.1}})
    assert run.status["semantic_similarity"].tolist() == [0, 0]
""")
    assert proc.returncode == 0, proc.stdout + proc.stderr


def test_fixture_takes_a_path_and_a_dataframe_as_ragmeter_evaluate_does(tmp_path):
    """The fixture hands its data to ``ragmeter.evaluate``: a JSONL path and a DataFrame are rows,
    not a string's characters or a frame's column names."""
    import json

    lines = [{"id": "good", "query": "q", "contexts": [{"id": "d1"}], "relevant": ["d1"]},
             {"id": "late", "query": "q", "contexts": [{"id": "x"}, {"id": "y"}, {"id": "d1"}], "relevant": ["d1"]}]
    (tmp_path / "rows.jsonl").write_text("".join(json.dumps(r) + "\n" for r in lines))
    proc = _run(tmp_path, ROWS + """
import pandas as pd

def test_path(ragmeter_eval):
    run = ragmeter_eval("rows.jsonl", metrics=["mrr"], fail_under={"mrr": 0.6})
    assert run.ids == ["good", "late"] and abs(run.summary()["mrr"]["mean"] - (1 + 1/3) / 2) < 1e-12

def test_dataframe(ragmeter_eval):
    run = ragmeter_eval(pd.DataFrame(ROWS), metrics=["mrr"], fail_under={"mrr": 0.6})
    assert run.ids == ["good", "late"] and abs(run.summary()["mrr"]["mean"] - (1 + 1/3) / 2) < 1e-12
""")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "2 passed" in proc.stdout
