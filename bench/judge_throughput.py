"""Judge throughput against the loopback OpenAI-compatible server.

    python bench/judge_throughput.py [--n 2000] [--concurrency 64] [--latency 0.2]

Starts ``tests/judges/fake_server.py`` in a subprocess with a fixed reply latency, then:

1. **live**: N judge calls through the ``openai`` backend with concurrency C and an empty cache.
   The bound is C / latency calls per second; the target is >= 90 % of it.
2. **cached**: the same N calls again, all served by the SQLite cache (target > 5,000 calls/s).
3. **judge layer only**: N calls through a :class:`~ragmeter.judges.FunctionBackend` that sleeps
   the same latency (no HTTP, no SDK): what the judge's own machinery (concurrency slots, retries
   loop, key hashing, parsing, accounting) achieves against the same bound.

It also samples the event loop's lag every 5 ms during each phase (how long the loop was kept
from running: the judge must never block it) and prints a Markdown table.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from pydantic import BaseModel

from ragmeter.judges import FunctionBackend, Judge, from_spec

SERVER = Path(__file__).resolve().parents[1] / "tests" / "judges" / "fake_server.py"


class Verdict(BaseModel):
    """The reply the fake server sends by default."""

    score: int
    reason: str


async def _lag_monitor(samples: list[float], stop: asyncio.Event, period: float = 0.005) -> None:
    loop = asyncio.get_running_loop()
    while not stop.is_set():
        t = loop.time()
        await asyncio.sleep(period)
        samples.append(max(0.0, loop.time() - t - period))


async def _phase(judge, n: int) -> tuple[float, list[float]]:
    lags: list[float] = []
    stop = asyncio.Event()
    monitor = asyncio.create_task(_lag_monitor(lags, stop))
    t0 = time.perf_counter()
    await asyncio.gather(*(judge.judge(f"Rate answer number {i}.", Verdict, tag="bench") for i in range(n)))
    elapsed = time.perf_counter() - t0
    stop.set()
    await monitor
    return elapsed, lags


def _start_server(latency: float) -> tuple[subprocess.Popen[str], str]:
    proc = subprocess.Popen([sys.executable, str(SERVER), "--latency", str(latency)],
                            stdout=subprocess.PIPE, text=True)
    assert proc.stdout is not None
    line = proc.stdout.readline().strip()
    if not line.startswith("READY "):
        proc.kill()
        raise SystemExit(f"the fake server did not start: {line!r}")
    return proc, line.split()[1]


def main() -> None:
    """Run both phases and print the table."""
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--n", type=int, default=2000, help="judge calls per phase")
    ap.add_argument("--concurrency", type=int, default=64)
    ap.add_argument("--latency", type=float, default=0.2, help="server reply latency in seconds")
    args = ap.parse_args()

    proc, url = _start_server(args.latency)
    try:
        with tempfile.TemporaryDirectory() as cache_dir:
            judge = from_spec(f"openai:bench@{url}", cache=cache_dir, concurrency=args.concurrency, timeout=30)

            async def run() -> list[tuple[float, list[float]]]:
                await judge.judge("warm-up", Verdict)  # connection pool, structured-output mode
                live = await _phase(judge, args.n)
                cached = await _phase(judge, args.n)
                await judge.aclose()
                return [live, cached]

            (live_s, live_lag), (cached_s, cached_lag) = asyncio.run(run())
            stats = judge.stats()
            judge.close()
    finally:
        proc.kill()
        proc.wait()

    async def sleeper(request: object) -> str:
        await asyncio.sleep(args.latency)
        return '{"score": 1, "reason": "ok"}'

    layer = Judge(FunctionBackend(sleeper, model="sleeper"), cache=False, concurrency=args.concurrency)
    layer_s, layer_lag = asyncio.run(_phase(layer, args.n))

    bound = args.concurrency / args.latency
    live_rate, cached_rate, layer_rate = args.n / live_s, args.n / cached_s, args.n / layer_s

    def lag(xs: list[float]) -> str:
        if not xs:
            return "-"
        p99 = statistics.quantiles(xs, n=100)[98] if len(xs) >= 100 else max(xs)
        return f"{p99 * 1000:.1f} / {max(xs) * 1000:.1f}"

    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
    print(f"N={args.n}, C={args.concurrency}, latency={args.latency * 1000:.0f} ms, "
          f"bound C/latency={bound:.0f} calls/s, cpus={os.cpu_count()}, load average={load:.1f}\n")
    print("| phase | calls | seconds | calls/s | vs bound | loop lag p99 / max (ms) |")
    print("|---|---:|---:|---:|---:|---:|")
    print(f"| live (openai backend, HTTP) | {args.n} | {live_s:.2f} | {live_rate:.0f} | "
          f"{live_rate / bound:.0%} | {lag(live_lag)} |")
    print(f"| cached (SQLite hits) | {args.n} | {cached_s:.3f} | {cached_rate:.0f} | - | {lag(cached_lag)} |")
    print(f"| judge layer only (sleeping backend) | {args.n} | {layer_s:.2f} | {layer_rate:.0f} | "
          f"{layer_rate / bound:.0%} | {lag(layer_lag)} |")
    print(f"\nrequests sent: {stats['requests']}, cache hits: {stats['cache_hits']}, "
          f"errors: {stats['errors'] or 'none'}")


if __name__ == "__main__":
    main()
