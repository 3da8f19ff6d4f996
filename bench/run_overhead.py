"""Benchmark: what ``ragmeter run`` adds over ``ragmeter eval`` for an app that answers instantly
(target: under 2x the time of ``eval`` on the same outputs).

Usage::

    /work/venv/bin/python bench/run_overhead.py               # 1,000 questions, offline metrics
    /work/venv/bin/python bench/run_overhead.py --questions 5000

Writes an instant app (a dict lookup) and N questions to a temporary directory, then, in fresh
interpreters and alternating so machine load hits both alike: ``ragmeter run APP --questions Q
--no-cache`` (every question called) and ``ragmeter eval`` of the ``app_outputs.jsonl`` that run
wrote, both with ``-m token_f1 -m rouge_l -m mrr --no-report``. Prints the median wall time of
each over ``--repeats`` rounds and their ratio.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

APP = '''
def answer(question):
    i = int(question.rsplit(" ", 1)[1])
    return {"answer": f"answer number {i}", "contexts": [{"id": f"d{i}", "text": f"passage {i}"},
                                                        {"id": f"d{i + 1}", "text": f"passage {i + 1}"}]}
'''
METRICS = ["-m", "token_f1", "-m", "rouge_l", "-m", "mrr"]


def _timed(cmd: list[str], env: dict[str, str]) -> float:
    t0 = time.perf_counter()
    subprocess.run(cmd, env=env, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    return time.perf_counter() - t0


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--questions", type=int, default=1000)
    ap.add_argument("--repeats", type=int, default=3)
    args = ap.parse_args()
    work = Path(tempfile.mkdtemp(prefix="ragmeter-run-bench-"))
    (work / "instant_app.py").write_text(APP, encoding="utf-8")
    rows = [{"id": f"q{i}", "question": f"question {i}", "reference": f"answer number {i}", "relevant": [f"d{i}"]}
            for i in range(args.questions)]
    (work / "q.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    src = str(Path(__file__).parents[1] / "src")
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([src, str(work)]))
    run = [sys.executable, "-m", "ragmeter", "run", "instant_app:answer", "--questions", str(work / "q.jsonl"),
           *METRICS, "-o", str(work / "run"), "--no-cache", "--no-report", "-q"]
    ev = [sys.executable, "-m", "ragmeter", "eval", str(work / "run" / "app_outputs.jsonl"), *METRICS,
          "-o", str(work / "eval"), "--no-report", "-q"]
    _timed(run, env)  # warm-up (and the outputs eval reads)
    t_run, t_eval = [], []
    for _ in range(args.repeats):
        t_run.append(_timed(run, env))
        t_eval.append(_timed(ev, env))
    a, b = statistics.median(t_run), statistics.median(t_eval)
    print(f"{args.questions} questions, metrics {' '.join(METRICS[1::2])}, {args.repeats} rounds, median wall s")
    print(f"ragmeter run (app called on every question): {a:.2f} s")
    print(f"ragmeter eval (the same outputs):           {b:.2f} s")
    print(f"run / eval: {a / b:.2f}x (target < 2x)")


if __name__ == "__main__":
    main()
