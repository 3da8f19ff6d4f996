"""The default ``bert`` embedder (numpy) against sentence-transformers (torch) on the same model, in one run.

Runs ``python -m ragmeter.embedders.bench SPEC -n N --words W`` for ``bert:all-MiniLM-L6-v2`` and
``st:all-MiniLM-L6-v2`` alternately, each in a fresh process (so neither's threads, imports or caches
touch the other's), ``--runs`` times per text length, and prints each run's wall clock, CPU time and
load time, then the ratio of the medians: ``bert``'s wall-clock time per text over ``st``'s (below 1:
numpy is faster). Needs the ``st`` extra (torch, sentence-transformers) beside ``[embeddings]``. Run
it on an idle machine: both use every core.

    python bench/embedders.py                              # 3 runs each, 1,000 texts of ~30 and ~120 words
    python bench/embedders.py --runs 5 --words 30 --json out.json
"""

from __future__ import annotations

import argparse
import json
import os
import re
import statistics
import subprocess
import sys
from pathlib import Path

SPECS = ("bert:all-MiniLM-L6-v2", "st:all-MiniLM-L6-v2")
SRC = Path(__file__).resolve().parents[1] / "src"
_EMBED = re.compile(r"^embed .*: ([\d.]+) s .*CPU time ([\d.]+) s$", re.M)
_LOAD = re.compile(r"^load +([\d.]+) s", re.M)


def one_run(spec: str, n: int, words: int) -> dict[str, float]:
    """Wall clock, CPU time and load time of one ``ragmeter.embedders.bench`` process."""
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [str(SRC), os.environ.get("PYTHONPATH")]))}
    proc = subprocess.run([sys.executable, "-m", "ragmeter.embedders.bench", spec, "-n", str(n), "--words", str(words)],
                          capture_output=True, text=True, env=env, check=False)
    embed, load = _EMBED.search(proc.stdout), _LOAD.search(proc.stdout)
    if proc.returncode != 0 or embed is None or load is None:
        raise SystemExit(f"{spec}: the bench failed (exit {proc.returncode}):\n{proc.stdout}\n{proc.stderr}")
    return {"wall_s": float(embed[1]), "cpu_s": float(embed[2]), "load_s": float(load[1])}


def main(argv: list[str] | None = None) -> None:
    """Run the comparison (see the module docstring)."""
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("-n", type=int, default=1000, help="texts per run (default 1000)")
    ap.add_argument("--words", default="30,120", help="mean words per text, comma-separated (default 30,120)")
    ap.add_argument("--json", type=Path, default=None, help="also write the runs and ratios here")
    args = ap.parse_args(argv)
    out: dict[str, object] = {"n": args.n, "runs": args.runs, "specs": list(SPECS), "by_words": {}}
    print(f"{'words':>5}  {'embedder':<24} {'wall s (each run)':<24} {'CPU s (median)':>14} {'load s':>7}")
    for words in (int(w) for w in args.words.split(",")):
        runs: dict[str, list[dict[str, float]]] = {s: [] for s in SPECS}
        for _ in range(args.runs):
            for spec in SPECS:
                runs[spec].append(one_run(spec, args.n, words))
        med = {s: {k: statistics.median(r[k] for r in runs[s]) for k in ("wall_s", "cpu_s", "load_s")} for s in SPECS}
        for spec in SPECS:
            walls = ", ".join(f"{r['wall_s']:.2f}" for r in runs[spec])
            print(f"{words:>5}  {spec:<24} {walls:<24} {med[spec]['cpu_s']:>14.2f} {med[spec]['load_s']:>7.2f}")
        ratio = med[SPECS[0]]["wall_s"] / med[SPECS[1]]["wall_s"]
        print(f"{words:>5}  bert / st, median wall clock per text: {ratio:.2f}x")
        out["by_words"][str(words)] = {"runs": runs, "median": med, "ratio_bert_over_st": round(ratio, 3)}  # type: ignore[index]
    if args.json:
        args.json.write_text(json.dumps(out, indent=2, allow_nan=False) + "\n")


if __name__ == "__main__":
    main()
