"""How well each judged metric separates good from bad answers, on the hand-labelled validation set.

Runs the judged metrics over the bundled ``judge_validation.jsonl`` (``src/ragmeter/data/validation/``)
with a judge (any spec, e.g. a local llama.cpp server) and prints, per metric, the AUROC against the human label and the
mean score of the positive and negative rows (the gap). AUROC 0.5 is chance, 1.0 is perfect
separation. Labels: ``faithful`` for faithfulness / hallucination_rate (reversed),
``relevant`` for answer_relevancy, per-chunk ``context_relevance`` for context_relevancy's chunk
ratings, and ``correct >= 4`` for correctness and answer_grade (plus Spearman's rho against the
1-5 grade). passage_recall runs on ``passage_recall_validation.jsonl`` (``--data``): label
``complete`` (every essential section fully present), plus Spearman's rho and the mean absolute
error between the judged 1-5 final and the final computed from the human section scores.

The arithmetic (label rules, AUROC, hard-verdict rows, position profile) lives in
:mod:`ragmeter.judges.check`, which ``ragmeter judge-check`` uses too; this script adds the offline
metrics, the embedder and the per-row dump. For hallucination_rate, mean+ / mean- are the mean
scores of the faithful / unfaithful rows.

Usage::

    python bench/judge_quality.py --judge "openai:qwen@http://127.0.0.1:8080/v1" [--embedder st:all-MiniLM-L6-v2]
        [--limit N] [--concurrency 2] [--out bench/results/judge_quality_qwen0.5b.json]
    python bench/judge_quality.py --judge ... --metrics passage_recall \
        --data src/ragmeter/data/validation/passage_recall_validation.jsonl
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

import ragmeter
from ragmeter.cli.judge_check import split_names
from ragmeter.io import read_samples
from ragmeter.judges import from_spec
from ragmeter.judges.check import BUNDLED, bundled_path, position_profile, separation

DATA = bundled_path("judge_validation.jsonl")
PASSAGES = bundled_path("passage_recall_validation.jsonl")
METRICS = list(BUNDLED)


def rescore(path: str) -> None:
    """Recompute and store the table of a saved ``--out`` file (after a fix to the arithmetic)."""
    saved = json.loads(Path(path).read_text())
    rows = [json.loads(line) for line in DATA.read_text().splitlines() if line.strip()]
    labels = [r["labels"] for r in rows][: len(saved["records"])]
    saved["rows"] = separation(saved["records"], labels)
    Path(path).write_text(json.dumps(saved, indent=1, default=str))
    for r in saved["rows"]:
        print(f"{r['metric']:<42}{r['n']:>5}{r['errors']:>8}{r['auroc']:>8.3f}{r['mean_pos']:>8.3f}{r['mean_neg']:>8.3f}")


def main() -> None:
    """Run the judged metrics on the validation set and print the separation table."""
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--judge", required=True, help='a judge spec, or "none" for offline metrics only')
    ap.add_argument("--embedder", default=None)
    ap.add_argument("--limit", type=int, default=None)
    ap.add_argument("--data", default=None, help=f"labelled rows (default {DATA.name}; for passage_recall: "
                    f"{PASSAGES.name})")
    ap.add_argument("--concurrency", type=int, default=None,
                    help="most requests in flight (default: the judge's default, adaptive)")
    ap.add_argument("--timeout", type=float, default=600.0)
    ap.add_argument("--metrics", default=",".join(METRICS))
    ap.add_argument("--out", default=None, help="write the table and per-row results as JSON here")
    args = ap.parse_args()

    samples = [s for s in read_samples(args.data or DATA)][: args.limit]
    labels = [s.metadata["labels"] for s in samples]
    judge = None
    if args.judge != "none":
        extra = {} if args.concurrency is None else {"concurrency": args.concurrency}
        judge = from_spec(args.judge, timeout=args.timeout, temperature=0.0, **extra)
    embedder = None
    if args.embedder:
        from ragmeter.embedders import from_spec as emb_spec

        embedder = emb_spec(args.embedder)
    t0 = time.perf_counter()
    run = ragmeter.evaluate(samples, split_names(args.metrics), judge=judge, embedder=embedder)
    seconds = time.perf_counter() - t0
    rows = separation(run.records, labels)
    stats_ = run.run.get("judge", {})
    print(f"judge: {args.judge}  embedder: {args.embedder}  rows: {len(samples)}  "
          f"seconds: {seconds:.0f}  requests: {stats_.get('requests')}")
    print(f"{'metric':<42}{'n':>5}{'errors':>8}{'AUROC':>8}{'mean+':>8}{'mean-':>8}{'rho':>7}")
    for r in rows:
        rho = f"{r['spearman']:.2f}" if "spearman" in r else ""
        print(f"{r['metric']:<42}{r['n']:>5}{r['errors']:>8}{r['auroc']:>8.3f}{r['mean_pos']:>8.3f}"
              f"{r['mean_neg']:>8.3f}{rho:>7}")
    profile = position_profile(run.records, labels)
    for name, prof in profile.items():
        cells = "  ".join(f"#{p['position']}: {p['judged_yes']:.2f}" + (f" (human {p['human_yes']:.2f})"
                                                                        if p["human_yes"] is not None else "")
                          + f" n={p['n']}" for p in prof if p["n"])
        print(f"yes-rate by position, {name}: {cells}")
    if args.out:
        Path(args.out).parent.mkdir(parents=True, exist_ok=True)
        Path(args.out).write_text(json.dumps({"judge": args.judge, "embedder": args.embedder, "rows": rows,
                                              "positions": profile, "seconds": seconds, "judge_stats": stats_,
                                              "concurrency": judge.concurrency_info() if judge else None,
                                              "records": run.records}, indent=1, default=str))


if __name__ == "__main__":
    main()
