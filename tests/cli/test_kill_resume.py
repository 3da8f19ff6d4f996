"""A killed run keeps its finished rows: ``ragmeter eval`` in a real
subprocess, killed with SIGKILL mid-run, leaves a ``results.jsonl`` of complete lines holding the
samples finished so far, in input order; running the same command again gives files identical to
those of a run never interrupted."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

N = 400
HERE = Path(__file__).parent
LAUNCH = (f"import sys; sys.path.insert(0, {str(HERE)!r}); import slow_metric; "
          "from ragmeter.cli import main; main()")


def _cmd(data: Path, out: Path) -> list[str]:
    return [sys.executable, "-c", LAUNCH, "eval", str(data), "-m", "slow_len", "-m", "mrr", "-o", str(out),
            "--no-report", "-q"]


def _lines(path: Path) -> list[str]:
    return path.read_text(encoding="utf-8").splitlines(keepends=True) if path.exists() else []


def test_kill_9_keeps_every_finished_sample_and_a_rerun_completes_identically(tmp_path):
    data = tmp_path / "d.jsonl"
    data.write_text("".join(json.dumps({"id": f"q{i:03d}", "contexts": [{"id": f"d{j}"} for j in range(i % 7)],
                                        "relevant": ["d2"]}) + "\n" for i in range(N)), encoding="utf-8")
    out = tmp_path / "killed"
    results = out / "results.jsonl"
    proc = subprocess.Popen(_cmd(data, out), stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    try:
        deadline = time.monotonic() + 120
        while len(_lines(results)) < 40 and proc.poll() is None and time.monotonic() < deadline:
            time.sleep(0.02)
        seen = len(_lines(results))
        time.sleep(0.5)  # ~50 more samples finish meanwhile (10 ms each: 20 ms, 2 at a time)
        # rows reached the file while the run was still going, a few at a time: it writes samples as
        # they finish (before: nothing until the end of a 2,048-row chunk, then every row at once)
        assert proc.poll() is None, proc.stderr.read().decode() if proc.stderr else ""
        more = len(_lines(results))
        assert 40 <= seen < more < N
        os.kill(proc.pid, signal.SIGKILL)
    finally:
        proc.wait(timeout=30)
    assert proc.returncode == -signal.SIGKILL
    kept = _lines(results)
    assert more <= len(kept) < N
    assert all(line.endswith("\n") for line in kept)  # whole lines only
    ids = [json.loads(line)["id"] for line in kept]
    assert ids == [f"q{i:03d}" for i in range(len(kept))]
    assert not (out / "summary.json").exists()

    # the same command again completes the run; its files equal those of an uninterrupted run
    assert subprocess.run(_cmd(data, out), capture_output=True, timeout=300).returncode == 0
    clean = tmp_path / "clean"
    assert subprocess.run(_cmd(data, clean), capture_output=True, timeout=300).returncode == 0
    final = _lines(results)
    assert final == _lines(clean / "results.jsonl") and len(final) == N
    assert final[: len(kept)] == kept
    a = json.loads((out / "summary.json").read_text())
    b = json.loads((clean / "summary.json").read_text())
    assert a["metrics"] == b["metrics"]
    assert a["metrics"]["slow_len"]["mean"] == sum(i % 7 for i in range(N)) / 10 / N
