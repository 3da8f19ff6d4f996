"""Peak memory and size of the HTML report on a large retrieval-only run (a script, not a timed test).

    python bench/report_memory.py                 # 100,000 rows
    python bench/report_memory.py --rows 20000    # a quick run
    python bench/report_memory.py --compare       # comparison mode: report BASE RUN, compare BASE RUN

Generates ``--rows`` seeded retrieval-only samples (a query, 5 retrieved contexts with ids and a
short text, 1-2 labelled relevant ids) into a JSONL file once, then runs ``ragmeter eval`` on it
twice in subprocesses, ``--no-report`` and ``--report``, and prints each run's wall time, peak
RSS (``ru_maxrss`` of the child) and the size of ``report.html``, as a Markdown table. The ratio
of the two peaks is what docs/report.md promises stays within 1.2.

With ``--compare``, a second data file (seed 1: other retrieved contexts for the same queries) is
evaluated too (``--no-report``; both runs are kept under ``--data-dir`` and reused), and the
table gets the peak RSS of ``ragmeter report RUN``, ``ragmeter report BASE RUN`` and ``ragmeter
compare BASE RUN`` against the run's own ``eval --no-report``. Run it with ``PYTHONPATH`` pointing
at another source tree to measure that tree (the before/after of docs/report.md).
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

ROOT = Path(__file__).resolve().parents[1]


def make_data(path: Path, rows: int, *, seed: int = 0, k: int = 5, docs: int = 2000) -> Path:
    """Write ``rows`` seeded retrieval-only samples to ``path`` (skipped when it exists)."""
    import numpy as np

    if path.exists():
        return path
    rng = np.random.default_rng(seed)
    tmp = path.with_suffix(".tmp")
    with open(tmp, "w", encoding="utf-8") as fh:
        for i in range(rows):
            ctx = rng.integers(0, docs, size=k)
            n_rel = int(rng.integers(1, 3))
            rel = [f"d{c}" for c in ctx[:n_rel] if rng.random() < 0.6] or [f"d{int(rng.integers(0, docs))}"]
            row = {"id": f"q{i}", "query": f"question {i} about topic {i % 97}",
                   "contexts": [{"id": f"d{c}", "text": f"passage d{c} about topic {c % 97}"} for c in ctx],
                   "relevant": rel}
            fh.write(json.dumps(row) + "\n")
    tmp.rename(path)
    return path


#: The child: ``ragmeter`` itself, printing its own peak RSS (``ru_maxrss``, KiB) when it exits.
_CHILD = """
import resource, sys
from ragmeter.cli import main
try:
    main(prog_name="ragmeter")
finally:
    print("MAXRSS", resource.getrusage(resource.RUSAGE_SELF).ru_maxrss, file=sys.stderr)
"""


def run_eval(data: Path, out: Path, report: bool) -> dict[str, float]:
    """Run ``ragmeter eval`` in a child process; its wall time, peak RSS and report size."""
    return run_child(["eval", str(data), "-o", str(out), "-q", "--report" if report else "--no-report"],
                     out / "report.html")


def run_child(args: list[str], html: Path | None = None) -> dict[str, float]:
    """Run ``ragmeter ARGS`` in a child process; its wall time, peak RSS and the size of ``html``."""
    cmd = [sys.executable, "-c", _CHILD, *args]
    env = {**os.environ, "PYTHONPATH": os.environ.get("PYTHONPATH", str(ROOT / "src"))}
    t0 = time.perf_counter()
    proc = subprocess.run(cmd, env=env, capture_output=True, text=True)
    wall = time.perf_counter() - t0
    if proc.returncode not in (0, 1):
        raise SystemExit(f"{' '.join(cmd)} failed ({proc.returncode}):\n{proc.stderr[-2000:]}")
    peak = [int(line.split()[1]) for line in proc.stderr.splitlines() if line.startswith("MAXRSS ")][-1]
    return {"wall_s": wall, "peak_mb": peak / 1024,
            "report_mb": html.stat().st_size / 1e6 if html is not None and html.exists() else 0.0}


def compare_mode(rows: int, data_dir: Path) -> dict[str, dict[str, float]]:
    """The comparison measurements (see the module docstring), by row label."""
    base_data = make_data(data_dir / f"retrieval_{rows}.jsonl", rows)
    run_data = make_data(data_dir / f"retrieval_{rows}_seed1.jsonl", rows, seed=1)
    base, run = data_dir / f"base_{rows}", data_dir / f"run_{rows}"
    results = {}
    for data, out in ((base_data, base), (run_data, run)):
        measured = run_eval(data, out, report=False)
        if out == run:
            results["eval RUN --no-report"] = measured
    with tempfile.TemporaryDirectory() as tmp:
        one, two = Path(tmp) / "one.html", Path(tmp) / "two.html"
        results["report RUN"] = run_child(["report", str(run), "-o", str(one)], one)
        results["report BASE RUN"] = run_child(["report", str(base), str(run), "-o", str(two)], two)
        results["compare BASE RUN"] = run_child(["compare", str(base), str(run), "--format", "json"])
    return results


def main() -> None:
    """Parse the options, run both measurements, print the table."""
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rows", type=int, default=100_000)
    ap.add_argument("--data-dir", type=Path, default=Path(tempfile.gettempdir()) / "ragmeter-bench")
    ap.add_argument("--compare", action="store_true", help="measure the comparison (report BASE RUN, compare)")
    args = ap.parse_args()
    args.data_dir.mkdir(parents=True, exist_ok=True)
    if args.compare:
        import ragmeter

        table = compare_mode(args.rows, args.data_dir)
        print(f"ragmeter from {Path(ragmeter.__file__).parent}; two runs of {args.rows:,} retrieval-only rows\n")
        print("| command | wall s | peak RSS MB | report.html MB | peak / eval |\n|---|---:|---:|---:|---:|")
        ref = table["eval RUN --no-report"]["peak_mb"]
        for name, r in table.items():
            print(f"| {name} | {r['wall_s']:.1f} | {r['peak_mb']:.0f} | {r['report_mb']:.1f} | "
                  f"{r['peak_mb'] / ref:.2f} |")
        return
    data = make_data(args.data_dir / f"retrieval_{args.rows}.jsonl", args.rows)
    results = {}
    with tempfile.TemporaryDirectory() as tmp:
        for report in (False, True):
            results[report] = run_eval(data, Path(tmp) / f"out-{report}", report)
    import ragmeter

    print(f"ragmeter from {Path(ragmeter.__file__).parent}; {args.rows:,} retrieval-only rows ({data})\n")
    print("| run | wall s | peak RSS MB | report.html MB |\n|---|---:|---:|---:|")
    for report, r in results.items():
        print(f"| {'--report' if report else '--no-report'} | {r['wall_s']:.1f} | {r['peak_mb']:.0f} | "
              f"{r['report_mb']:.1f} |")
    ratio = results[True]["peak_mb"] / results[False]["peak_mb"]
    print(f"\npeak RSS ratio report / no report: {ratio:.2f}")


if __name__ == "__main__":
    main()
