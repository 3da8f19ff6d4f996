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

from quote_veto import contexts_of, data_path, rescored

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


def pairs(claims_file: dict[str, Any], sentences_file: dict[str, Any],
          data: str | None) -> list[tuple[str, str, bool, float | None, float | None]]:
    """Per labelled row both files hold: ``(id, kind, faithful, claims score, sentences score)``."""
    path = data_path(data, claims_file.get("data"))
    rows = {r["id"]: r for r in (json.loads(x) for x in path.read_text(encoding="utf-8").splitlines() if x.strip())}
    claims, sentences = rows_of(claims_file, CLAIMS), rows_of(sentences_file, SENTENCES)
    out = []
    for rid, c in claims.items():
        if rid not in sentences:
            continue
        row = rows[rid]
        a = scored(rescored(c, CLAIMS, "evidence", contexts_of(row))[0]) if scored(c) is not None else None
        out.append((rid, row.get("kind", "all"), faithful_of(row), a, scored(sentences[rid])))
    return out


def report(found: list[tuple[str, str, bool, float | None, float | None]]) -> None:
    """AUROC per kind: each pipeline alone, then each combination, on the rows both scored."""
    for kind in sorted({k for _, k, *_ in found}):
        mine = [p for p in found if p[1] == kind]
        both = [p for p in mine if p[3] is not None and p[4] is not None]
        lines = {"claims (veto=evidence)": [(f, a) for _, _, f, a, _ in both],
                 "sentences": [(f, b) for _, _, f, _, b in both]}
        for name, fn in COMBINATIONS.items():
            lines[f"B-{name}"] = [(f, fn(a, b)) for _, _, f, a, b in both]  # type: ignore[arg-type]
        for name, vals in lines.items():
            pos = [v for f, v in vals if f]
            neg = [v for f, v in vals if not f]
            print(f"{kind:<10}{name:<24}{len(vals):>4}{auroc(pos, neg):>8.3f}"
                  f"   (rows: {len(mine)}, scored by both: {len(both)})")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("claims", help="results file holding the default faithfulness (mode=claims)")
    ap.add_argument("sentences", help="results file holding faithfulness(mode=sentences)")
    ap.add_argument("--data", help="the labelled rows (default: the claims file's own, else the 72 rows)")
    args = ap.parse_args()
    report(pairs(json.loads(Path(args.claims).read_text(encoding="utf-8")),
                 json.loads(Path(args.sentences).read_text(encoding="utf-8")), args.data))


if __name__ == "__main__":
    main()
