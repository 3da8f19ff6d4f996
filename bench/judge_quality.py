"""How well each judged metric separates good from bad answers, on the hand-labelled validation set.

Runs the judged metrics over ``examples/validation/judge_validation.jsonl`` with a judge (any spec,
e.g. a local llama.cpp server) and prints, per metric, the AUROC against the human label and the
mean score of the positive and negative rows (the gap). AUROC 0.5 is chance, 1.0 is perfect
separation. Labels: ``faithful`` for faithfulness / hallucination_rate (reversed),
``relevant`` for answer_relevancy, per-chunk ``context_relevance`` for context_relevancy's chunk
ratings, and ``correct >= 4`` for correctness and answer_grade (plus Spearman's rho against the
1-5 grade). passage_recall runs on ``passage_recall_validation.jsonl`` (``--data``): label
``complete`` (every essential section fully present), plus Spearman's rho and the mean absolute
error between the judged 1-5 final and the final computed from the human section scores.

Usage::

    python bench/judge_quality.py --judge "openai:qwen@http://127.0.0.1:8080/v1" [--embedder st:all-MiniLM-L6-v2]
        [--limit N] [--concurrency 2] [--out bench/results/judge_quality_qwen0.5b.json]
    python bench/judge_quality.py --judge ... --metrics passage_recall \
        --data examples/validation/passage_recall_validation.jsonl
"""

from __future__ import annotations

import argparse
import json
import math
import time
from pathlib import Path
from typing import Any

import numpy as np
from scipy import stats

import ragmeter
from ragmeter import passage_recall_score
from ragmeter.io import read_samples
from ragmeter.judges import from_spec

DATA = Path(__file__).resolve().parents[1] / "examples" / "validation" / "judge_validation.jsonl"
PASSAGES = DATA.with_name("passage_recall_validation.jsonl")
METRICS = ["faithfulness", "hallucination_rate", "answer_relevancy", "context_relevancy", "correctness",
           "answer_grade", "passage_recall"]
#: offline metrics scored against the same labels, for comparison (no judge: ``--judge none``)
OFFLINE = {"lexical_faithfulness": "faithful", "token_f1": "correct", "rouge_l": "correct",
           "semantic_similarity": "correct"}


def auroc(pos: list[float], neg: list[float]) -> float:
    """P(score of a random positive > score of a random negative), ties counting 1/2 (Mann-Whitney U)."""
    if not pos or not neg:
        return math.nan
    u = stats.mannwhitneyu(pos, neg, alternative="two-sided").statistic
    return float(u) / (len(pos) * len(neg))


def separation(records: list[dict[str, Any]], labels: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """One row per metric: n scored, errors, AUROC, mean of positives and negatives."""
    rows = []
    for name in records[0]["metrics"]:
        metric = name.split("(")[0].split("@")[0]
        if metric not in METRICS and metric not in OFFLINE:
            continue
        pos, neg, errors = [], [], 0
        graded: list[tuple[float, int]] = []
        for rec, lab in zip(records, labels, strict=True):
            r = rec["metrics"][name]
            if r["error"]:
                errors += 1
                continue
            if r["score"] is None:
                continue
            score = r["score"]
            if metric == "faithfulness" or OFFLINE.get(metric) == "faithful":
                (pos if lab["faithful"] else neg).append(score)
            elif metric == "hallucination_rate":
                (pos if lab["faithful"] else neg).append(-score)
            elif metric == "answer_relevancy":
                (pos if lab["relevant"] else neg).append(score)
            elif metric == "context_relevancy":
                for chunk, rel in zip(r["details"]["chunks"], lab["context_relevance"], strict=True):
                    (pos if rel else neg).append(chunk["rating"] if chunk["rating"] is not None else 0.0)
            elif metric == "passage_recall":
                (pos if lab["complete"] else neg).append(score)
                human = passage_recall_score(lab["essential_covered"], lab["bonus_covered"])
                graded.append((r["details"]["final"], human))
            else:
                (pos if lab["correct"] >= 4 else neg).append(score)
                graded.append((score, lab["correct"]))
        row = {"metric": name, "n": len(pos) + len(neg), "errors": errors, "auroc": auroc(pos, neg),
               "mean_pos": float(np.mean(pos)) if pos else math.nan,
               "mean_neg": float(np.mean(neg)) if neg else math.nan}
        if metric == "hallucination_rate":
            row["mean_pos"], row["mean_neg"] = -row["mean_pos"], -row["mean_neg"]
        if graded:
            row["spearman"] = float(stats.spearmanr([g[0] for g in graded], [g[1] for g in graded]).statistic)
        if metric == "passage_recall" and graded:
            row["mae_final"] = float(np.mean([abs(g[0] - g[1]) for g in graded]))
        rows.append(row)
    return rows


def hard_score(details: dict[str, Any]) -> float | None:
    """The hard-verdict score of a faithfulness result whose score is probability-weighted: the
    direct verdict as 1/0, or the share of claims with a hard "supported" verdict; None when the
    result has no hard verdict beside its score (it already is the hard score)."""
    if details.get("scoring") == "probability" and "verdict" in details:
        return 1.0 if details["verdict"] == "yes" else 0.0
    claims = details.get("claims") or []
    if claims and any(c.get("p_yes") is not None for c in claims):
        return sum(c["supported"] is True for c in claims) / len(claims)
    return None


def hard_rows(records: list[dict[str, Any]], labels: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """AUROC of the hard verdicts behind probability-weighted faithfulness scores (``name [hard]``)."""
    out = []
    for name in records[0]["metrics"]:
        if name.split("(")[0] not in ("faithfulness", "hallucination_rate"):
            continue
        halluc = name.startswith("hallucination_rate")
        pos, neg = [], []  # hard faithfulness (the share supported), whichever metric it came from
        for rec, lab in zip(records, labels, strict=True):
            r = rec["metrics"][name]
            if r["error"] or r["score"] is None:
                continue
            h = hard_score(r["details"] or {})
            if h is None:
                h = 1.0 - r["score"] if halluc else r["score"]
            (pos if lab["faithful"] else neg).append(h)
        mp, mn = (float(np.mean(x)) if x else math.nan for x in (pos, neg))
        out.append({"metric": f"{name} [hard]", "n": len(pos) + len(neg), "errors": 0, "auroc": auroc(pos, neg),
                    "mean_pos": 1.0 - mp if halluc else mp, "mean_neg": 1.0 - mn if halluc else mn})
    return out


def position_profile(records: list[dict[str, Any]], labels: list[dict[str, Any]]) -> dict[str, list[Any]]:
    """Share of "yes" per item position (claim 1, 2, 3+; chunk 1, 2, 3+), against the human rate
    for chunks: a judge that copies a pattern answers by position, not by content."""
    out: dict[str, list[Any]] = {}
    for name in records[0]["metrics"]:
        base = name.split("(")[0]
        if base not in ("faithfulness", "context_relevancy"):
            continue
        yes: list[list[float]] = [[], [], []]
        human: list[list[float]] = [[], [], []]
        for rec, lab in zip(records, labels, strict=True):
            d = rec["metrics"][name]["details"] or {}
            if base == "faithfulness":
                for i, c in enumerate(d.get("claims", [])):
                    yes[min(i, 2)].append(float(c["supported"] is True))
            else:
                for i, (c, h) in enumerate(zip(d.get("chunks", []), lab["context_relevance"], strict=False)):
                    yes[min(i, 2)].append(float((c["rating"] or 0) >= 5))
                    human[min(i, 2)].append(float(h))
        out[name] = [{"position": ("1", "2", "3+")[k], "n": len(yes[k]),
                      "judged_yes": float(np.mean(yes[k])) if yes[k] else None,
                      "human_yes": float(np.mean(human[k])) if human[k] else None} for k in range(3)]
    return out


def split_names(text: str) -> list[str]:
    """Split a comma-separated metric list, keeping commas inside parentheses."""
    out, depth, cur = [], 0, ""
    for ch in text:
        depth += (ch == "(") - (ch == ")")
        if ch == "," and depth == 0:
            out.append(cur.strip())
            cur = ""
        else:
            cur += ch
    return [n for n in [*out, cur.strip()] if n]


def rescore(path: str) -> None:
    """Recompute and store the table of a saved ``--out`` file (after a fix to the arithmetic)."""
    saved = json.loads(Path(path).read_text())
    rows = [json.loads(line) for line in DATA.read_text().splitlines() if line.strip()]
    labels = [r["labels"] for r in rows][: len(saved["records"])]
    saved["rows"] = separation(saved["records"], labels) + hard_rows(saved["records"], labels)
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
    rows += hard_rows(run.records, labels)
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
