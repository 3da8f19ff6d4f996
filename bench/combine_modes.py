"""``mode=claims`` and ``mode=sentences`` scored together on recorded judge replies: no judge call.

Each labelled row has one ``faithfulness`` result per pipeline in two results files (of
``bench/judge_quality.py`` or ``bench/faithfulness_by_kind.py``). The ``mode=claims`` score is taken
under ``veto=evidence`` (re-scored by :func:`quote_veto.rescored` where the replies were recorded
without it, exactly as the metric scores them now); the ``mode=sentences`` score as recorded. The
script prints, per set (and kind), the AUROC of each pipeline alone and of their mean and their
minimum, on the rows both pipelines scored (method log ``bench/results/faithfulness_by_kind.md``,
section 18).

Usage::

    python bench/combine_modes.py \\
        bench/results/judge_quality_qwen1.5b_faithfulness_claims_72rows.json \\
        bench/results/judge_quality_qwen1.5b_faithfulness_sentences_C2C5_72rows.json
    python bench/combine_modes.py \\
        bench/results/faithfulness_by_kind_design_claims_qwen1.5b.json \\
        bench/results/faithfulness_by_kind_design_C2v2_qwen1.5b.json
"""

from __future__ import annotations

import argparse
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

from quote_veto import contexts_of, labelled_rows, rescored

from ragmeter.stats.roc import auroc

CLAIMS = "faithfulness"
SENTENCES = "faithfulness(mode=sentences)"
COMBINATIONS: dict[str, Callable[[float, float], float]] = {
    "mean": lambda a, b: (a + b) / 2,
    "min": min,
}


def scored(result: dict[str, Any] | None) -> float | None:
    """A result's score, None for an error or an undefined score."""
    if result is None or result.get("error") is not None:
        return None
    s = result.get("score")
    return None if s is None else float(s)


def rows_of(saved: dict[str, Any], name: str) -> dict[str, dict[str, Any]]:
    """``{row id: result}`` of metric ``name`` in either results format."""
    if isinstance(saved.get("records"), dict):
        return {r["id"]: r for r in saved["records"].get(name, [])}
    return {r["id"]: r["metrics"][name] for r in saved["records"] if name in r["metrics"]}


def faithful_of(row: dict[str, Any]) -> bool:
    """A labelled row's ``labels.faithful`` (every bundled faithfulness set has it)."""
    return bool(row["labels"]["faithful"])


Pair = tuple[str, str, bool, float | None, float | None]


def pairs(claims_file: dict[str, Any], sentences_file: dict[str, Any], data: str | None,
          second: str = SENTENCES, as_recorded: bool = False) -> list[Pair]:
    """Per labelled row both files hold: ``(id, kind, faithful, claims score, second score)``; the
    second file's metric is ``second`` (default ``faithfulness(mode=sentences)``). The claims score
    is re-scored under ``veto=evidence`` unless ``as_recorded`` (replies recorded with the
    default's own veto and check-worthy claims)."""
    rows = labelled_rows(data, claims_file.get("data"))
    claims, others = rows_of(claims_file, CLAIMS), rows_of(sentences_file, second)
    out = []
    for rid, c in claims.items():
        if rid not in others:
            continue
        row = rows[rid]
        if as_recorded or scored(c) is None:
            a = scored(c)
        else:
            a = scored(rescored(c, CLAIMS, "evidence", contexts_of(row))[0])
        out.append((rid, row.get("kind", "all"), faithful_of(row), a, scored(others[rid])))
    return out


def report(found: list[Pair], second: str = "sentences",
           claims: str = "claims (veto=evidence)") -> None:
    """AUROC per kind: each pipeline alone, then each combination, on the rows both scored."""
    for kind in sorted({k for _, k, *_ in found}):
        mine = [p for p in found if p[1] == kind]
        both = [p for p in mine if p[3] is not None and p[4] is not None]
        lines = {claims: [(f, a) for _, _, f, a, _ in both],
                 second: [(f, b) for _, _, f, _, b in both]}
        for name, fn in COMBINATIONS.items():
            lines[f"B-{name}"] = [(f, fn(a, b)) for _, _, f, a, b in both]  # type: ignore[arg-type]
        for name, vals in lines.items():
            pos = [v for f, v in vals if f]
            neg = [v for f, v in vals if not f]
            print(f"{kind:<10}{name:<30}{len(vals):>4}{auroc(pos, neg):>8.3f}"
                  f"   (rows: {len(mine)}, scored by both: {len(both)})")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("claims", help="results file holding the default faithfulness (mode=claims)")
    ap.add_argument("sentences", help="results file holding faithfulness(mode=sentences) (or --second)")
    ap.add_argument("--data", help="the labelled rows (default: the claims file's own, else the 72 rows)")
    ap.add_argument("--second", default=SENTENCES, help=f"the second file's metric (default {SENTENCES!r})")
    ap.add_argument("--claims-as-recorded", action="store_true",
                    help="take the claims score as recorded (replies of a version with the evidence veto and "
                         "check-worthy claims), not re-scored under veto=evidence")
    args = ap.parse_args()
    found = pairs(json.loads(Path(args.claims).read_text(encoding="utf-8")),
                  json.loads(Path(args.sentences).read_text(encoding="utf-8")), args.data, args.second,
                  args.claims_as_recorded)
    report(found, "sentences" if args.second == SENTENCES else args.second,
           "claims (as recorded)" if args.claims_as_recorded else "claims (veto=evidence)")


if __name__ == "__main__":
    main()
