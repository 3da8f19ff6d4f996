"""The pytest plugin, run in a real pytest subprocess on a generated test file."""

from __future__ import annotations

import subprocess
import sys
import textwrap


def _run(tmp_path, body: str) -> subprocess.CompletedProcess[str]:
    (tmp_path / "test_rag.py").write_text(textwrap.dedent(body))
    return subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", str(tmp_path)],
                          capture_output=True, text=True, cwd=tmp_path, timeout=120)


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
