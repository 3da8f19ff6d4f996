"""trec_eval conformance: ``ragmeter trec`` reproduces trec_eval 10.0's own expected outputs.

The data and expected outputs live in ``<repo>/../shared/conformance/trec_eval`` (see its README for
the trec_eval command behind each file). For every measure ragmeter supports, every line of the
expected output -- per-query and ``all`` -- must appear, identical and in the same order; lines of
measures ragmeter does not compute (bpref, iprec_at_recall, ...) are left out of the comparison.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner

from ragmeter.cli import main

DATA = Path(__file__).resolve().parents[2].parent / "shared" / "conformance" / "trec_eval"

#: Measures whose lines are compared (everything ragmeter computes); must stay non-trivial.
SUPPORTED_PREFIXES = ("runid", "num_q", "num_ret", "num_rel", "num_rel_ret", "map", "Rprec", "recip_rank",
                      "P_", "recall_", "ndcg", "ndcg_cut_", "map_cut_", "success_")

# expected file -> ragmeter trec arguments (the trec_eval command of the README, supported part)
CASES = {
    "out.test": ["qrels.test", "results.test"],
    "out.test.aq": ["-m", "all_trec", "-q", "qrels.test", "results.test"],
    "out.test.aqc": ["-m", "all_trec", "-q", "-c", "qrels.test", "results.trunc"],
    "out.test.aqcM": ["-m", "all_trec", "-q", "-c", "-M100", "qrels.test", "results.trunc"],
    "out.test.aql": ["-m", "all_trec", "-q", "-l2", "qrels.rel_level", "results.test"],
    "out.test.meas_params": ["-q", "-m", "P.5,7,3", "-m", "recall.20,2000", "-m", "ndcg_cut.10,20,23.4",
                             "-msuccess.2,5,20", "qrels.test", "results.test"],
}


def _supported(line: str) -> bool:
    name = line.split("\t")[0].strip()
    return any(name == p or (p.endswith("_") and name.startswith(p) and name[len(p):].isdigit())
               for p in SUPPORTED_PREFIXES)


def test_conformance_data_is_present():
    assert DATA.is_dir(), f"trec_eval conformance data missing: expected {DATA} (a checkout of shared/ beside the repo)"
    for name in CASES:
        assert (DATA / name).is_file(), f"missing expected output {name}"


@pytest.mark.parametrize("expected_file", list(CASES))
def test_reproduces_trec_eval_output(expected_file):
    assert DATA.is_dir(), f"trec_eval conformance data missing: expected {DATA}"
    args = [str(DATA / a) if (DATA / a).is_file() else a for a in CASES[expected_file]]
    result = CliRunner().invoke(main, ["trec", *args], catch_exceptions=False)
    assert result.exit_code == 0, result.output
    expected = [ln for ln in (DATA / expected_file).read_text().splitlines() if _supported(ln)]
    got = result.output.splitlines()
    measures = sorted({ln.split("\t")[0].strip() for ln in expected})
    # the supported subset is non-trivial: binary, graded, cutoff and count measures are all checked
    assert len(expected) >= 15, measures
    for must in ("map", "P_5", "recip_rank", "num_rel_ret"):
        assert must in measures or expected_file == "out.test.meas_params"
    if expected_file != "out.test":
        assert {"ndcg_cut_10", "success_5"} <= set(measures)
    assert got == expected


def test_checked_measures_cover_every_kernel():
    text = (DATA / "out.test.aq").read_text()
    names = {ln.split("\t")[0].strip() for ln in text.splitlines() if _supported(ln)}
    assert {"map", "map_cut_100", "Rprec", "recip_rank", "P_10", "recall_100", "ndcg", "ndcg_cut_10",
            "success_5", "num_q", "num_ret", "num_rel", "num_rel_ret", "runid"} <= names
    assert len(names) == 48
