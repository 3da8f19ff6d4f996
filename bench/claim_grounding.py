"""How many claims a judge extracted are absent from the answer: claim grounding over a saved run.

Reads a ``bench/judge_quality.py --out`` file of a claims-mode faithfulness run and the labelled rows
it ran on, applies :func:`ragmeter.metrics.generation._grounding.grounding` to every extracted claim
(no model) and prints the count and every claim below the threshold, for reading by eye.

Usage::

    python bench/claim_grounding.py bench/results/judge_quality_qwen0.5b_v3_faithfulness_72rows.json
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from ragmeter.metrics.generation._grounding import GROUNDING_THRESHOLD, grounding

DATA = Path(__file__).resolve().parents[1] / "src" / "ragmeter" / "data" / "validation" / "judge_validation.jsonl"


def main() -> None:
    """Print the grounding of every claim in a saved faithfulness run."""
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("results")
    ap.add_argument("--data", default=str(DATA))
    args = ap.parse_args()
    rows = [json.loads(line) for line in Path(args.data).read_text().splitlines() if line.strip()]
    records = json.loads(Path(args.results).read_text())["records"]
    total, flagged = 0, []
    for rec, row in zip(records, rows, strict=False):
        for name, r in rec["metrics"].items():
            if not name.startswith("faithfulness"):
                continue
            for c in (r.get("details") or {}).get("claims", []):
                total += 1
                g = grounding(c["claim"], row["answer"], row["query"])
                if g < GROUNDING_THRESHOLD:
                    flagged.append((row["id"], round(g, 2), c["claim"], row["answer"]))
    print(f"claims: {total}  ungrounded (< {GROUNDING_THRESHOLD}): {len(flagged)}")
    for rid, g, claim, answer in flagged:
        print(f"{rid}\t{g}\t{claim[:80]!r}\tanswer: {answer[:80]!r}")


if __name__ == "__main__":
    main()
