"""``veto=quote`` scored again on recorded judge replies: no judge call.

A faithfulness result of a verdict list (``mode=claims``, ``mode=inline`` or
``mode=sentences,verdicts=list``) records, per claim, the claim, the context sentence the judge
quoted for it (``evidence``, or ``quote`` in sentence mode), its hard verdict and P(yes). With
``veto=quote`` a claim whose numbers conflict with its quote
(:func:`ragmeter.metrics.generation._sentence_steps.number_conflicts`, the function the metric
calls) scores 0; this script applies that to every recorded claim and prints the AUROC before and
after, on the same replies (method log ``bench/results/faithfulness_by_kind.md``, section 15).
The "before" column is recomputed from the details and must equal the recorded AUROC.

Usage::

    python bench/quote_veto.py bench/results/judge_quality_qwen1.5b_faithfulness_claims_72rows.json
    python bench/quote_veto.py bench/results/judge_quality_qwen1.5b_faithfulness_claims_hard32.json \\
        --data src/ragmeter/data/validation/judge_validation_hard.jsonl
    python bench/quote_veto.py bench/results/faithfulness_by_kind_heldout_claims_summary_qwen1.5b.json
"""

from __future__ import annotations

import argparse
import copy
import json
from pathlib import Path
from typing import Any

from ragmeter.judges.check import separation
from ragmeter.metrics.generation._sentence_steps import number_conflicts
from ragmeter.stats.roc import auroc

DATA = Path(__file__).resolve().parents[1] / "src/ragmeter/data/validation/judge_validation.jsonl"


def support(details: dict[str, Any], veto: bool) -> tuple[float | None, int]:
    """The faithfulness score from a result's per-claim details, with or without the quote veto, and
    how many claims the veto struck; None where the details hold no claim (the recorded score stands)."""
    claims = details.get("claims") or []
    if not claims:
        return None, 0
    values, struck = [], 0
    for c in claims:
        value = c["p_yes"] if c.get("p_yes") is not None else float(bool(c["supported"]))
        quote = c.get("quote", c.get("evidence", "")) or ""
        if veto and number_conflicts(c["claim"], quote):
            value, struck = 0.0, struck + 1
        values.append(value)
    return sum(values) / len(values), struck


def rescored(result: dict[str, Any], name: str, veto: bool) -> tuple[dict[str, Any], int]:
    """``result`` with its score recomputed (hallucination_rate: 1 - support)."""
    out = copy.deepcopy(result)
    if result.get("error") is not None or result.get("score") is None:
        return out, 0
    s, struck = support(result.get("details") or {}, veto)
    if s is not None:
        out["score"] = 1 - s if name.startswith("hallucination_rate") else s
    return out, struck


def judge_quality_file(saved: dict[str, Any], data: str | None) -> None:
    """A ``bench/judge_quality.py --out`` file: the bench's own table, before and after."""
    path = Path(data or saved.get("data") or DATA)
    rows = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]
    labels = [r["labels"] for r in rows][: len(saved["records"])]
    names = [n for n in saved["records"][0]["metrics"] if n.split("(")[0] in ("faithfulness", "hallucination_rate")]
    for veto in (False, True):
        records, struck = [], {n: 0 for n in names}
        for rec in saved["records"]:
            new = copy.deepcopy(rec)
            for n in names:
                new["metrics"][n], k = rescored(rec["metrics"][n], n, veto)
                struck[n] += k
            records.append(new)
        for row in separation(records, labels):
            if row["metric"] in names:
                print(f"{'veto=quote' if veto else 'recorded ':<11}{row['metric']:<48}{row['n']:>4}{row['errors']:>4}"
                      f"{row['auroc']:>8.3f}{row['mean_pos']:>8.3f}{row['mean_neg']:>8.3f}"
                      f"  claims struck: {struck[row['metric']]}")
    for row in saved["rows"]:
        if row["metric"] in names:
            print(f"{'saved':<11}{row['metric']:<48}{row['n']:>4}{row['errors']:>4}{row['auroc']:>8.3f}")


def by_kind_file(saved: dict[str, Any]) -> None:
    """A ``bench/faithfulness_by_kind.py --out`` file: AUROC per metric and kind, before and after."""
    for name, recs in saved["records"].items():
        for kind in sorted({r["kind"] for r in recs}):
            mine = [r for r in recs if r["kind"] == kind and r.get("error") is None and r.get("score") is not None]
            for veto in (False, True):
                struck, pos, neg = 0, [], []
                for r in mine:
                    new, k = rescored(r, name, veto)
                    struck += k
                    (pos if r["faithful"] else neg).append(new["score"])
                print(f"{'veto=quote' if veto else 'recorded ':<11}{name:<40}{kind:<10}{len(mine):>4}"
                      f"{auroc(pos, neg):>8.3f}  claims struck: {struck}")
    for row in saved["rows"]:
        print(f"{'saved':<11}{row['metric']:<40}{row['kind']:<10}{row['n']:>4}{row['auroc']:>8.3f}")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("results", help="a results file of bench/judge_quality.py or bench/faithfulness_by_kind.py")
    ap.add_argument("--data", help="the labelled rows of a judge_quality file (default: its own, else the 72 rows)")
    args = ap.parse_args()
    saved = json.loads(Path(args.results).read_text(encoding="utf-8"))
    if isinstance(saved.get("records"), dict):
        by_kind_file(saved)
    else:
        judge_quality_file(saved, args.data)


if __name__ == "__main__":
    main()
