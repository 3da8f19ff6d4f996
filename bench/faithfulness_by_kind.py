"""Faithfulness per kind of grounded text: AUROC with its 95% interval, calls per sample, wall time.

Runs each given metric (one ``ragmeter.evaluate`` run per metric, so its calls and seconds are its
own) on the rows of the bundled ``faithfulness_by_kind.jsonl`` (``--split design|heldout|all``,
``--kinds``), and prints per metric and kind: rows, judge errors, undefined scores, AUROC against
``labels.faithful`` with DeLong's 95% interval (:func:`ragmeter.stats.roc.auroc_interval`; a
lower-is-better metric is negated), judge calls per sample, requests sent (calls less cache hits)
and the run's seconds. Wall time is meaningful only for a run whose calls were all requests (no
cache hit); the table marks the others. ``--cache-only`` sends nothing: a row whose replies are not
all in the cache is a judge error (reported in ``errors``), so a run stopped part-way can be scored
on the rows it finished.

``--derived`` adds, for every ``faithfulness(mode=sentences)`` result, the scores of its offline
combination rules (``veto``) recomputed from its per-claim details without another judge call
(:data:`DERIVED`), so options that differ only in the combination are measured on the very same
judge replies.

Usage::

    python bench/faithfulness_by_kind.py --judge "openai:qwen@http://127.0.0.1:8080/v1" \\
        --metrics "faithfulness,faithfulness(mode=direct),fact_consistency" --split design \\
        [--kinds short,summary,dialogue] [--cache DIR] [--derived] [--out bench/results/X.json]
"""

from __future__ import annotations

import argparse
import json
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from prompt_reuse import LogMark

import ragmeter
from ragmeter.cli.judge_check import split_names
from ragmeter.judges import from_spec
from ragmeter.judges.check import bundled_path, load_labelled
from ragmeter.registry import resolve_name
from ragmeter.stats.roc import auroc_interval

DATA = bundled_path("faithfulness_by_kind.jsonl")
KINDS = ("short", "summary", "dialogue")


def _sentence_rule(veto: str) -> Callable[[dict[str, Any]], float | None]:
    """faithfulness(mode=sentences)'s score recomputed from its details under another ``veto``."""
    def rule(details: dict[str, Any]) -> float | None:
        if "not_claims" not in details:
            return None  # not a mode=sentences result
        claims = details.get("claims", [])
        if not claims:
            return 1.0
        out = []
        for c in claims:
            p = c["p_yes"] if c.get("p_yes") is not None else float(c["supported"])
            vetoed = (veto != "none" and bool(c["numbers_missing"])) or (veto == "numbers_names"
                                                                          and bool(c["names_missing"]))
            out.append(0.0 if vetoed else p)
        return sum(out) / len(out)
    return rule


#: mode=sentences' combination rules recomputed from a result's per-claim details (no judge call):
#: the candidates C2-judge, C2-num, C2-numname of bench/results/faithfulness_by_kind.md
DERIVED: dict[str, Callable[[dict[str, Any]], float | None]] = {
    "C2-judge": _sentence_rule("none"), "C2-num": _sentence_rule("numbers"),
    "C2-numname": _sentence_rule("numbers_names"),
}


def selected(samples: list[Any], kinds: str, split: str) -> list[int]:
    """Indices of the samples of ``kinds`` (comma-separated, or ``all``) in ``split`` (``design``,
    ``heldout`` or ``all``), read from each sample's ``kind`` and ``split`` metadata."""
    wanted = None if kinds == "all" else {k.strip() for k in kinds.split(",") if k.strip()}
    return [i for i, s in enumerate(samples) if (wanted is None or s.metadata.get("kind") in wanted)
            and (split == "all" or s.metadata.get("split") == split)]


def separation(scores: list[float | None], labels: list[bool], sign: float) -> dict[str, Any]:
    """AUROC of ``scores`` (negated when ``sign`` < 0) against ``labels`` with DeLong's 95% interval,
    over the rows with a score."""
    pos = [sign * s for s, y in zip(scores, labels, strict=True) if s is not None and y]
    neg = [sign * s for s, y in zip(scores, labels, strict=True) if s is not None and not y]
    iv = auroc_interval(pos, neg)
    return {"auroc": iv.estimate, "low": iv.low, "high": iv.high, "n_pos": len(pos), "n_neg": len(neg)}


def main() -> None:
    """Run the metrics on the chosen rows and print the per-kind table."""
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--judge", default="none")
    ap.add_argument("--metrics", required=True)
    ap.add_argument("--split", default="design", choices=("design", "heldout", "all"))
    ap.add_argument("--kinds", default=",".join(KINDS))
    ap.add_argument("--data", default=str(DATA))
    ap.add_argument("--cache", default=None, help="judge cache directory (default: ragmeter's)")
    ap.add_argument("--timeout", type=float, default=600.0)
    ap.add_argument("--cache-only", action="store_true",
                    help="send nothing: rows whose replies are not all in the cache are judge errors (dry run)")
    ap.add_argument("--derived", action="store_true", help="add the DERIVED rules from per-claim details")
    ap.add_argument("--server-log", default=None, help="a llama-cpp-python server log: per kind, the share of "
                    "prompt tokens the server reused from the previous prompt (bench/prompt_reuse.py)")
    ap.add_argument("--extra-body", default=None, metavar="JSON",
                    help='extra request fields for the judge backend, e.g. \'{"repeat_penalty": 1.0}\'')
    ap.add_argument("--structured-output", default=None,
                    choices=("auto", "json_schema", "json_object", "prompt"),
                    help="pin the OpenAI-compatible backend's structured-output mode (default: auto)")
    ap.add_argument("--out", default=None)
    args = ap.parse_args()

    kinds = [k.strip() for k in args.kinds.split(",") if k.strip()]
    samples, labels = load_labelled(args.data)
    keep = selected(samples, ",".join(kinds), args.split)
    empty = [k for k in kinds if not any(samples[i].metadata["kind"] == k for i in keep)]
    if empty:
        ap.error(f"{args.data}: no row of kind {', '.join(empty)} in split {args.split}")
    # kind by kind, so each kind's seconds and calls are its own
    rows_out: list[dict[str, Any]] = []
    records: dict[str, list[dict[str, Any]]] = {}
    for name in split_names(args.metrics):
        spec, _ = resolve_name(name)
        sign = 1.0 if spec.higher_is_better else -1.0
        records[name] = []
        for kind in kinds:
            idx = [i for i in keep if samples[i].metadata["kind"] == kind]
            judge = None
            if spec.needs_judge:
                opts: dict[str, Any] = {"timeout": args.timeout, "temperature": 0.0}
                if args.cache:
                    opts["cache"] = args.cache
                if args.cache_only:
                    opts["dry_run"] = True
                if args.extra_body:
                    opts["extra_body"] = json.loads(args.extra_body)
                if args.structured_output:
                    opts["structured_output"] = args.structured_output
                judge = from_spec(args.judge, **opts)
            mark = LogMark(args.server_log) if args.server_log else None
            t0 = time.perf_counter()
            run = ragmeter.evaluate([samples[i] for i in idx], [name], judge=judge, embedder=None)
            seconds = time.perf_counter() - t0
            st = judge.stats() if judge is not None else {}
            ys = [bool(labels[i]["faithful"]) for i in idx]
            results = [rec["metrics"][name] for rec in run.records]
            scores = [r["score"] if not r.get("error") else None for r in results]
            row = {"metric": name, "kind": kind, "split": args.split, "n": len(idx),
                   "errors": sum(bool(r.get("error")) for r in results),
                   "undefined": sum(r["score"] is None and not r.get("error") for r in results),
                   **separation(scores, ys, sign), "seconds": round(seconds, 1),
                   "calls": st.get("calls", 0), "requests": st.get("requests", 0),
                   "cache_hits": st.get("cache_hits", 0),
                   "prompt_tokens": st.get("prompt_tokens", 0),
                   "cached_prompt_tokens": st.get("cached_prompt_tokens", 0),
                   "completion_tokens": st.get("completion_tokens", 0),
                   "calls_per_sample": round(st.get("calls", 0) / len(idx), 2) if idx else None,
                   "format_fallbacks": st.get("format_fallback_paths", {})}
            if mark is not None:
                row["prompt_reuse"] = mark.since()
            rows_out.append(row)
            if args.derived:
                for rule_name, rule in DERIVED.items():
                    derived = [rule(r.get("details") or {}) if not r.get("error") else None for r in results]
                    if any(d is not None for d in derived):
                        rows_out.append({"metric": f"{name} [{rule_name}]", "kind": kind, "split": args.split,
                                         "n": len(idx), **separation(derived, ys, sign)})
            for i, rec in zip(idx, run.records, strict=True):
                records[name].append({"id": rec["id"], "kind": kind, "faithful": labels[i]["faithful"],
                                      **rec["metrics"][name]})
            _print(rows_out[-1 - (len(DERIVED) if args.derived else 0):])
            if args.out:  # after every kind, so a run stopped later keeps what it measured
                _write(args, rows_out, records)


def _write(args: argparse.Namespace, rows: list[dict[str, Any]], records: dict[str, list[dict[str, Any]]]) -> None:
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    Path(args.out).write_text(json.dumps({"judge": args.judge, "data": args.data, "split": args.split,
                                          "extra_body": json.loads(args.extra_body) if args.extra_body else {},
                                          "structured_output": args.structured_output or "auto",
                                          "date": time.strftime("%Y-%m-%d"), "rows": rows,
                                          "records": records}, indent=1, default=str))


def _print(rows: list[dict[str, Any]]) -> None:
    for r in rows:
        if r["auroc"] is None:
            auc = "   n/a"
        elif r["low"] is None:  # no interval on too few rows of a class (DeLong needs two of each)
            auc = f"{r['auroc']:.3f} [   n/a    ]"
        else:
            auc = f"{r['auroc']:.3f} [{r['low']:.2f}, {r['high']:.2f}]"
        extra = ""
        if "seconds" in r:
            cached = " (cache hits)" if r["cache_hits"] else ""
            reused = (f"  prompt {r['cached_prompt_tokens'] / r['prompt_tokens']:.0%} reused"
                      if r.get("cached_prompt_tokens") and r.get("prompt_tokens") else "")
            extra = (f"  err {r['errors']} undef {r['undefined']}  calls/sample {r['calls_per_sample']}"
                     f"  {r['seconds']:.0f} s{cached}{reused}")
        print(f"{r['metric']:<48}{r['kind']:<10}n={r['n']:<4}AUROC {auc}{extra}", flush=True)


if __name__ == "__main__":
    main()
