"""Benchmark: start-up cost of ``import ragmeter`` and ``ragmeter --help`` (target: each within 0.3 s
of a bare ``python -c pass``).

Usage::

    /work/venv/bin/python bench/import_time.py            # median of 15 runs of each command
    /work/venv/bin/python bench/import_time.py --runs 31

Each command runs in a fresh interpreter (``sys.executable``, same environment), alternating
between the commands so that machine load hits all of them alike; the table gives the median wall
time, the difference to ``python -c pass`` and whether it is within the target.
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import time

TARGET_SECONDS = 0.3

COMMANDS: dict[str, list[str]] = {
    "python -c pass": [sys.executable, "-c", "pass"],
    "import ragmeter": [sys.executable, "-c", "import ragmeter"],
    "ragmeter --help": [sys.executable, "-c", "from ragmeter.cli import main; main(['--help'])"],
}


def time_once(argv: list[str]) -> float:
    """Wall seconds of one run of ``argv`` (its output discarded; a failure raises)."""
    start = time.perf_counter()
    subprocess.run(argv, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    return time.perf_counter() - start


def measure(runs: int) -> dict[str, float]:
    """Median wall seconds of each command over ``runs`` interleaved runs (one warm-up each)."""
    times: dict[str, list[float]] = {name: [] for name in COMMANDS}
    for argv in COMMANDS.values():
        time_once(argv)
    for _ in range(runs):
        for name, argv in COMMANDS.items():
            times[name].append(time_once(argv))
    return {name: statistics.median(t) for name, t in times.items()}


def main() -> None:
    """Print the table."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=15)
    args = parser.parse_args()
    med = measure(args.runs)
    base = med["python -c pass"]
    print(f"{'command':<18} {'median s':>9} {'minus bare':>11}  within {TARGET_SECONDS} s")
    for name, t in med.items():
        diff = t - base
        ok = "-" if name == "python -c pass" else ("yes" if diff <= TARGET_SECONDS else "NO")
        print(f"{name:<18} {t:>9.3f} {diff:>+11.3f}  {ok}")
    print(f"(median of {args.runs} runs each, {sys.executable})")


if __name__ == "__main__":
    main()
