"""What the default's verdict list quotes, and the judge's P(yes) after each kind of quote, beside
another reading of the same claims: no judge call (method log ``bench/results/faithfulness_by_kind.md``,
section 164a).

Each claim of a recorded ``faithfulness`` result (``bench/faithfulness_by_kind.py``'s records) is
classed by the quote the judge wrote before its verdict (:func:`quote_kind`):

- ``none``: the judge wrote "none" (no sentence states it);
- ``claim copied``: the quote is the claim written back, its word set (lower-cased letters and
  digits) with a Jaccard overlap of at least :data:`COPIED` with the claim's;
- ``other sentence``: anything else (a context sentence, most often).

Per kind and label of the answer (faithful or not), the script prints the number of claims and
the mean P(yes) of the default and of ``--other`` (a metric of the same records, e.g.
``faithfulness(verdicts=given_quotes)``), over the claims both judged with a P(yes).

Usage::

    python bench/quote_kinds.py --other "faithfulness(verdicts=given_quotes)" \\
        bench/results/faithfulness_fresh_more_design_llamacpp_nocache_GQ.json \\
        bench/results/faithfulness_by_kind_design_llamacpp_nocache_GQ.json
"""

from __future__ import annotations

import argparse
import json
import re
from pathlib import Path
from typing import Any

#: the least Jaccard overlap of word sets for a quote to count as the claim copied back
COPIED = 0.8
KINDS = ("none", "claim copied", "other sentence")


def _word_set(text: str) -> set[str]:
    return set(re.sub(r"[^a-z0-9 ]", "", text.lower()).split())


def quote_kind(quote: str, claim: str) -> str:
    """``none``, ``claim copied`` or ``other sentence`` (the module docstring)."""
    q, c = _word_set(quote), _word_set(claim)
    if not q or quote.strip().lower() == "none":
        return "none"
    return "claim copied" if len(q & c) / len(q | c) >= COPIED else "other sentence"


def tally(files: list[dict[str, Any]], other: str) -> dict[tuple[str, bool], list[float]]:
    """``(kind, faithful) -> [claims, sum of the default's P(yes), sum of the other's]``."""
    out: dict[tuple[str, bool], list[float]] = {}
    for saved in files:
        theirs = {r["id"]: r for r in saved["records"][other]}
        for r in saved["records"]["faithfulness"]:
            mine = (r.get("details") or {}).get("claims") or []
            alt = ((theirs.get(r["id"]) or {}).get("details") or {}).get("claims") or []
            for a, b in zip(mine, alt, strict=False):
                if "quote" not in a or a.get("p_yes") is None or b.get("p_yes") is None:
                    continue
                cell = out.setdefault((quote_kind(a["quote"], a["claim"]), bool(r["faithful"])), [0, 0.0, 0.0])
                cell[0] += 1
                cell[1] += a["p_yes"]
                cell[2] += b["p_yes"]
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("results", nargs="+", help="results files of bench/faithfulness_by_kind.py")
    ap.add_argument("--other", required=True, help="the metric whose P(yes) is shown beside the default's")
    args = ap.parse_args()
    cells = tally([json.loads(Path(f).read_text(encoding="utf-8")) for f in args.results], args.other)
    total = sum(int(c[0]) for c in cells.values()) or 1
    print(f"{'quote':15} {'answer':10} {'claims':>6}  {'share':>5}  P(yes) default  {args.other}")
    for kind in KINDS:
        for faithful in (True, False):
            n, mine, theirs = cells.get((kind, faithful), [0, 0.0, 0.0])
            if n:
                print(f"{kind:15} {'faithful' if faithful else 'unfaithful':10} {int(n):6}  {n / total:5.0%}  "
                      f"{mine / n:14.2f}  {theirs / n:.2f}")


if __name__ == "__main__":
    main()
