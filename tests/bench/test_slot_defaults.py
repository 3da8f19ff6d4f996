"""bench/slot_defaults.py: the busy-time arithmetic by hand, and the bench end to end against the
rule-based fake judge with one slot on loopback (the proxy's request count must equal ragmeter's)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from tests.bench import loader
from tests.judges.fake_server import FakeLLMServer
from tests.metrics.generation.rules import judge_rule

ROOT = Path(__file__).resolve().parents[2]


def load_bench():
    return loader.load_bench("slot_defaults")


def test_busy_seconds_is_the_union_of_the_intervals():
    bench = load_bench()
    # [0, 2] and [1, 3] overlap: 3 s; [5, 6] holds [5.5, 5.7]: 1 s; [7, 7.5] alone: 0.5 s
    assert bench.busy_seconds([(5.5, 5.7), (0, 2), (7, 7.5), (1, 3), (5, 6)]) == 4.5
    assert bench.busy_seconds([]) == 0.0


def test_bench_end_to_end_on_a_one_slot_fake_judge(tmp_path):
    with FakeLLMServer(judge_rule, latency=0.05, slots=1) as server:
        out = tmp_path / "slot.json"
        proc = subprocess.run([sys.executable, str(ROOT / "bench" / "slot_defaults.py"), "--judge-url",
                               server.url, "--model", "m", "--limit", "4", "--out", str(out)],
                              capture_output=True, text=True, timeout=300, check=False)
    assert proc.returncode == 0, proc.stderr[-3000:]
    got = json.loads(out.read_text())
    assert got["exit"] == 0 and got["rows"] == 4 and "--no-cache" in got["command"]
    assert got["requests"] == got["judge"]["requests"] >= 4  # every request ragmeter sent went through
    assert got["abandoned"] == 0 and got["judge"]["retries"] == 0
    assert got["metric"]["n"] + got["metric"]["undefined"] == 4
    assert 0 < got["busy_s"] <= got["wall_s"] and got["mean_service_s"] >= 0.05
    assert "| 4 | 0 |" in proc.stdout  # the table row: rows, exit
