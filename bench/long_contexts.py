"""Labelled rows whose retrieved contexts are longer than a small judge's context window.

Each selected row keeps its question, answer and labels; its contexts become ``--chunks`` contexts:
the other selected rows' distinct contexts (the next ones in file order, wrapping around) with the
row's own context at rank ``--rank`` (1 = first), as a retriever returns the passage that holds the
answer among others. On the design summaries with 8 chunks a row carries about 21,000 characters
(about 5,000 tokens), past a llama.cpp server started with ``-c 4096``.

Usage::

    python bench/long_contexts.py --data src/ragmeter/data/validation/faithfulness_by_kind.jsonl \
        --kind summary --split design --chunks 8 --rank 2 --out bench/data/faithfulness_long_design_summary.jsonl
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any


def long_rows(rows: list[dict[str, Any]], chunks: int, rank: int) -> list[dict[str, Any]]:
    """The rows with their contexts widened as the module docstring says."""
    texts = list(dict.fromkeys("\n\n".join(r["contexts"]) for r in rows))
    if chunks > len(texts):
        raise SystemExit(f"--chunks {chunks}: only {len(texts)} distinct contexts among the selected rows")
    out = []
    for r in rows:
        own = texts.index("\n\n".join(r["contexts"]))
        others = [texts[(own + k) % len(texts)] for k in range(1, chunks)]
        out.append({**r, "contexts": [*others[:rank - 1], texts[own], *others[rank - 1:]]})
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--data", required=True)
    ap.add_argument("--kind")
    ap.add_argument("--split")
    ap.add_argument("--chunks", type=int, default=8)
    ap.add_argument("--rank", type=int, default=2)
    ap.add_argument("--out", required=True)
    a = ap.parse_args()
    rows = [json.loads(line) for line in Path(a.data).read_text().splitlines() if line.strip()]
    rows = [r for r in rows if a.kind in (None, r.get("kind")) and a.split in (None, r.get("split"))]
    out = long_rows(rows, a.chunks, a.rank)
    Path(a.out).write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in out))
    sizes = sorted(sum(len(c) for c in r["contexts"]) for r in out)
    print(f"{len(out)} rows -> {a.out}; contexts {sizes[0]:,}-{sizes[-1]:,} characters")


if __name__ == "__main__":
    main()
