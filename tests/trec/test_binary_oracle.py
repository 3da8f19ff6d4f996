"""``ragmeter trec`` against the real trec_eval binary, when one is available.

Set ``RAGMETER_TREC_EVAL`` to a trec_eval 10.0 executable (or put ``trec_eval`` on PATH); without one
these tests are skipped -- the vendored expected outputs (test_conformance.py) and the pytrec_eval
cross-check run everywhere. Seeded random qrels and runs (ties, graded grades up to 12, negative grades,
documents outside the qrels, queries missing on both sides) go through both programs with ``-c`` and
``-J``, ``-l2``, ``-M5``, gain pairs, rbp's ``p``, utility with ``-N``, unsorted 11pt_avg fractions and
relstring; the outputs must be identical byte for byte.
"""

from __future__ import annotations

import os
import shutil
import subprocess

import numpy as np
import pytest
from click.testing import CliRunner

from ragmeter.cli import main

BINARY = os.environ.get("RAGMETER_TREC_EVAL") or shutil.which("trec_eval")
pytestmark = pytest.mark.skipif(not BINARY, reason="no trec_eval binary (set RAGMETER_TREC_EVAL)")

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


@pytest.mark.parametrize("seed", range(30))
def test_identical_to_trec_eval_binary(seed, tmp_path):
    qrels, run = _write(seed, tmp_path)
    compared = 0
    for flags in FLAGS:
        expected = subprocess.run([BINARY, *flags, qrels, run], capture_output=True, text=True, timeout=60)
        assert expected.returncode == 0, expected.stderr
        got = CliRunner().invoke(main, ["trec", *flags, qrels, run], catch_exceptions=False)
        assert got.output == expected.stdout, flags
        compared += 1
    assert compared == len(FLAGS)
