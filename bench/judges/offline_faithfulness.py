"""Offline faithfulness signals against the hand-made ``faithful`` label, with a held-out half.

    python bench/judges/offline_faithfulness.py [--embedder st:all-MiniLM-L6-v2] [--out FILE]

Scores ``fact_consistency``, ``lexical_faithfulness`` and (with ``--embedder``)
``semantic_similarity`` on ``src/ragmeter/data/validation/judge_validation.jsonl`` and prints the AUROC
against ``labels.faithful`` on three row sets:

- **design**: rows at even positions (0, 2, 4...): the rows ``fact_consistency``'s rule was
  designed and adjusted on;
- **held-out**: rows at odd positions, not looked at while designing the rule (v02, the number
  swap quoted in the bug report, is among them);
- **all** 72 rows.

AUROC = P(score of a random faithful row > score of a random unfaithful row), ties 1/2.
Undefined scores (None) rank lowest, so every row counts.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from scipy import stats

import ragmeter
from ragmeter.io import read_samples

DATA = Path(__file__).resolve().parents[2] / "src" / "ragmeter" / "data" / "validation" / "judge_validation.jsonl"


def auroc(scores: list[float | None], labels: list[bool]) -> float:
    """Mann-Whitney U / (n+ n-), None scored below every number."""
    xs = [-1.0 if s is None else s for s in scores]
    pos = [x for x, y in zip(xs, labels, strict=True) if y]
    neg = [x for x, y in zip(xs, labels, strict=True) if not y]
    u = stats.mannwhitneyu(pos, neg, alternative="two-sided").statistic
    return float(u) / (len(pos) * len(neg))


def main() -> None:
    """Score, split, print the table."""
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--embedder", default=None, help="e.g. st:all-MiniLM-L6-v2 (adds semantic_similarity)")
    ap.add_argument("--out", default=None)
    args = ap.parse_args()
    samples = list(read_samples(DATA))
    labels = [bool(s.metadata["labels"]["faithful"]) for s in samples]
    metrics = ["fact_consistency", "lexical_faithfulness"]
    embedder = None
    if args.embedder:
        from ragmeter.embedders import from_spec

        embedder = from_spec(args.embedder)
        metrics.append("semantic_similarity")
    run = ragmeter.evaluate(samples, metrics, embedder=embedder)
    table = []
    parts = {"design (even rows)": range(0, len(samples), 2), "held-out (odd rows)": range(1, len(samples), 2),
             "all": range(len(samples))}
    print(f"{'metric':<24}" + "".join(f"{k:>22}" for k in parts))
    for m in metrics:
        scores = [rec["metrics"][m]["score"] for rec in run.records]
        row = {"metric": m}
        for k, idx in parts.items():
            row[k] = auroc([scores[i] for i in idx], [labels[i] for i in idx])
        table.append(row)
        print(f"{m:<24}" + "".join(f"{row[k]:>22.3f}" for k in parts))
    counts = {k: (sum(labels[i] for i in idx), sum(not labels[i] for i in idx)) for k, idx in parts.items()}
    print("rows (faithful, unfaithful): " + ", ".join(f"{k} {v}" for k, v in counts.items()))
    if args.out:
        per_row = [{"id": s.id, "faithful": y, **{m: rec["metrics"][m]["score"] for m in metrics}}
                   for s, y, rec in zip(samples, labels, run.records, strict=True)]
        Path(args.out).write_text(json.dumps({"embedder": args.embedder, "auroc": table, "counts": counts,
                                              "rows": per_row}, indent=1))


if __name__ == "__main__":
    main()
