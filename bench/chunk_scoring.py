"""Hard vs probability-weighted chunk ratings, from one judge_quality run's per-row file.

``bench/judge_quality.py --metrics context_relevancy,context_precision_llm`` with
``scoring=auto`` keeps, per chunk, the probability-weighted ``rating`` and the ``hard_rating``
the judge wrote (the same call). This script reads that file and prints, per row range, the
AUROC with DeLong's 95% interval of both against the hand labels:

- per chunk: the chunk's rating against ``labels.context_relevance[i]``;
- per row: context_precision_llm's score (weighted) and the same formula on the hard ratings
  (rating >= ``--threshold`` is relevant) against "human context precision == 1", the label of
  ``bench/vs_ragas.py`` (RAGAS's formula on the hand labels: mean Precision@i over the relevant
  ranks i, 0 when none).

Usage::

    python bench/chunk_scoring.py bench/results/judge_quality_qwen1.5b_cr_cp_72rows.json \\
        --ranges 25-72,1-24,1-72 --row-ranges 17-72,1-72

Ranges are 1-based row positions in the data file, inclusive.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from ragmeter.metrics.generation.context_relevancy import chunk_ratings
from ragmeter.stats.roc import auroc_interval

sys.path.insert(0, str(Path(__file__).resolve().parent))

from vs_ragas import human_cp  # the label rule of vs_ragas, one definition

DEFAULT_DATA = Path(__file__).resolve().parents[1] / "src/ragmeter/data/validation/judge_validation.jsonl"


def interval(scores: Sequence[float], labels: Sequence[int]) -> dict[str, Any]:
    """AUROC of ``scores`` against 0/1 ``labels`` with DeLong's interval, and the class counts."""
    s, y = np.asarray(scores, dtype=float), np.asarray(labels, dtype=int)
    iv = auroc_interval(s[y == 1], s[y == 0])
    return {"auroc": iv.estimate, "low": iv.low, "high": iv.high, "pos": int(y.sum()), "neg": int((1 - y).sum())}


def _metric(rec: dict[str, Any], base: str) -> dict[str, Any]:
    """The record's result of metric ``base``, under its bare name or with parameters."""
    return next(v for k, v in rec["metrics"].items() if k == base or k.startswith(base + "("))


def chunk_table(records: list[dict[str, Any]], labels: dict[str, dict[str, Any]], rows: range) -> dict[str, Any]:
    """Per-chunk AUROC of the weighted and the hard ratings of context_relevancy over ``rows``."""
    w, h, y = [], [], []
    for rec in records[rows.start:rows.stop]:
        used, hard = chunk_ratings(_metric(rec, "context_relevancy")["details"])
        for u, hv, lab in zip(used, hard, labels[rec["id"]]["context_relevance"], strict=True):
            w.append(u)
            h.append(hv)
            y.append(int(bool(lab)))
    return {"weighted": interval(w, y), "hard": interval(h, y)}


def row_table(records: list[dict[str, Any]], labels: dict[str, dict[str, Any]], rows: range,
              threshold: float) -> dict[str, Any]:
    """Per-row AUROC of context_precision_llm (weighted score, and its formula on the hard ratings)
    against human context precision == 1, over ``rows``."""
    w, h, y = [], [], []
    for rec in records[rows.start:rows.stop]:
        r = _metric(rec, "context_precision_llm")
        w.append(float(r["score"]))
        h.append(human_cp([x >= threshold for x in r["details"]["hard_ratings"]]))
        y.append(int(human_cp(labels[rec["id"]]["context_relevance"]) == 1.0))
    return {"weighted": interval(w, y), "hard": interval(h, y)}


def _ranges(text: str) -> list[range]:
    out = []
    for part in text.split(","):
        a, b = part.split("-")
        out.append(range(int(a) - 1, int(b)))
    return out


def _fmt(t: dict[str, Any]) -> str:
    if t["auroc"] is None:
        return "-"
    if t["low"] is None:
        return f"{t['auroc']:.3f} [no interval]"
    return f"{t['auroc']:.3f} [{t['low']:.3f}, {t['high']:.3f}]"


def _line(r: range, unit: str, t: dict[str, Any]) -> str:
    counts = f"{t['hard']['pos']}/{t['hard']['neg']}"
    return f"{f'{r.start + 1}-{r.stop}':<8} {unit:<6} {counts:<8} {_fmt(t['weighted']):<26} {_fmt(t['hard'])}"


def main(argv: Sequence[str] | None = None) -> int:
    """Print the tables (and write them as JSON with ``--out``)."""
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("results", help="a bench/judge_quality.py --out file with both chunk metrics")
    ap.add_argument("--data", default=str(DEFAULT_DATA))
    ap.add_argument("--ranges", default="1-72", help="row ranges for the per-chunk table")
    ap.add_argument("--row-ranges", default="1-72", help="row ranges for the per-row context precision table")
    ap.add_argument("--threshold", type=float, default=5.0)
    ap.add_argument("--out", default=None)
    args = ap.parse_args(argv)
    records = json.loads(Path(args.results).read_text(encoding="utf-8"))["records"]
    labels = {}
    for line in Path(args.data).read_text(encoding="utf-8").splitlines():
        if line.strip():
            row = json.loads(line)
            labels[row["id"]] = row["labels"]
    out: dict[str, Any] = {"chunk": {}, "row": {}}
    print(f"{'rows':<8} {'unit':<6} {'n+/n-':<8} {'weighted AUROC [95%]':<26} hard AUROC [95%]")
    for r in _ranges(args.ranges):
        t = out["chunk"][f"{r.start + 1}-{r.stop}"] = chunk_table(records, labels, r)
        print(_line(r, "chunk", t))
    for r in _ranges(args.row_ranges):
        t = out["row"][f"{r.start + 1}-{r.stop}"] = row_table(records, labels, r, args.threshold)
        print(_line(r, "row", t))
    if args.out:
        Path(args.out).write_text(json.dumps(out, indent=2), encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
