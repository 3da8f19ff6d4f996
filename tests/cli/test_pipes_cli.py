"""Issue #14 §1 for the commands besides ``eval`` and ``metrics``: ``compare``, ``diagnose``,
``calibrate`` and ``report`` write stdout as ``eval`` does (:mod:`ragmeter.cli._output`): Markdown
when stdout is a pipe, ``--format`` to choose, and a reader that stops early (``| head -1``) ends
the output with exit 0 and no traceback. Each runs as a real subprocess writing into a real
4 KiB pipe read by ``head -1``."""

from __future__ import annotations

import json
import random
from pathlib import Path

import pytest
from click.testing import CliRunner

from ragmeter.cli import main
from tests.cli.test_output_cli import _pipe_to_head

#: 200 retrieval metrics: a comparison's Markdown and table are several times the 4 KiB pipe.
MANY = [a for k in range(1, 51) for m in ("ndcg", "precision", "recall", "hit_rate") for a in ("-m", f"{m}@{k}")]


def _eval(tmp: Path, name: str, seed: int, rows: int = 300) -> Path:
    rng = random.Random(seed)
    data = tmp / f"{name}.jsonl"
    data.write_text("".join(json.dumps({"id": f"q{i}", "query": "q", "relevant": ["d2"],
                                        "contexts": [{"id": f"d{rng.randint(1, 4)}"} for _ in range(3)]}) + "\n"
                            for i in range(rows)))
    out = tmp / name
    res = CliRunner().invoke(main, ["eval", str(data), *MANY, "-m", "mrr", "-o", str(out), "-q"],
                             catch_exceptions=False)
    assert res.exit_code == 0, res.output
    return out


@pytest.fixture(scope="module")
def runs(tmp_path_factory) -> tuple[Path, Path]:
    tmp = tmp_path_factory.mktemp("pipes")
    return _eval(tmp, "base", 1), _eval(tmp, "new", 2)


def _clean(code: int, err: str) -> None:
    assert "Traceback" not in err and "Broken pipe" not in err, err
    assert code == 0, err


@pytest.mark.parametrize("fmt", [[], ["--format", "table"], ["--format", "json"], ["--format", "latex"]])
def test_compare_two_runs_piped_to_head(runs, fmt):
    # before: the default was a rich table whose closed pipe made rich exit 1 (the gate's code)
    code, err, first = _pipe_to_head(["compare", str(runs[0]), str(runs[1]), *fmt])
    _clean(code, err)
    # no --format in a pipe: Markdown
    expected = {(): "### ragmeter compare", ("--format", "json"): "{", ("--format", "latex"): "% ragmeter compare"}
    start = expected.get(tuple(fmt))
    if start is not None:
        assert first.startswith(start), first
    else:
        assert first.strip()


def test_compare_many_runs_piped_to_head(runs):
    code, err, first = _pipe_to_head(["compare", str(runs[0]), str(runs[1]), str(runs[0]), str(runs[1])])
    _clean(code, err)
    assert first.startswith("### ragmeter compare: 4 runs")


@pytest.mark.parametrize("fmt", [[], ["--format", "table"], ["--format", "json", "--per-sample"]])
def test_diagnose_piped_to_head(runs, fmt):
    code, err, first = _pipe_to_head(["diagnose", str(runs[1]), *fmt])
    _clean(code, err)
    if not fmt:
        assert first.startswith("### ragmeter diagnose")
    elif fmt[1] == "json":
        assert first.startswith("{")


def test_calibrate_piped_to_head(runs, tmp_path):
    labels = tmp_path / "labels.csv"
    labels.write_text("id,metric,label\n" + "".join(f"q{i},mrr,{i % 2}\n" for i in range(60)))
    code, err, first = _pipe_to_head(["calibrate", str(runs[1]), "-l", str(labels), "-m", "mrr"])
    _clean(code, err)
    assert first.startswith("#")  # Markdown in a pipe


def test_report_piped_to_head(runs, tmp_path):
    out = tmp_path / "cmp.html"
    code, err, first = _pipe_to_head(["report", str(runs[0]), str(runs[1]), "-o", str(out)])
    _clean(code, err)
    assert first.startswith(f"wrote {out}") and out.stat().st_size > 0
