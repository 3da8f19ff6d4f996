"""Issue #12 section 1 on a real judge: ``ragmeter eval`` at its defaults against a one-slot server.

    python bench/slot_defaults.py --judge-url http://127.0.0.1:8080/v1 --model qwen \\
        [--data src/ragmeter/data/validation/judge_validation.jsonl] [--limit 50] \\
        [--metric faithfulness] [--out bench/results/slot_defaults_qwen1.5b.json]

Runs the product command, ``ragmeter eval DATA -m METRIC --judge openai:MODEL@PROXY/v1``, with no
option but ``--no-cache`` (every call must reach the judge to be timed), through a counting reverse
proxy on loopback (``vs_ragas.CountingProxy``) that records each chat request's start and end. The
server serves one request at a time, so its **busy time** is the union of the intervals in which
at least one request was in flight (a request queued behind another inside the server is not
counted twice), and ``calls x mean service time`` is that busy time. Target:
0 timeouts, 0 errors, wall time <= 1.15 x busy time. Printed: wall, busy, their ratio, requests,
retries, timeouts, errors, requests abandoned by the client (the server worked for nobody), the
most in flight at once; the JSON at ``--out`` keeps every request's interval and status.

The server's own per-request timings (llama.cpp's ``llama_perf_context_print: total time``) are
not the service time: llama-cpp-python computes the log-probabilities a request asks for outside
them (measured here: the same 68-token reply took 3.8 s without ``logprobs`` and 16 s with them).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(Path(__file__).resolve().parent))

from vs_ragas import CountingProxy  # noqa: E402


class IntervalProxy(CountingProxy):
    """:class:`CountingProxy` that also keeps each chat request's ``(start, end, status, abandoned)``."""

    def __init__(self, upstream: str) -> None:
        super().__init__(upstream)
        self.intervals: list[tuple[float, float, int | None, bool]] = []

    def _done(self, phase: str, chat: bool, status: int | None, t0: float, request: Any) -> float:
        seconds = super()._done(phase, chat, status, t0, request)
        if chat:
            transport = request.transport
            with self._lock:
                self.intervals.append((t0, t0 + seconds, status, transport is None or transport.is_closing()))
        return seconds


def busy_seconds(intervals: list[tuple[float, float]]) -> float:
    """The length of the union of ``[start, end]`` intervals."""
    total, end = 0.0, float("-inf")
    for a, b in sorted(intervals):
        if a > end:
            total += b - a
            end = b
        elif b > end:
            total += b - end
            end = b
    return total


def main() -> None:
    """Run the measurement and print its table."""
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--judge-url", required=True)
    ap.add_argument("--model", required=True)
    ap.add_argument("--data", default=str(ROOT / "src/ragmeter/data/validation/judge_validation.jsonl"))
    ap.add_argument("--limit", type=int, default=50)
    ap.add_argument("--metric", default="faithfulness")
    ap.add_argument("--out", default=None)
    args = ap.parse_args()
    lines = [x for x in Path(args.data).read_text(encoding="utf-8").splitlines() if x.strip()][:args.limit]
    proxy = IntervalProxy(args.judge_url).start()
    path = args.judge_url.split("://", 1)[1].split("/", 1)[1] if "/" in args.judge_url.split("://", 1)[1] else ""
    spec = f"openai:{args.model}@{proxy.url}/{path}".rstrip("/")
    with tempfile.TemporaryDirectory(prefix="ragmeter-slot-") as tmp:
        data = Path(tmp) / "rows.jsonl"
        data.write_text("\n".join(lines) + "\n", encoding="utf-8")
        cmd = [sys.executable, "-m", "ragmeter", "eval", str(data), "-m", args.metric, "--judge", spec,
               "--no-cache", "-o", str(Path(tmp) / "out"), "--no-report"]
        t0 = time.perf_counter()
        proc = subprocess.run(cmd, capture_output=True, text=True, env=os.environ.copy(), check=False)
        wall = time.perf_counter() - t0
        summary = json.loads((Path(tmp) / "out" / "summary.json").read_text()) if proc.returncode in (0, 1, 3) else {}
    proxy.stop()
    ivs = proxy.intervals
    busy = busy_seconds([(a, b) for a, b, _, _ in ivs])
    judge = summary.get("run", {}).get("judge", {})
    metric = summary.get("metrics", {}).get(args.metric, {})
    stats = proxy.phase_stats("-")
    out = {
        "command": " ".join(cmd), "exit": proc.returncode, "rows": len(lines), "wall_s": wall, "busy_s": busy,
        "wall_over_busy": wall / busy if busy else None, "requests": len(ivs),
        "mean_service_s": busy / len(ivs) if ivs else None,
        "statuses": stats.get("statuses"), "abandoned": sum(1 for *_, ab in ivs if ab),
        "max_in_flight": stats.get("max_in_flight"), "judge": judge, "metric": metric,
        "intervals": [(round(a - t0, 3), round(b - t0, 3), s, ab) for a, b, s, ab in ivs],
        "stderr_tail": proc.stderr[-2000:],
    }
    print(f"| rows | exit | wall s | busy s | wall / busy | requests | mean service s | retries | timeouts "
          f"| errors | abandoned | max in flight |\n|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n"
          f"| {len(lines)} | {proc.returncode} | {wall:,.0f} | {busy:,.0f} | {out['wall_over_busy'] or 0:.3f} | "
          f"{len(ivs)} | {out['mean_service_s'] or 0:.1f} | {judge.get('retries')} | "
          f"{judge.get('attempt_errors', {}).get('JudgeTimeout', 0)} | {judge.get('errors')} | {out['abandoned']} | "
          f"{out['max_in_flight']} |")
    print(f"{args.metric}: mean {metric.get('mean')}, n {metric.get('n')}, errors {metric.get('errors')}, "
          f"undefined {metric.get('undefined')}")
    if args.out:
        Path(args.out).write_text(json.dumps(out, indent=1, default=str), encoding="utf-8")


if __name__ == "__main__":
    main()
