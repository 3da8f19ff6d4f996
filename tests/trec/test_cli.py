"""``ragmeter trec`` through the installed entry point, on real files."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest
from click.testing import CliRunner

from ragmeter.cli import main
from ragmeter.trec import Qrels, Run

QRELS = {"q1": {"a": 2, "b": 0, "c": 1}, "q2": {"x": 1}, "q3": {"y": 1}}
RUN = {"q1": {"a": 0.5, "b": 0.9, "c": 0.5}, "q2": {"x": 1.0, "w": 2.0}}


@dataclass
class Out:
    returncode: int
    stdout: str
    stderr: str


def ragmeter(*args: str) -> Out:
    """Run the command in-process with click's runner (the same ``main`` the entry point calls)."""
    result = CliRunner().invoke(main, list(args))
    return Out(result.exit_code, result.stdout, result.stderr)


def test_installed_entry_point(files):
    exe = shutil.which("ragmeter", path=str(Path(sys.executable).parent))
    cmd = [exe] if exe else [sys.executable, "-c", "from ragmeter.cli import main; main()"]
    out = subprocess.run([*cmd, "trec", "-m", "P.2", *files], capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr
    assert out.stdout == "P_2                   \tall\t0.5000\n"
    out = subprocess.run([*cmd, "trec", "-m", "P.2", files[1], files[0]], capture_output=True, text=True,
                         timeout=300)
    assert out.returncode == 2 and "ragmeter: error:" in out.stderr  # the run given as qrels: bad line


@pytest.fixture
def files(tmp_path):
    Qrels.from_dict(QRELS).save(tmp_path / "qrels")
    Run.from_dict(RUN, name="sys1").save(tmp_path / "run.gz")
    return str(tmp_path / "qrels"), str(tmp_path / "run.gz")


def test_text_output_like_trec_eval(files):
    # q1 ranking: b (0), c (1), a (2) -> relevant at 2 and 3; q2: w, x -> relevant at 2; q3 missing
    out = ragmeter("trec", "-q", "-m", "recip_rank", "-m", "P.2", "-m", "num_q", *files)
    assert out.returncode == 0, out.stderr
    assert out.stdout.splitlines() == [
        "recip_rank            \tq1\t0.5000",
        "P_2                   \tq1\t0.5000",
        "recip_rank            \tq2\t0.5000",
        "P_2                   \tq2\t0.5000",
        "num_q                 \tall\t2",
        "recip_rank            \tall\t0.5000",
        "P_2                   \tall\t0.5000",
    ]


def test_complete_flag_counts_missing_queries_as_zero(files):
    out = ragmeter("trec", "-c", "-m", "recip_rank", "-m", "num_q", "-m", "num_rel", *files)
    assert out.returncode == 0, out.stderr
    assert out.stdout.splitlines() == [
        "num_q                 \tall\t3",
        "num_rel               \tall\t4",
        "recip_rank            \tall\t0.3333",
    ]


def test_level_cut_and_json(files):
    out = ragmeter("trec", "-l2", "-M1", "-q", "--format", "json", "-m", "num_rel", "-m", "P_1", *files)
    assert out.returncode == 0, out.stderr
    doc = json.loads(out.stdout)
    assert doc["runid"] == "sys1"
    assert doc["all"] == {"num_rel": 1, "P_1": 0.0}  # q2's only judgement (1) is below level 2
    assert doc["per_query"]["num_rel"] == {"q1": 1, "q2": 0}


def test_default_is_the_official_subset(files):
    out = ragmeter("trec", *files)
    names = [line.split("\t")[0].strip() for line in out.stdout.splitlines()]
    assert names[:10] == ["runid", "num_q", "num_ret", "num_rel", "num_rel_ret", "map", "gm_map", "Rprec", "bpref",
                          "recip_rank"]
    assert names[10:21] == [f"iprec_at_recall_{x / 10:3.2f}" for x in range(11)]
    assert names[21:] == [f"P_{k}" for k in (5, 10, 15, 20, 30, 100, 200, 500, 1000)]


def test_input_errors_exit_2(files, tmp_path):
    bad = tmp_path / "bad.run"
    bad.write_text("q1 Q0 a 1 0.5 t\nq1 Q0 b 2\n")
    out = ragmeter("trec", files[0], str(bad))
    assert out.returncode == 2
    assert f"{bad}:2: field 'score'" in out.stderr or f"{bad}:2: field 'tag'" in out.stderr
    out = ragmeter("trec", "-m", "ndcg_cutt.10", *files)
    assert out.returncode == 2 and "unknown measure" in out.stderr
    out = ragmeter("trec", files[0], str(tmp_path / "missing.run"))
    assert out.returncode == 2 and "no such file" in out.stderr


def test_flags_n_j_r_and_new_measures(files):
    # q1 ranking: b (judged 0), c (1), a (2); q2: w (not judged), x (1)
    out = ragmeter("trec", "-q", "-n", "-m", "bpref", "-m", "num_ret", *files)
    assert out.returncode == 0, out.stderr
    assert out.stdout.splitlines() == [
        "num_ret               \tq1\t3",
        "bpref                 \tq1\t0.0000",  # each relevant has the one judged non-relevant above it: 1 - 1/1
        "num_ret               \tq2\t2",
        "bpref                 \tq2\t1.0000",  # no judged non-relevant document at all
    ]
    out = ragmeter("trec", "-J", "-m", "num_ret", "-m", "recip_rank", *files)
    assert out.stdout.splitlines() == ["num_ret               \tall\t4",  # w dropped
                                       "recip_rank            \tall\t0.7500"]  # q1 1/2, q2 1/1
    out = ragmeter("trec", "-R", "prefs", *files)
    assert out.returncode == 2 and "not supported" in out.stderr
    out = ragmeter("trec", "-m", "bpreff", *files)
    assert out.returncode == 2 and "bpreff" in out.stderr


def test_metrics_lists_trec_measures():
    out = ragmeter("metrics", "--trec", "--format", "json")
    assert out.returncode == 0, out.stderr
    rows = {r["trec_eval"]: r for r in json.loads(out.stdout)}
    for name in ("bpref", "iprec_at_recall", "gm_map", "rbp", "unj", "Rndcg", "set_F", "relstring"):
        assert name in rows, name
    assert "mrr" in rows["recip_rank"]["ragmeter"] and "map@k" in rows["map_cut"]["ragmeter"]
    piped = ragmeter("metrics", "--trec")  # a pipe: Markdown, the measures as table rows
    assert "| `recip_rank` |" in piped.stdout
