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

Then the adaptive-concurrency scenarios, each at the judge's defaults
(``concurrency=16``, adaptive) unless named otherwise:

4. **one slot**: a loopback server that serves one request at a time for ``--service`` seconds
   (like llama-cpp-python's server), ``--slot-calls`` calls, the client timeout scaled like the
   real case (60 s against ~17 s a call: ``timeout = 3.5 x service``). Target: 0 timeouts,
   0 errors, wall time <= 1.15 x calls x service. The same with ``adaptive=False`` (the old
   fixed 16) is printed for comparison.
5. **many slots, fixed vs adaptive**: phase 1's server (no slot limit) at ``--concurrency``
   with ``adaptive=False`` next to phase 1 (adaptive, which starts at 2 on a loopback URL that
   does not say its slot count, and grows). Target: adaptive >= 90 % of the bound.
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

from ragmeter.errors import JudgeError
from ragmeter.judges import FunctionBackend, Judge, from_spec

ROOT = Path(__file__).resolve().parents[1]
SERVER = ROOT / "tests" / "judges" / "fake_server.py"
sys.path.insert(0, str(ROOT))


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


def one_slot(calls: int, service: float, *, adaptive: bool) -> dict[str, object]:
    """``calls`` judge calls at defaults against an in-process one-slot server; returns the row."""
    from tests.judges.fake_server import FakeLLMServer

    with FakeLLMServer(lambda call: {"score": 1, "reason": "ok"}, latency=service, slots=1) as server:
        judge = from_spec(f"openai:bench@{server.url}", cache=False, timeout=3.5 * service, adaptive=adaptive)

        async def run() -> list[object]:
            async def one(i: int) -> object:
                try:
                    return await judge.judge(f"Rate answer number {i}.", Verdict)
                except JudgeError as exc:
                    return exc

            out = await asyncio.gather(*(one(i) for i in range(calls)))
            await judge.aclose()
            return out

        t0 = time.perf_counter()
        out = asyncio.run(run())
        wall = time.perf_counter() - t0
        stats = judge.stats()
        info = judge.concurrency_info() or {}
        judge.close()
        return {"adaptive": adaptive, "calls": calls, "wall": wall, "ideal": calls * service,
                "timeouts": stats["attempt_errors"].get("JudgeTimeout", 0),
                "errors": sum(isinstance(o, Exception) for o in out), "retries": stats["retries"],
                "abandoned": server.abandoned, "limit": info.get("limit"), "peak": info.get("peak_in_flight")}


def live_run(url: str, n: int, concurrency: int, adaptive: bool) -> tuple[float, dict[str, object]]:
    """Seconds for ``n`` uncached calls against ``url``, and the judge's concurrency info."""
    judge = from_spec(f"openai:bench@{url}", cache=False, concurrency=concurrency, timeout=30, adaptive=adaptive)

    async def run() -> float:
        await judge.judge("warm-up", Verdict)
        seconds, _ = await _phase(judge, n)
        await judge.aclose()
        return seconds

    try:
        return asyncio.run(run()), judge.concurrency_info() or {}
    finally:
        judge.close()


def _start_server(latency: float, *extra: str) -> tuple[subprocess.Popen[str], str]:
    proc = subprocess.Popen([sys.executable, str(SERVER), "--latency", str(latency), *extra],
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
    ap.add_argument("--service", type=float, default=0.1, help="one-slot server: seconds per request")
    ap.add_argument("--slot-calls", type=int, default=60, help="one-slot server: judge calls")
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
            live_info = judge.concurrency_info() or {}
            judge.close()
        fixed_s, fixed_info = live_run(url, args.n, args.concurrency, adaptive=False)
    finally:
        proc.kill()
        proc.wait()
    proc, url = _start_server(args.latency, "--vllm")
    try:
        vllm_s, vllm_info = live_run(url, args.n, args.concurrency, adaptive=True)
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

    print(f"\nMany slots (no slot limit, {args.latency * 1000:.0f} ms a request), concurrency={args.concurrency}, "
          f"{args.n} uncached calls:\n")
    print("| judge | server says | start | seconds | calls/s | vs bound | vs fixed | final limit | peak in flight |")
    print("|---|---|---:|---:|---:|---:|---:|---:|---:|")
    for label, says, secs, info in (("fixed (adaptive=False)", "-", fixed_s, fixed_info),
                                    ("adaptive", "nothing (unknown loopback server)", live_s, live_info),
                                    ("adaptive", "vLLM (GET /metrics)", vllm_s, vllm_info)):
        rate = args.n / secs
        print(f"| {label} | {says} | {info.get('start')} | {secs:.2f} | {rate:.0f} | {rate / bound:.0%} | "
              f"{fixed_s / secs:.0%} | {info.get('limit')} | {info.get('peak_in_flight')} |")

    rows = [one_slot(args.slot_calls, args.service, adaptive=True),
            one_slot(args.slot_calls, args.service, adaptive=False)]
    print(f"\nOne slot, {args.service * 1000:.0f} ms a request, timeout {3.5 * args.service:.2f} s, "
          "judge defaults (concurrency 16):\n")
    print("| concurrency | calls | wall (s) | calls x service (s) | ratio | timeouts | retries | failed calls "
          "| abandoned by client | final limit | peak in flight |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    for r in rows:
        print(f"| {'adaptive' if r['adaptive'] else 'fixed 16'} | {r['calls']} | {r['wall']:.2f} | "
              f"{r['ideal']:.2f} | {r['wall'] / r['ideal']:.2f}x | {r['timeouts']} | {r['retries']} | "
              f"{r['errors']} | {r['abandoned']} | {r['limit']} | {r['peak']} |")


if __name__ == "__main__":
    main()
