"""AUROC of recorded faithfulness scores pooled over results files, for one kind and half.

Reads results files of ``bench/faithfulness_by_kind.py`` (``records``: per metric, rows with ``id``,
``kind``, ``faithful``, ``score``) or of ``bench/vs_ragas.py`` (``results``: per tool, rows with
``id`` and ``score``; labels and kinds then come from ``--data``), keeps the rows of ``--kind`` and
``--half`` (``design``: odd group number in the id, ``heldout``: even, the split rule of the
validation sets; ``all``: both) and prints, per metric or tool, the pooled AUROC against the
faithful label with DeLong's 95% interval (:func:`faithfulness_by_kind.separation`). No judge call.

Usage::

    python bench/pool_records.py --kind short --half heldout \\
        bench/results/faithfulness_by_kind_heldout_llamacpp_nocache_v7.json \\
        bench/results/faithfulness_short_more_llamacpp_nocache_v7.json
    python bench/pool_records.py --kind short --half design \\
        --data src/ragmeter/data/validation/faithfulness_short_more.jsonl \\
        bench/results/vs_ragas_qwen1.5b_llamacpp_faithfulness_short_more.json
"""

from __future__ import annotations

import argparse
import json
from typing import Any

from faithfulness_by_kind import separation


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
    rows: dict[str, list[dict[str, Any]]] = {}
    for saved in files:
        for name, rs in labelled_rows(saved, labels).items():
            rows.setdefault(name, []).extend(r for r in rs if r["kind"] == kind and in_half(r["id"], half))
    out = {}
    for name, rs in rows.items():
        sep = separation([r["score"] for r in rs], [r["faithful"] for r in rs], 1.0)
        out[name] = {**sep, "rows": len(rs), "scored": sep["n_pos"] + sep["n_neg"]}
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("files", nargs="+")
    ap.add_argument("--kind", default="short")
    ap.add_argument("--half", default="heldout", choices=("design", "heldout", "all"))
    ap.add_argument("--data", action="append", default=[], help="labelled rows for files whose rows carry none")
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
    for name, r in pooled(files, args.kind, args.half, labels).items():
        print(f"{name:<40}{args.kind:<10}{args.half:<9}{r['scored']:>3}/{r['rows']:<3} AUROC "
              f"{r['auroc']:.3f} [{r['low']:.2f}, {r['high']:.2f}]")


if __name__ == "__main__":
    main()
