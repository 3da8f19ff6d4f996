"""The judge's faithfulness score and the offline ``fact_consistency`` combined per answer, on recorded
judge scores: no judge call.

For each row of a results file (``bench/judge_quality.py`` or ``bench/faithfulness_by_kind.py``),
``fact_consistency`` is computed on the labelled row (answer against its contexts, as the metric
scores it) and combined with the recorded faithfulness score: ``J*F`` (their product) and
``min(J,F)`` (the lower). An undefined ``fact_consistency`` leaves the judge's score; a row without a
judge score (error or undefined) is left out of every line. Prints the AUROC of the judge alone
(it must equal the saved one), of ``fact_consistency`` alone and of each combination, per set and
kind (method log ``bench/results/faithfulness_by_kind.md``, section 45).

Usage::

    python bench/combine_offline.py bench/results/faithfulness_by_kind_design_llamacpp_nocache_N1.json
    python bench/combine_offline.py bench/results/judge_quality_qwen1.5b_llamacpp_faithfulness_hard32_nocache_v7.json \\
        --data src/ragmeter/data/validation/judge_validation_hard.jsonl
"""

from __future__ import annotations

import argparse
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

from quote_veto import data_path

from ragmeter import Sample
from ragmeter.metrics.lexical.fact_consistency import score_sample
from ragmeter.stats.roc import auroc

COMBINATIONS: dict[str, Callable[[float, float | None], float]] = {
    "judge": lambda j, f: j,
    "J*F": lambda j, f: j if f is None else j * f,
    "min(J,F)": lambda j, f: j if f is None else min(j, f),
}


def offline(row: dict[str, Any]) -> float | None:
    """``fact_consistency`` of a labelled row (None: undefined)."""
    sample = Sample.model_validate({k: row[k] for k in ("id", "query", "answer", "contexts") if k in row})
    return score_sample(sample).score


def scored_rows(saved: dict[str, Any], rows: dict[str, dict[str, Any]]) -> list[tuple[str, bool, float, float | None]]:
    """``(kind, faithful, judge score, fact_consistency)`` per row with a judge score."""
    out = []
    if isinstance(saved.get("records"), dict):  # bench/faithfulness_by_kind.py
        for r in saved["records"]["faithfulness"]:
            if r.get("error") is None and r.get("score") is not None:
                out.append((r["kind"], bool(r["faithful"]), float(r["score"]), offline(rows[r["id"]])))
    else:  # bench/judge_quality.py
        for rec in saved["records"]:
            m = rec["metrics"]["faithfulness"]
            if m.get("error") is None and m.get("score") is not None:
                row = rows[rec["id"]]
                out.append(("all", bool(row["labels"]["faithful"]), float(m["score"]), offline(row)))
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("results", help="a results file of bench/judge_quality.py or bench/faithfulness_by_kind.py")
    ap.add_argument("--data", help="the labelled rows (default: the file's own)")
    args = ap.parse_args()
    saved = json.loads(Path(args.results).read_text(encoding="utf-8"))
    path = data_path(args.data, saved.get("data"))
    rows = {r["id"]: r for r in (json.loads(x) for x in path.read_text(encoding="utf-8").splitlines() if x.strip())}
    scored = scored_rows(saved, rows)
    for kind in sorted({s[0] for s in scored}):
        mine = [s for s in scored if s[0] == kind]
        for label, combine in COMBINATIONS.items():
            pos = [combine(j, f) for _, y, j, f in mine if y]
            neg = [combine(j, f) for _, y, j, f in mine if not y]
            print(f"{label:<12}{kind:<10}{len(mine):>4}{auroc(pos, neg):>8.3f}")
        f_pos = [f for _, y, _, f in mine if y and f is not None]
        f_neg = [f for _, y, _, f in mine if not y and f is not None]
        print(f"{'offline':<12}{kind:<10}{len(f_pos) + len(f_neg):>4}{auroc(f_pos, f_neg):>8.3f}")


if __name__ == "__main__":
    main()
