"""Input files that crashed pyarrow's readers (the process died, or an internal error, exit 4) are
input errors naming the file (exit 2) on the columnar path that ``-m mrr`` takes. Each runs in a
subprocess: a crash there cannot take the test runner with it."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

GOOD = b'{"id": "q2", "retrieved_contexts": [{"id": "d1"}], "relevant": ["d1"]}\n'


def _eval(path: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "ragmeter", "eval", str(path), "-m", "mrr", "--no-report",
                           "-o", str(path.parent / "out")], capture_output=True, text=True, timeout=120)


@pytest.mark.parametrize("first", [b"null\n", b"[1, 2]\n", b"7\n"], ids=["null", "list", "number"])
def test_a_first_line_that_is_not_an_object_is_exit_2_naming_line_1(tmp_path, first):
    path = tmp_path / "d.jsonl"
    path.write_bytes(first + GOOD)
    done = _eval(path)
    assert done.returncode == 2, (done.returncode, done.stderr[-500:])
    assert "d.jsonl:1" in done.stderr


def test_a_line_nested_20000_deep_is_exit_2_naming_its_line(tmp_path):
    path = tmp_path / "d.jsonl"
    deep = b'{"id": "q1", "contexts": ' + b"[" * 20_000 + b"]" * 20_000 + b"}\n"
    path.write_bytes(GOOD.replace(b"q2", b"q0") + deep + GOOD)
    done = _eval(path)
    assert done.returncode == 2, (done.returncode, done.stderr[-500:])
    assert "d.jsonl:2" in done.stderr


def test_a_parquet_name_on_a_file_that_is_not_parquet_is_exit_2_naming_it(tmp_path):
    path = tmp_path / "d.parquet"
    path.write_bytes(b"this is not a parquet file\n")
    done = _eval(path)
    assert done.returncode == 2, (done.returncode, done.stderr[-500:])
    assert "d.parquet" in done.stderr and "Parquet" in done.stderr
