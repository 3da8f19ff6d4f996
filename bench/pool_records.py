"""AUROC of recorded faithfulness scores pooled over results files, for one kind and half.

Reads results files of ``bench/faithfulness_by_kind.py`` (``records``: per metric, rows with ``id``,
``kind``, ``faithful``, ``score``) or of ``bench/vs_ragas.py`` (``results``: per tool, rows with
``id`` and ``score``; labels and kinds then come from ``--data``), keeps the rows of ``--kind`` and
``--half`` (``design``: odd group number in the id, ``heldout``: even, the split rule of the
validation sets; ``all``: both) and prints, per metric or tool, the pooled AUROC against the
faithful label with DeLong's 95% interval (:func:`faithfulness_by_kind.separation`). With
``--paired A B``: the difference AUROC(B) - AUROC(A) on the rows both scored, with a percentile 95%
interval from resampling the twin groups (a row's id without its last letter: a faithful answer
and its hallucinated twin) with replacement, one draw for both readings (:func:`paired_difference`).
No judge call.

Usage::

    python bench/pool_records.py --kind short --half heldout \\
        bench/results/faithfulness_by_kind_heldout_llamacpp_nocache_v7.json \\
        bench/results/faithfulness_short_more_llamacpp_nocache_v7.json
    python bench/pool_records.py --kind short --half design \\
        --data src/ragmeter/data/validation/faithfulness_short_more.jsonl \\
        bench/results/vs_ragas_qwen1.5b_llamacpp_faithfulness_short_more.json
    python bench/pool_records.py --kind dialogue --half design --paired faithfulness \
        "faithfulness(verdicts=capped_quotes)" bench/results/faithfulness_fresh_more_design_llamacpp_nocache_CQ.json
"""

from __future__ import annotations

import argparse
import json
from typing import Any

import numpy as np
from faithfulness_by_kind import separation

from ragmeter.stats.roc import auroc

#: resamples of :func:`paired_difference`
RESAMPLES = 2000


def in_half(row_id: str, half: str) -> bool:
    """Whether ``row_id`` (``qa21a``: group 21) is in ``half`` by the validation sets' split rule."""
    return half == "all" or (int(row_id[-3:-1]) % 2 == 1) == (half == "design")


def labelled_rows(saved: dict[str, Any], labels: dict[str, tuple[str, bool]]) -> dict[str, list[dict[str, Any]]]:
    """Per metric (or vs_ragas tool) its rows as ``{"id", "kind", "faithful", "score"}``; a row
    without ``kind`` or ``faithful`` takes them from ``labels`` (id -> (kind, faithful))."""
    groups = saved["records"] if "records" in saved else {r["tool"]: r["rows"] for r in saved["results"]}
    out: dict[str, list[dict[str, Any]]] = {}
    for name, rows in groups.items():
        out[name] = [{"id": r["id"], "score": r.get("score"),
                      "kind": r["kind"] if "kind" in r else labels[r["id"]][0],
                      "faithful": r["faithful"] if "faithful" in r else labels[r["id"]][1]} for r in rows]
    return out


def pooled(files: list[dict[str, Any]], kind: str, half: str,
           labels: dict[str, tuple[str, bool]]) -> dict[str, dict[str, Any]]:
    """Per metric name: :func:`separation` over the rows of ``kind`` and ``half`` of all ``files``,
    with ``rows`` (kept) and ``scored`` (with a score)."""
    out = {}
    for name, rs in kept_rows(files, kind, half, labels).items():
        sep = separation([r["score"] for r in rs], [r["faithful"] for r in rs], 1.0)
        out[name] = {**sep, "rows": len(rs), "scored": sep["n_pos"] + sep["n_neg"]}
    return out


def kept_rows(files: list[dict[str, Any]], kind: str, half: str,
              labels: dict[str, tuple[str, bool]]) -> dict[str, list[dict[str, Any]]]:
    """Per metric name, the rows of ``kind`` and ``half`` of all ``files``."""
    rows: dict[str, list[dict[str, Any]]] = {}
    for saved in files:
        for name, rs in labelled_rows(saved, labels).items():
            rows.setdefault(name, []).extend(r for r in rs if r["kind"] == kind and in_half(r["id"], half))
    return rows


def _auroc(rows: list[dict[str, Any]], key: str) -> float | None:
    return auroc([r[key] for r in rows if r["faithful"]], [r[key] for r in rows if not r["faithful"]])


def paired_difference(rows_a: list[dict[str, Any]], rows_b: list[dict[str, Any]], *,
                      resamples: int = RESAMPLES, seed: int = 0) -> dict[str, Any]:
    """AUROC(b) - AUROC(a) over the rows both readings scored (``diff``), and the 2.5th and 97.5th
    percentiles (``low``, ``high``) of that difference over ``resamples`` draws of the twin groups
    with replacement, the same draw for both readings; a draw without a faithful or an unfaithful
    row is drawn again. ``groups``: the twin groups kept. A ValueError where the rows both scored
    hold no faithful or no unfaithful answer (no draw could hold both)."""
    b_of = {r["id"]: r["score"] for r in rows_b if r.get("score") is not None}
    both = [{**r, "b": b_of[r["id"]]} for r in rows_a if r.get("score") is not None and r["id"] in b_of]
    by_group: dict[str, list[dict[str, Any]]] = {}
    for r in both:
        by_group.setdefault(r["id"][:-1], []).append(r)
    groups = list(by_group.values())

    def diff(rs: list[dict[str, Any]]) -> float | None:
        a, b = _auroc(rs, "score"), _auroc(rs, "b")
        return None if a is None or b is None else b - a

    if diff(both) is None:
        raise ValueError(f"the rows both readings scored ({len(both)}) need a faithful and an unfaithful answer")
    rng = np.random.default_rng(seed)
    draws: list[float] = []
    while len(draws) < resamples:
        d = diff([r for i in rng.integers(0, len(groups), len(groups)) for r in groups[i]])
        if d is not None:
            draws.append(d)
    low, high = np.percentile(draws, [2.5, 97.5])
    return {"diff": diff(both), "low": float(low), "high": float(high), "groups": len(groups)}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("files", nargs="+")
    ap.add_argument("--kind", default="short")
    ap.add_argument("--half", default="heldout", choices=("design", "heldout", "all"))
    ap.add_argument("--data", action="append", default=[], help="labelled rows for files whose rows carry none")
    ap.add_argument("--paired", nargs=2, metavar=("A", "B"), default=None,
                    help="print AUROC(B) - AUROC(A) with an interval from resampling twin groups")
    args = ap.parse_args()
    labels: dict[str, tuple[str, bool]] = {}
    for path in args.data:
        with open(path, encoding="utf-8") as f:
            for line in f:
                if line.strip():
                    r = json.loads(line)
                    labels[r["id"]] = (r["kind"], bool(r["labels"]["faithful"]))
    files = []
    for path in args.files:
        with open(path, encoding="utf-8") as f:
            files.append(json.load(f))
    if args.paired:
        a, b = args.paired
        rows = kept_rows(files, args.kind, args.half, labels)
        for name in (a, b):
            if name not in rows:
                ap.error(f"--paired: {name!r} is in none of the files (they hold: {', '.join(rows)})")
        d = paired_difference(rows[a], rows[b])
        print(f"{b} - {a}  {args.kind} {args.half}  {d['groups']} twin groups  AUROC difference "
              f"{d['diff']:+.3f} [{d['low']:+.3f}, {d['high']:+.3f}]")
        return
    for name, r in pooled(files, args.kind, args.half, labels).items():
        print(f"{name:<40}{args.kind:<10}{args.half:<9}{r['scored']:>3}/{r['rows']:<3} AUROC "
              f"{r['auroc']:.3f} [{r['low']:.2f}, {r['high']:.2f}]")


if __name__ == "__main__":
    main()
