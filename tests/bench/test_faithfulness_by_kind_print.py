"""bench/faithfulness_by_kind.py prints a row whose AUROC has no interval (one row of each class)."""

from __future__ import annotations

from .loader import load_bench


def test_a_row_with_an_auroc_and_no_interval_prints(capsys):
    bench = load_bench("faithfulness_by_kind")
    row = {"metric": "faithfulness", "kind": "short", "n": 2, "auroc": 1.0, "low": None, "high": None}
    bench._print([row, {**row, "auroc": 0.75, "low": 0.5, "high": 1.0}, {**row, "auroc": None}])
    lines = capsys.readouterr().out.splitlines()
    assert "1.000 [   n/a    ]" in lines[0] and "0.750 [0.50, 1.00]" in lines[1] and "n/a" in lines[2]
