"""Rank fusion: hand-computed RRF / CombSUM / CombMNZ, TREC I/O, and the CLI."""

from __future__ import annotations

import pytest
from click.testing import CliRunner

from ragmeter.cli import main
from ragmeter.errors import InputError, InvalidParameterError
from ragmeter.stats import fuse, read_trec_run, write_trec_run
from ragmeter.stats.fusion import ranks

A = {"q1": {"d1": 3.0, "d2": 2.0, "d3": 1.0}, "q2": {"x": 1.0}}
B = {"q1": {"d2": 9.0, "d4": 5.0, "d1": 1.0}}


def test_ranks_follow_trec_eval_ties():
    # equal scores: docid descending first (trec_eval)
    assert ranks({"a": 1.0, "b": 1.0, "c": 2.0}) == {"c": 1, "b": 2, "a": 3}


def test_rrf_hand_computed():
    f = fuse([A, B], k0=60)
    # d1: 1/61 + 1/63; d2: 1/62 + 1/61; d3: 1/63; d4: 1/62
    assert f["q1"]["d1"] == pytest.approx(1 / 61 + 1 / 63)
    assert f["q1"]["d2"] == pytest.approx(1 / 62 + 1 / 61)
    assert f["q1"]["d3"] == pytest.approx(1 / 63)
    assert f["q1"]["d4"] == pytest.approx(1 / 62)
    assert list(f["q1"]) == ["d2", "d1", "d4", "d3"]
    assert f["q2"] == {"x": pytest.approx(1 / 61)}  # a query only one run has


def test_combsum_and_combmnz_hand_computed():
    # min-max: A q1: d1 1, d2 .5, d3 0; B q1: d2 (9-1)/8 = 1, d4 (5-1)/8 = .5, d1 0
    s = fuse([A, B], method="combsum")
    assert s["q1"] == pytest.approx({"d1": 1.0, "d2": 1.5, "d3": 0.0, "d4": 0.5})
    m = fuse([A, B], method="combmnz")
    # times the number of runs retrieving the doc: d1 2, d2 2, d3 1, d4 1
    assert m["q1"] == pytest.approx({"d1": 2.0, "d2": 3.0, "d3": 0.0, "d4": 0.5})
    assert s["q2"] == {"x": 1.0}  # one document: max = min -> 1.0


def test_weights_and_depth():
    f = fuse([A, B], weights=[2, 0], depth=2)
    assert f["q1"] == pytest.approx({"d1": 2 / 61, "d2": 2 / 62})
    with pytest.raises(InvalidParameterError, match="weights: expected 2 non-negative"):
        fuse([A, B], weights=[1])
    with pytest.raises(InvalidParameterError, match="k0: expected a positive number"):
        fuse([A, B], k0=0)
    with pytest.raises(InvalidParameterError, match="method: expected one of"):
        fuse([A, B], method="borda")


def test_trec_round_trip_and_errors(tmp_path):
    p = tmp_path / "a.run"
    text = write_trec_run(A, p, tag="sys")
    assert text.splitlines()[0] == "q1 Q0 d1 1 3 sys"
    assert read_trec_run(p) == A
    bad = tmp_path / "bad.run"
    bad.write_text("q1 Q0 d1 1 3 t\nq1 Q0 d1 2 2 t\n")
    with pytest.raises(InputError, match=r"bad.run:2: document 'd1' appears twice"):
        read_trec_run(bad)
    bad.write_text("q1 Q0 d1 1\n")
    with pytest.raises(InputError, match=r"bad.run:1: expected 'qid Q0 docid rank score tag'"):
        read_trec_run(bad)
    bad.write_text("q1 Q0 d1 1 high t\n")
    with pytest.raises(InputError, match="field 'score'"):
        read_trec_run(bad)


def test_cli(tmp_path):
    pa, pb, out = tmp_path / "a.run", tmp_path / "b.run", tmp_path / "fused.run"
    write_trec_run(A, pa)
    write_trec_run(B, pb)
    res = CliRunner().invoke(main, ["fuse", str(pa), str(pb), "-o", str(out)], catch_exceptions=False)
    assert res.exit_code == 0, res.output
    lines = out.read_text().splitlines()
    assert lines[0].split() == ["q1", "Q0", "d2", "1", repr(1 / 62 + 1 / 61), "ragmeter-rrf"]
    assert len(lines) == 5
    res = CliRunner().invoke(main, ["fuse", str(pa), str(pb), "-o", str(out), "--method", "combmnz",
                                    "--tag", "mnz"], catch_exceptions=False)
    assert out.read_text().splitlines()[0] == "q1 Q0 d2 1 3 mnz"
    one = CliRunner().invoke(main, ["fuse", str(pa), "-o", str(out)])
    assert one.exit_code == 2 and "at least two run files" in one.output


def test_installed_console_script(tmp_path):
    import shutil
    import subprocess
    import sys
    from pathlib import Path

    exe = Path(sys.executable).parent / "ragmeter"
    if not exe.exists():
        exe = shutil.which("ragmeter")
        if exe is None:
            pytest.skip("the ragmeter console script is not installed")
    pa, pb, out = tmp_path / "a.run", tmp_path / "b.run", tmp_path / "fused.run"
    write_trec_run(A, pa)
    write_trec_run(B, pb)
    proc = subprocess.run([str(exe), "fuse", str(pa), str(pb), "-o", str(out), "--method", "combsum"],
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr
    assert out.read_text().splitlines()[0] == "q1 Q0 d2 1 1.5 ragmeter-combsum"


def _file_ranks(text: str) -> dict[str, list[str]]:
    out: dict[str, list[str]] = {}
    for line in text.splitlines():
        q, _, doc, rank, _, _ = line.split()
        out.setdefault(q, []).append(doc)
        assert int(rank) == len(out[q])
    return out


def test_fused_ties_are_written_in_trec_eval_order(tmp_path):
    # "rel" and "zzz" swap ranks between the runs: equal RRF scores. trec_eval ranks the tie by docid
    # descending (zzz first), so the file must too; before, the file put rel first and trec read RR = 0.5
    a = {"q": {"rel": 2.0, "zzz": 1.0}}
    b = {"q": {"zzz": 2.0, "rel": 1.0}}
    fused = fuse([a, b])
    assert fused["q"]["rel"] == fused["q"]["zzz"]
    assert list(fused["q"]) == ["zzz", "rel"]
    path = tmp_path / "fused.run"
    text = write_trec_run(fused, path)
    assert _file_ranks(text) == {"q": ["zzz", "rel"]}
    qrels = tmp_path / "qrels"
    qrels.write_text("q 0 rel 1\n")
    out = CliRunner().invoke(main, ["trec", "-m", "recip_rank", str(qrels), str(path)], catch_exceptions=False)
    assert out.output == "recip_rank            \tall\t0.5000\n"  # rank 2 in the file, rank 2 for trec


def test_depth_cut_keeps_trec_eval_order():
    f = fuse([{"q": {"a": 1.0, "b": 1.0, "c": 1.0}}], depth=2)
    assert list(f["q"]) == ["c", "b"]


def test_written_scores_are_exact_so_ranks_agree_with_trec(tmp_path):
    from ragmeter.trec import Run

    # distinct scores equal to 10 significant digits: printed with %.10g they became a tie, re-ranked by docid
    run = {"q": {"a": 0.12345678901234, "b": 0.12345678901233, "c": 1.0}}
    path = tmp_path / "x.run"
    text = write_trec_run(run, path)
    assert _file_ranks(text) == {"q": ["c", "a", "b"]}
    assert read_trec_run(path) == run  # every score reads back exactly
    parsed = Run.from_file(path)
    order = parsed.ranked_order()
    assert parsed.docids[order].tolist() == ["c", "a", "b"]  # ragmeter trec's (= trec_eval's) ranking
