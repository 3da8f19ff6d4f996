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
    python bench/judge_quality.py --judge ... --config ragmeter.yaml --label grounded_answer=correct>=4

``--label NAME=FIELD`` / ``NAME=FIELD>=K`` (repeatable) gives a metric without a built-in rule
(a rubric from ``--config``'s ``rubrics:``, any registered metric) its label rule, or replaces a
built-in one, as ``ragmeter judge-check --label`` does (:mod:`ragmeter.judges.label_rules`);
without ``--metrics``, the metrics named by ``--label`` are run.
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

from prompt_reuse import LogMark

import ragmeter
from ragmeter.cli.judge_check import split_names
from ragmeter.judges import from_spec
from ragmeter.judges.check import _check_labels, bundled_path, bundled_sets, load_labelled, position_profile, separation
from ragmeter.judges.label_rules import parse_label_option, resolve_rules, row_lines
from ragmeter.registry import canonical_name

DATA = bundled_path("judge_validation.jsonl")
PASSAGES = bundled_path("passage_recall_validation.jsonl")
METRICS = list(bundled_sets())


def rescore(path: str) -> None:
    """Recompute and store the table of a saved ``--out`` file (after a fix to the arithmetic)."""
    saved = json.loads(Path(path).read_text())
    rows = [json.loads(line) for line in Path(saved.get("data") or DATA).read_text().splitlines() if line.strip()]
    labels = [r["labels"] for r in rows][: len(saved["records"])]
    rules = resolve_rules(list(saved["records"][0]["metrics"]), saved.get("label_rules"))
    saved["rows"] = separation(saved["records"], labels, rules)
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
    ap.add_argument("--metrics", default=None, help=f"default: the --label metrics, else {','.join(METRICS)}")
    ap.add_argument("--label", action="append", default=[], metavar="NAME=FIELD[>=K]",
                    help="label rule for metric NAME (repeatable), as `ragmeter judge-check --label`")
    ap.add_argument("--config", default=None, help="a ragmeter.yaml whose rubrics: to register")
    ap.add_argument("--extra-body", default=None, metavar="JSON",
                    help='extra request fields for the judge backend, e.g. \'{"repeat_penalty": 1.0}\'')
    ap.add_argument("--server-log", default=None, help="a llama-cpp-python server log: the share of prompt tokens "
                    "the server reused from the previous prompt during the run (bench/prompt_reuse.py)")
    ap.add_argument("--out", default=None, help="write the table and per-row results as JSON here")
    args = ap.parse_args()

    if args.config:
        from ragmeter.config import load_config

        load_config(args.config)  # registers its rubrics
    given = dict(parse_label_option(text) for text in args.label)
    names = [canonical_name(m) for m in
             (split_names(args.metrics) if args.metrics else list(given) or METRICS)]
    rules = resolve_rules(names, given)
    path = str(args.data or DATA)
    samples, labels = load_labelled(path, args.limit)
    lines = row_lines(path, len(labels))
    for name in rules:  # a missing or unreadable label is an error before any judge call
        _check_labels(name, path, labels, rules[name], lines)
    judge = None
    if args.judge != "none":
        extra: dict = {} if args.concurrency is None else {"concurrency": args.concurrency}
        if args.extra_body:
            extra["extra_body"] = json.loads(args.extra_body)
        judge = from_spec(args.judge, timeout=args.timeout, temperature=0.0, **extra)
    embedder = None
    if args.embedder:
        from ragmeter.embedders import from_spec as emb_spec

        embedder = emb_spec(args.embedder)
    mark = LogMark(args.server_log) if args.server_log else None
    t0 = time.perf_counter()
    run = ragmeter.evaluate(samples, names, judge=judge, embedder=embedder)
    seconds = time.perf_counter() - t0
    reuse = mark.since() if mark is not None else None
    rows = separation(run.records, labels, rules)
    stats_ = run.run.get("judge", {})
    print(f"judge: {args.judge}  embedder: {args.embedder}  rows: {len(samples)}  "
          f"seconds: {seconds:.0f}  requests: {stats_.get('requests')}")
    if stats_.get("cached_prompt_tokens"):  # the server's own count, from each reply's usage
        print(f"prompt tokens: {stats_['prompt_tokens']:,}, {stats_['cached_prompt_tokens']:,} "
              f"({stats_['cached_prompt_tokens'] / stats_['prompt_tokens']:.0%}) reused from the server's prompt cache")
    if reuse is not None:
        print(f"prompt tokens reused by the server: {reuse['reused_share']} ({reuse['reused_tokens']} of "
              f"{reuse['reused_tokens'] + reuse['evaluated_tokens']}, {reuse['requests']} requests logged); "
              f"server time: {reuse['prompt_ms'] / 1000:.0f} s on prompts, {reuse['generate_ms'] / 1000:.0f} s "
              f"writing {reuse['generated_tokens']} tokens")
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
        Path(args.out).write_text(json.dumps({"judge": args.judge, "embedder": args.embedder, "data": path,
                                              "label_rules": {n: str(r) for n, r in rules.items()}, "rows": rows,
                                              "positions": profile, "seconds": seconds, "judge_stats": stats_,
                                              "prompt_reuse": reuse,
                                              "concurrency": judge.concurrency_info() if judge else None,
                                              "records": run.records}, indent=1, default=str))


if __name__ == "__main__":
    main()
