"""bench/faithfulness_by_kind.py: its printed rows and its results file."""

from __future__ import annotations

import json

import pytest

from .loader import load_bench


def test_a_row_with_an_auroc_and_no_interval_prints(capsys):
    bench = load_bench("faithfulness_by_kind")
    row = {"metric": "faithfulness", "kind": "short", "n": 2, "auroc": 1.0, "low": None, "high": None}
    bench._print([row, {**row, "auroc": 0.75, "low": 0.5, "high": 1.0}, {**row, "auroc": None}])
    lines = capsys.readouterr().out.splitlines()
    assert "1.000 [   n/a    ]" in lines[0] and "0.750 [0.50, 1.00]" in lines[1] and "n/a" in lines[2]


def test_the_results_file_holds_each_kind_as_soon_as_it_is_measured(tmp_path, monkeypatch):
    """A run stopped during its second kind keeps the first kind's row and records in --out."""
    bench = load_bench("faithfulness_by_kind")
    real, calls = bench.ragmeter.evaluate, []

    def evaluate(*args, **kwargs):
        calls.append(1)
        if len(calls) == 2:
            raise KeyboardInterrupt
        return real(*args, **kwargs)

    monkeypatch.setattr(bench.ragmeter, "evaluate", evaluate)
    out = tmp_path / "r.json"
    monkeypatch.setattr("sys.argv", ["faithfulness_by_kind.py", "--judge", "none", "--metrics", "fact_consistency",
                                     "--split", "design", "--kinds", "short,dialogue", "--out", str(out)])
    with pytest.raises(KeyboardInterrupt):
        bench.main()
    saved = json.loads(out.read_text())
    assert [(r["kind"], r["n"]) for r in saved["rows"]] == [("short", 20)]
    assert len(saved["records"]["fact_consistency"]) == 20


def test_selected_keeps_the_kinds_and_split_asked_for():
    from types import SimpleNamespace

    bench = load_bench("faithfulness_by_kind")
    samples = [SimpleNamespace(metadata={"kind": k, "split": sp})
               for k, sp in [("short", "design"), ("short", "heldout"), ("dialogue", "design"), ("summary", "design")]]
    assert bench.selected(samples, "short, dialogue", "design") == [0, 2]
    assert bench.selected(samples, "all", "design") == [0, 2, 3]
    assert bench.selected(samples, "short", "all") == [0, 1]
    assert bench.selected(samples, "all", "all") == [0, 1, 2, 3]
