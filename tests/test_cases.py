"""One test per dataset row: ragmeter.cases() and ragmeter.assert_case(), run in a real pytest subprocess."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

import ragmeter
from ragmeter.cases import case_failures

ROWS = [
    {"id": "good", "query": "q", "contexts": [{"id": "d1"}], "relevant": ["d1"]},
    {"id": "late", "query": "q", "contexts": [{"id": "x"}, {"id": "y"}, {"id": "d1"}], "relevant": ["d1"]},
    {"id": "miss", "query": "q", "contexts": [{"id": "x"}], "relevant": ["d1"]},
]


def _run(tmp_path: Path, body: str) -> subprocess.CompletedProcess[str]:
    (tmp_path / "qa.jsonl").write_text("".join(json.dumps(r) + "\n" for r in ROWS))
    (tmp_path / "test_rag.py").write_text(textwrap.dedent(body))
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[1] / "src")}
    return subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-rA", str(tmp_path)],
                          capture_output=True, text=True, cwd=tmp_path, timeout=120, env=env)


def test_one_test_per_row_and_a_message_naming_case_metric_score_reason_threshold(tmp_path: Path) -> None:
    proc = _run(tmp_path, """
        import pytest
        import ragmeter

        @pytest.mark.parametrize("case", ragmeter.cases("qa.jsonl"))
        def test_rag(case):
            ragmeter.assert_case(case, {"mrr": 0.5}, metrics=["recall@1"])
    """)
    out = proc.stdout
    assert proc.returncode == 1, out + proc.stderr
    assert "PASSED test_rag.py::test_rag[good]" in out
    assert "FAILED test_rag.py::test_rag[late]" in out and "FAILED test_rag.py::test_rag[miss]" in out
    # mrr of 'late': the relevant chunk at rank 3, 1/3
    assert "case 'late': mrr = 0.333, below its threshold 0.5: relevant at rank(s) [3]" in out
    assert "case 'miss': mrr = 0.000, below its threshold 0.5" in out
    # the traceback ends in the user's test, not in ragmeter's frames
    failure = out[out.index("_ test_rag[late] _"):]
    failure = failure[:failure.index("_ test_rag[miss] _")] if "_ test_rag[miss] _" in failure else failure
    assert "ragmeter.assert_case(case" in failure
    assert "cases.py" not in failure and "__tracebackhide__" not in failure


def test_lower_is_better_errored_and_undefined_lines() -> None:
    results = {"hallucination_rate": {"score": 0.6, "reason": "3 of 5 claims not supported",
                                      "details": {"ci": [0.4, 0.8]}},
               "faithfulness": {"score": None, "error": {"type": "JudgeTimeout", "message": "no answer"}},
               "recall@5": {"score": None, "reason": "no relevance labels"}}
    lines = case_failures("q9", results, {"hallucination_rate": 0.2, "faithfulness": 0.8, "recall@5": 0.5},
                          {"hallucination_rate": False, "faithfulness": True, "recall@5": True})
    assert lines == [
        "case 'q9': hallucination_rate = 0.600 [0.400, 0.800], above its threshold 0.2: 3 of 5 claims not supported",
        "case 'q9': faithfulness errored (JudgeTimeout: no answer), threshold 0.8",
        "case 'q9': recall@5 is undefined (no relevance labels), threshold 0.5",
    ]


def test_assert_case_returns_the_results_when_every_threshold_holds() -> None:
    res = ragmeter.assert_case(ROWS[0], {"mrr": 0.5})
    assert res["mrr"]["score"] == 1.0
    with pytest.raises(AssertionError, match=r"case 'late': mrr = 0\.333"):
        ragmeter.assert_case(ROWS[1], {"mrr": 0.5})
    with pytest.raises(ragmeter.InvalidParameterError):
        ragmeter.assert_case(ROWS[0], {})
