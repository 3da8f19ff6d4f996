"""trec_eval conformance: ``ragmeter trec`` reproduces trec_eval 10.0's own expected outputs byte for byte.

The data and expected outputs are vendored from trec_eval's ``test/`` folder in ``tests/trec/data/trec_eval``
(NIST's notice in LICENSE.md beside them; the README gives the trec_eval command behind each file). Each test
runs the same command through ``ragmeter trec`` and compares the whole output -- every line, every measure,
in order -- with the expected file.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner

from ragmeter.cli import main

DATA = Path(__file__).resolve().parent / "data" / "trec_eval"

# expected file -> the trec_eval command line of trec_eval's Makefile (README.md), minus "trec_eval"
CASES = {
    "out.test": ["qrels.test", "results.test"],
    "out.test.aq": ["-m", "all_trec", "-q", "qrels.test", "results.test"],
    "out.test.aqc": ["-m", "all_trec", "-q", "-c", "qrels.test", "results.trunc"],
    "out.test.aqcM": ["-m", "all_trec", "-q", "-c", "-M100", "qrels.test", "results.trunc"],
    "out.test.aql": ["-m", "all_trec", "-mrelstring.20", "-q", "-l2", "qrels.rel_level", "results.test"],
    "out.test.meas_params": ["-q", "-miprec_at_recall..10,.20,.25,.75,.50", "-m", "P.5,7,3", "-m", "recall.20,2000",
                             "-m", "Rprec_mult.5.0,0.2,0.35", "-mutility.2,-1,0,0", "-m", "11pt_avg..25,.5,.75",
                             "-mndcg.1=3,2=9,4=4.5", "-mndcg_cut.10,20,23.4", "-msuccess.2,5,20", "qrels.test",
                             "results.test"],
}


def test_vendored_data_carries_nists_notice():
    notice = (DATA / "LICENSE.md").read_text()
    assert "NIST" in notice or "National Institute of Standards" in notice
    for name in CASES:
        assert (DATA / name).is_file(), f"missing expected output {name}"


@pytest.mark.parametrize("expected_file", list(CASES))
def test_reproduces_trec_eval_output_byte_for_byte(expected_file):
    args = [str(DATA / a) if (DATA / a).is_file() else a for a in CASES[expected_file]]
    result = CliRunner().invoke(main, ["trec", *args], catch_exceptions=False)
    assert result.exit_code == 0, result.output
    expected = (DATA / expected_file).read_text()
    assert len(expected.splitlines()) >= 30
    assert result.output == expected


def test_all_trec_output_covers_every_all_trec_measure():
    from ragmeter.trec.measures import NICKNAMES

    names = {ln.split("\t")[0].strip() for ln in (DATA / "out.test.aq").read_text().splitlines()}
    bases = {n for n in NICKNAMES["all_trec"]}
    for base in bases:
        assert any(n == base or n.startswith(base + "_") for n in names), base
