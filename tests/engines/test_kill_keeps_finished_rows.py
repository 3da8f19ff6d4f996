"""``kill -9`` keeps what finished: a judged ``ragmeter eval`` killed when 60% of its judge calls
were answered has at least 40% of its rows in ``results.jsonl``, each a whole line, in input order.

A row is written as soon as its metrics are done, and a row's second-stage call (faithfulness asks
for the answer's claims, then checks them) goes out before new rows' first-stage calls: with
every first-stage call sent first, 60% of the calls is all of the first stage and a fifth of the
second, so about 20% of the rows would be done.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
from pathlib import Path

from tests.judges.fake_server import ChatCall, FakeLLMServer
from tests.metrics.generation.rules import judge_rule

ROOT = Path(__file__).resolve().parents[2]
ROWS = 100
CALLS = 2 * ROWS  # faithfulness: the claims, then their verdicts


def _data(path: Path) -> Path:
    rows = [{"id": f"q{i}", "query": f"question {i}?", "answer": f"Passage {i}. It is {i}.",
             "contexts": [f"Passage {i}. it is {i}."]} for i in range(ROWS)]
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path


def test_kill_at_60_percent_of_the_calls_keeps_40_percent_of_the_rows(tmp_path: Path) -> None:
    kill_at = int(0.6 * CALLS)
    proc: list[subprocess.Popen[bytes]] = []
    killed = threading.Event()

    def rule(call: ChatCall) -> object:
        if call.index + 1 >= kill_at and not killed.is_set():  # this call is never answered
            killed.set()
            os.kill(proc[0].pid, signal.SIGKILL)
        return judge_rule(call)

    data = _data(tmp_path / "data.jsonl")
    out = tmp_path / "out"
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT / "src"), str(ROOT)]),
           "RAGMETER_CACHE_DIR": str(tmp_path / "cache")}
    env.pop("OPENAI_API_KEY", None)
    with FakeLLMServer(rule, latency=0.005) as server:
        proc.append(subprocess.Popen(
            [sys.executable, "-m", "ragmeter", "eval", str(data), "-m", "faithfulness", "--judge",
             f"openai:fake-model@{server.url}", "-o", str(out), "-q", "--no-report"],
            env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE))
        proc[0].wait(timeout=300)
        answered = len(server.log) - 1
    assert killed.is_set() and proc[0].returncode == -signal.SIGKILL
    assert answered >= 0.6 * CALLS - 1
    text = (out / "results.jsonl").read_text(encoding="utf-8")
    assert text == "" or text.endswith("\n")  # whole lines only
    ids = [json.loads(line)["id"] for line in text.splitlines()]
    assert ids == [f"q{i}" for i in range(len(ids))]  # input order, no gap
    assert len(ids) >= 0.4 * ROWS, f"{len(ids)} rows on disk after {answered} of {CALLS} calls"
