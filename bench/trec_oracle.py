"""``ragmeter trec`` against a real trec_eval binary (a script, not a test: no binary ships here).

    python bench/trec_oracle.py --binary /path/to/trec_eval [--seeds 30]

trec_eval has no Debian or PyPI package, so the test suite relies on the vendored expected outputs
(tests/trec/test_conformance.py) and the pytrec_eval cross-check; this script is the extra oracle for
whoever has a trec_eval 10.0 build. Seeded random qrels and runs (ties, graded grades up to 12, negative grades,
documents outside the qrels, queries missing on both sides) go through both programs with ``-c`` and
``-J``, ``-l2``, ``-M5``, gain pairs, rbp's ``p``, utility with ``-N``, unsorted 11pt_avg fractions and
relstring; the outputs must be identical byte for byte.
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import tempfile
from pathlib import Path

import numpy as np
from click.testing import CliRunner

from ragmeter.cli import main

FLAGS = [
    ["-q", "-m", "all_trec", "-c"],
    ["-q", "-m", "all_trec", "-c", "-J"],
    ["-q", "-m", "all_trec", "-c", "-l2"],
    ["-q", "-m", "all_trec", "-c", "-M5"],
    ["-q", "-c"],
    ["-q", "-c", "-m", "ndcg.1=0.5,2=4", "-m", "G.0=1,3=2", "-m", "Rndcg.2=1.5", "-m", "ndcg_rel.1=2", "-m",
     "rbp.p=0.5,2=3", "-m", "rbp_resid.p=0.7", "-m", "utility.2,-1,0.5,0", "-m", "11pt_avg..9,.1,.5", "-m",
     "relstring.4", "-N", "1000"],
]


def _write(seed: int, directory) -> tuple[str, str]:
    rng = np.random.default_rng(seed)
    qrels, run = [], []
    for i in range(int(rng.integers(1, 6))):
        pool = [f"d{j}" for j in range(int(rng.integers(1, 15)))]
        if rng.random() < 0.8 or i == 0:
            docs = rng.choice([*pool, "u1"], size=int(rng.integers(1, len(pool) + 1)), replace=False)
            grades = rng.choice([-1, 0, 0, 1, 2, 3, 12], size=len(docs))
            grades[0] = max(grades[0], 0) if grades.max() < 0 else grades[0]
            qrels += [f"q{i} 0 {d} {g}" for d, g in zip(docs, grades, strict=True)]
        if rng.random() < 0.8 or i == 0:
            docs = rng.choice(pool, size=int(rng.integers(1, len(pool) + 1)), replace=False)
            scores = rng.integers(0, 3, size=len(docs)) if rng.random() < 0.5 else rng.normal(size=len(docs)).round(3)
            run += [f"q{i} Q0 {d} 1 {s} tag{seed}" for d, s in zip(docs, scores, strict=True)]
    qp, rp = directory / f"q{seed}", directory / f"r{seed}"
    qp.write_text("\n".join(qrels) + "\n")
    rp.write_text("\n".join(run) + "\n")
    return str(qp), str(rp)


def compare(binary: str, seed: int, directory: Path) -> list[tuple[str, bool]]:
    """Run one seeded data set through both programs under every flag set; (flags, identical) each."""
    qrels, run = _write(seed, directory)
    out = []
    for flags in FLAGS:
        expected = subprocess.run([binary, *flags, qrels, run], capture_output=True, text=True, timeout=60)
        if expected.returncode != 0:
            raise SystemExit(f"trec_eval failed on seed {seed} {flags}: {expected.stderr}")
        got = CliRunner().invoke(main, ["trec", *flags, qrels, run], catch_exceptions=False)
        out.append((" ".join(flags), got.output == expected.stdout))
    return out


def main_() -> None:
    """Print, per flag set, how many seeded data sets gave byte-identical output."""
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--binary", default=os.environ.get("RAGMETER_TREC_EVAL") or shutil.which("trec_eval"))
    ap.add_argument("--seeds", type=int, default=30)
    args = ap.parse_args()
    if not args.binary:
        raise SystemExit("no trec_eval binary: pass --binary or set RAGMETER_TREC_EVAL")
    same: dict[str, int] = {}
    with tempfile.TemporaryDirectory() as tmp:
        for seed in range(args.seeds):
            for flags, ok in compare(args.binary, seed, Path(tmp)):
                same[flags] = same.get(flags, 0) + ok
    print(f"| flags | identical of {args.seeds} |\n|---|---:|")
    for flags, n in same.items():
        print(f"| `{flags[:60]}` | {n} |")
    if any(n != args.seeds for n in same.values()):
        raise SystemExit(1)


if __name__ == "__main__":
    main_()
