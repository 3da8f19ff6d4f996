"""Clauses for answers of several check-worthy sentences, the claim call for one: per design set, the
default's AUROC from its recorded replies and the mix's, with no judge call (method log section 155).

A row's faithfulness score depends on its own calls only, so the mix's score on a row is the
recorded ``faithfulness(split=clauses)`` score (section 154's runs) where the answer has two
check-worthy sentences or more (``_checkworthy.split_claims``), and the default's where it has one:
the default's score from its recorded replies, as ``bench/combine_offline.py --rescore`` line
``NC0*Fnnq^1`` computes it. Prints per set the rows, the rows the mix takes from the clauses run,
both AUROCs and the undefined rows of each.

Usage::

    python bench/split_mix.py --default results/faithfulness_by_kind_design_llamacpp_nocache_CN_short.json \\
        results/faithfulness_short_more_llamacpp_nocache_CN.json --split design \\
        --clauses results/faithfulness_by_kind_design_llamacpp_nocache_OC.json \\
        results/faithfulness_short_more_design_llamacpp_nocache_OC.json --kind short
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from combine_offline import judged_results, nc0_factor_rows
from quote_veto import labelled_rows

from ragmeter.metrics.generation._checkworthy import split_claims
from ragmeter.stats.roc import auroc

CLAUSES = "faithfulness(split=clauses)"


def default_scores(names: list[str], data: str | None, split: str | None, kind: str | None
                   ) -> dict[str, tuple[bool, float | None, str]]:
    """``id -> (faithful, the default's score from the recorded replies, answer)``."""
    out: dict[str, tuple[bool, float | None, str]] = {}
    for name in names:
        saved = json.loads(Path(name).read_text(encoding="utf-8"))
        rows = labelled_rows(data, saved.get("data"))
        judged = judged_results(saved, rows, split)
        for (k, y, _r, row), (_, _, x, f) in zip(judged, nc0_factor_rows(saved, rows, split, True), strict=True):
            if kind is None or k in (kind, "all"):
                score = None if x is None else x * (1.0 if f is None else f)
                out[row["id"]] = (y, score, row.get("answer") or "")
    return out


def clause_scores(names: list[str]) -> dict[str, float | None]:
    """``id -> the recorded faithfulness(split=clauses) score`` (None where undefined or an error)."""
    out: dict[str, float | None] = {}
    for name in names:
        saved = json.loads(Path(name).read_text(encoding="utf-8"))
        if isinstance(saved.get("records"), dict):
            for r in saved["records"][CLAUSES]:
                out[r["id"]] = r.get("score") if r.get("error") is None else None
        else:
            for rec in saved["records"]:
                m = rec["metrics"].get(CLAUSES)
                if m is not None:
                    out[rec["id"]] = m.get("score") if m.get("error") is None else None
    return out


def _auroc(rows: list[tuple[bool, float | None]]) -> str:
    pos = [s for y, s in rows if y and s is not None]
    neg = [s for y, s in rows if not y and s is not None]
    return f"{auroc(pos, neg):.3f}"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--default", nargs="+", required=True, help="the default's recorded results files")
    ap.add_argument("--clauses", nargs="+", required=True, help="faithfulness(split=clauses)'s results files")
    ap.add_argument("--data", help="the labelled rows (default: each file's own)")
    ap.add_argument("--split", help="only the rows of this split (faithfulness_by_kind files)")
    ap.add_argument("--kind", help="only the rows of this kind (faithfulness_by_kind files)")
    ap.add_argument("--name", default="set")
    args = ap.parse_args()
    base = default_scores(args.default, args.data, args.split, args.kind)
    clauses = clause_scores(args.clauses)
    missing = [i for i in base if i not in clauses]
    if missing:
        raise SystemExit(f"{len(missing)} rows without a clauses score: {missing[:5]}")
    mixed, taken = [], 0
    for i, (y, score, answer) in base.items():
        several = sum(s.checkworthy for s in split_claims(answer)) >= 2
        taken += several
        mixed.append((y, clauses[i] if several else score))
    plain = [(y, s) for y, s, _ in base.values()]
    print(f"{args.name:<24} rows {len(base):>3}  from clauses {taken:>3}  default {_auroc(plain)} "
          f"(undefined {sum(s is None for _, s in plain)})  mix {_auroc(mixed)} "
          f"(undefined {sum(s is None for _, s in mixed)})")


if __name__ == "__main__":
    main()
