"""Benchmark: ragmeter's TREC engine against pytrec_eval and ranx (a script, not a test).

    python bench/retrieval.py                  # 100,000 queries x 100 retrieved documents
    python bench/retrieval.py --queries 2000   # a quick run

Seeded data: every query retrieves 100 distinct documents (ids from a 10M-document collection)
and has ~5 graded relevant judgements (grades 1-3; about 3 of them retrieved) plus ~5 judged
non-relevant. Scores are random, distinct within a query and exact in float32: pytrec_eval rounds
scores to 32-bit floats (so scores closer than that tie there, not in trec_eval) and ranx breaks
ties its own way, so only such data lets every system agree exactly.

Each system computes nDCG@10, MAP@100, MRR@10, Recall@100 and P@10 together, from the
dict-of-dicts form, from columnar input (a pandas DataFrame with string columns, the same with
``category`` id columns, a pyarrow Table) and from TREC files, every measurement in its own
subprocess so peak RSS is fair. The timed region is everything from the input form to the
per-query values (conversion included); building the input form (the dicts, the DataFrame) is
not timed. ranx's numba JIT compilation is measured separately (a warm-up with the same calls on
the first 20 queries) and left out of its timings. Each measurement runs ``--repeat`` times (3;
ranx ``--ranx-repeat``, 1) and the fastest time is reported, with the highest peak RSS. Peak RSS
is the process's high-water mark during the timed region (``/proc/self/status`` VmHWM, reset
before timing), so it includes the input held in memory; "extra" is that peak minus the RSS
before timing.

pytrec_eval has no MRR@10; it computes ``recip_rank`` and MRR@10 is derived exactly from it
(``rr if rr >= 1/10 else 0``). Every system's per-query values are checked against ragmeter's.
"""

from __future__ import annotations

import argparse
import contextlib
import gc
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

MEASURES = ("nDCG@10", "MAP@100", "MRR@10", "Recall@100", "P@10")
# --set official: trec_eval's default measures (what ``ragmeter trec`` / ``trec_eval`` print without -m),
# compared column by column with pytrec_eval's "official" (ranx has no bpref / iprec_at_recall: not run)
OFFICIAL = ("num_ret", "num_rel", "num_rel_ret", "map", "gm_map", "Rprec", "bpref", "recip_rank",
            *(f"iprec_at_recall_{x / 10:3.2f}" for x in range(11)),
            *(f"P_{k}" for k in (5, 10, 15, 20, 30, 100, 200, 500, 1000)))
RAGMETER_NAMES = ("ndcg_cut_10", "map_cut_100", "mrr@10", "recall_100", "P_10")
PYTREC_NAMES = ("ndcg_cut_10", "map_cut_100", "recip_rank", "recall_100", "P_10")
RANX_NAMES = ("ndcg@10", "map@100", "mrr@10", "recall@100", "precision@10")
RUNS = [  # (system, input form)
    ("ragmeter", "dict"), ("ragmeter", "pandas"), ("ragmeter", "pandas-cat"), ("ragmeter", "arrow"),
    ("ragmeter", "trec"),
    ("pytrec_eval", "dict"), ("pytrec_eval", "trec"),
    ("ranx", "dict"), ("ranx", "pandas"), ("ranx", "trec"),
]


# ---- data ------------------------------------------------------------------------------------------
def generate(n_queries: int, depth: int, seed: int, workdir: Path) -> None:
    """Write qrels/run as Parquet (columnar input) and TREC files, seeded; skip if already there."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    stamp = workdir / f"data-{n_queries}-{depth}-{seed}.ok"
    if stamp.exists():
        return
    rng = np.random.default_rng(seed)
    qids = np.array([f"q{i}" for i in range(n_queries)], dtype=object)
    span = 10_000_000 // depth  # column j draws from its own id range: distinct within a query
    docnum = rng.integers(0, span, size=(n_queries, depth)) + span * np.arange(depth)
    # distinct within a query and exact in float32 (pytrec_eval keeps scores as 32-bit floats, so
    # scores closer than float32 precision would tie there and not in trec_eval; ranx breaks ties
    # differently from trec_eval): a shuffled 1..depth plus a per-query offset, in float32
    scores = (np.argsort(rng.random((n_queries, depth)), axis=1) + 1 + rng.random((n_queries, 1)))
    scores = scores.astype(np.float32).astype(np.float64)
    run_q = np.repeat(qids, depth)
    run_d = np.array([f"D{x}" for x in docnum.ravel().tolist()], dtype=object)
    # judgements: ~3 retrieved relevant, ~2 unretrieved relevant, ~5 judged non-relevant per query
    n_ret_rel = rng.integers(1, 6, size=n_queries)
    cols = np.argsort(rng.random((n_queries, depth)), axis=1)[:, :10]
    rows_q, rows_d, rows_r = [], [], []
    take = np.arange(10)[None, :] < (n_ret_rel + 5)[:, None]
    qi = np.repeat(np.arange(n_queries), 10).reshape(n_queries, 10)
    judged_docs = docnum[qi, cols]
    grades = np.where(np.arange(10)[None, :] < n_ret_rel[:, None], rng.integers(1, 4, size=(n_queries, 10)), 0)
    rows_q.append(qids[qi[take]])
    rows_d.append(np.array([f"D{x}" for x in judged_docs[take].tolist()], dtype=object))
    rows_r.append(grades[take])
    n_unret = rng.integers(0, 5, size=n_queries)
    uq = np.repeat(np.arange(n_queries), n_unret)
    rows_q.append(qids[uq])
    rows_d.append(np.array([f"U{q}-{j}" for q, j in zip(uq.tolist(), range(len(uq)), strict=True)], dtype=object))
    rows_r.append(rng.integers(1, 4, size=len(uq)))
    qrels_q, qrels_d, qrels_r = (np.concatenate(x) for x in (rows_q, rows_d, rows_r))
    order = np.argsort(np.array([int(q[1:]) for q in qrels_q.tolist()]), kind="stable")
    qrels_q, qrels_d, qrels_r = qrels_q[order], qrels_d[order], qrels_r[order].astype(np.int64)
    pq.write_table(pa.table({"qid": run_q, "docid": run_d, "score": scores.ravel()}), workdir / "run.parquet")
    pq.write_table(pa.table({"qid": qrels_q, "docid": qrels_d, "rel": qrels_r}), workdir / "qrels.parquet")
    with open(workdir / "qrels.txt", "w") as fh:
        fh.writelines(f"{q} 0 {d} {r}\n" for q, d, r in zip(qrels_q.tolist(), qrels_d.tolist(), qrels_r.tolist(),
                                                            strict=True))
    ranks = np.tile(np.arange(1, depth + 1), n_queries).tolist()
    with open(workdir / "run.txt", "w") as fh:
        fh.writelines(f"{q} Q0 {d} {k} {s!r} bench\n" for q, d, k, s in zip(run_q.tolist(), run_d.tolist(), ranks,
                                                                          scores.ravel().tolist(), strict=True))
    stamp.touch()


def nested(qids: list[str], docids: list[str], values: list) -> dict[str, dict[str, object]]:
    """Rows grouped by query -> ``{qid: {docid: value}}`` (setup only, not timed)."""
    out: dict[str, dict[str, object]] = {}
    start = 0
    n = len(qids)
    while start < n:
        q = qids[start]
        end = start
        while end < n and qids[end] == q:
            end += 1
        out[q] = dict(zip(docids[start:end], values[start:end], strict=True))
        start = end
    return out


# ---- one measurement (child process) ---------------------------------------------------------------
def _rss(field: str) -> float:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith(field + ":"):
            return int(line.split()[1]) / 1024.0
    return float("nan")


def child(system: str, form: str, workdir: Path, measure_set: str = "five") -> None:
    """Load the input form (untimed), evaluate (timed), save per-query values, print one JSON line."""
    import pyarrow.parquet as pq

    info: dict[str, float] = {}
    qrels_path, run_path = str(workdir / "qrels.txt"), str(workdir / "run.txt")
    if form in ("dict", "pandas", "pandas-cat", "arrow"):
        qt, rt = pq.read_table(workdir / "qrels.parquet"), pq.read_table(workdir / "run.parquet")
        if form == "dict":
            qrels = nested(qt["qid"].to_pylist(), qt["docid"].to_pylist(), qt["rel"].to_pylist())
            run = nested(rt["qid"].to_pylist(), rt["docid"].to_pylist(), rt["score"].to_pylist())
        elif form == "pandas":
            qrels, run = qt.to_pandas(), rt.to_pandas()
        elif form == "pandas-cat":  # dictionary-encoded id columns (pandas "category")
            qrels = qt.to_pandas().astype({"qid": "category", "docid": "category"})
            run = rt.to_pandas().astype({"qid": "category", "docid": "category"})
        else:
            qrels, run = qt, rt
        del qt, rt
    if system == "ragmeter":
        from ragmeter.trec import trec_evaluate
        from ragmeter.trec.measures import resolve_measures

        resolve_measures(list(RAGMETER_NAMES))  # load the metric registry outside the timed region
    elif system == "pytrec_eval":
        import pytrec_eval
    else:
        import ranx

        if form == "pandas":
            qrels = qrels.astype({"qid": object, "docid": object})
            run = run.astype({"qid": object, "docid": object})
        t0 = time.perf_counter()  # numba JIT warm-up: the same calls on the first 20 queries
        _ranx_eval(ranx, form, *_small(form, qrels if form != "trec" else None, run if form != "trec" else None,
                                       qrels_path, run_path, workdir))
        info["jit"] = time.perf_counter() - t0
    gc.collect()
    with contextlib.suppress(OSError):
        Path("/proc/self/clear_refs").write_text("5")  # reset VmHWM (peak RSS) to the current RSS
    info["rss_before"] = _rss("VmRSS")
    t0, c0 = time.perf_counter(), time.process_time()
    if system == "ragmeter":
        if form == "trec":
            qrels, run = qrels_path, run_path
        names = ["official"] if measure_set == "official" else list(RAGMETER_NAMES)
        res = trec_evaluate(qrels, run, names, per_query=True)
        cols = OFFICIAL if measure_set == "official" else RAGMETER_NAMES
        qids = sorted(res[cols[0]])
        values = np.array([[res[m][q] for q in qids] for m in cols])
    elif system == "pytrec_eval":
        if form == "trec":
            with open(qrels_path) as fq, open(run_path) as fr:
                qrels, run = pytrec_eval.parse_qrel(fq), pytrec_eval.parse_run(fr)
        names = {"official"} if measure_set == "official" else {"ndcg_cut.10", "map_cut.100", "recip_rank",
                                                                 "recall.100", "P.10"}
        res = pytrec_eval.RelevanceEvaluator(qrels, names).evaluate(run)
        qids = sorted(res)
        cols = OFFICIAL if measure_set == "official" else PYTREC_NAMES
        values = np.array([[res[q][m] for q in qids] for m in cols])
    else:
        rr = _ranx_eval(ranx, form, qrels if form != "trec" else qrels_path, run if form != "trec" else run_path)
        qids = sorted(rr.keys())
        values = np.array([[rr.scores[m][q] for q in qids] for m in RANX_NAMES])
    info["time"] = time.perf_counter() - t0
    info["cpu"] = time.process_time() - c0  # every thread of the process
    info["peak"] = _rss("VmHWM")
    if system == "pytrec_eval" and measure_set == "five":
        values[2] = np.where(values[2] >= 0.1, values[2], 0.0)  # MRR@10 from recip_rank, exactly
    np.save(workdir / f"values-{measure_set}-{system}-{form}.npy", values)
    (workdir / f"qids-{measure_set}-{system}-{form}.json").write_text(json.dumps(qids))
    print(json.dumps(info))


def _ranx_eval(ranx, form: str, qrels, run):
    """ranx end to end: build its Qrels/Run from the input form, evaluate, return the Run (scores inside)."""
    if form == "dict":
        rq, rr = ranx.Qrels(qrels), ranx.Run(run)
    elif form == "pandas":
        rq = ranx.Qrels.from_df(qrels, q_id_col="qid", doc_id_col="docid", score_col="rel")
        rr = ranx.Run.from_df(run, q_id_col="qid", doc_id_col="docid", score_col="score")
    else:
        rq, rr = ranx.Qrels.from_file(qrels, kind="trec"), ranx.Run.from_file(run, kind="trec")
    ranx.evaluate(rq, rr, list(RANX_NAMES), return_mean=False, make_comparable=False)
    return rr


def _small(form: str, qrels, run, qrels_path: str, run_path: str, workdir: Path):
    """The first 20 queries of the input, in the same form (for ranx's JIT warm-up)."""
    if form == "dict":
        keep = list(run)[:20]
        return {q: qrels[q] for q in keep if q in qrels}, {q: run[q] for q in keep}
    if form == "pandas":
        keep = set(run["qid"].iloc[:2000].tolist())
        return qrels[qrels["qid"].isin(keep)], run[run["qid"].isin(keep)]
    with open(run_path) as fh:
        run_lines = [line for _, line in zip(range(2000), fh, strict=False)]
    keep = {line.split()[0] for line in run_lines}
    with open(qrels_path) as fh:
        qrels_lines = [line for line in fh if line.split(maxsplit=1)[0] in keep]
    paths = []
    for name, lines in (("warmup-qrels.txt", qrels_lines), ("warmup-run.txt", run_lines)):
        (workdir / name).write_text("".join(lines))
        paths.append(str(workdir / name))
    return paths[0], paths[1]


# ---- driver --------------------------------------------------------------------------------------
def main() -> None:
    """Parse arguments, generate the data, run every measurement, print the table."""
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--queries", type=int, default=100_000)
    ap.add_argument("--depth", type=int, default=100)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--workdir", type=Path, default=Path(tempfile.gettempdir()) / "ragmeter-bench")
    ap.add_argument("--only", nargs="*", default=None, help="systems to run (ragmeter pytrec_eval ranx)")
    ap.add_argument("--forms", nargs="*", default=None, help="input forms to run (dict pandas pandas-cat arrow trec)")
    ap.add_argument("--repeat", type=int, default=3, help="runs per measurement; the fastest is reported")
    ap.add_argument("--ranx-repeat", type=int, default=1, help="runs per ranx measurement (it is slow)")
    ap.add_argument("--set", dest="measure_set", choices=("five", "official"), default="five",
                    help="five: nDCG@10, MAP@100, MRR@10, Recall@100, P@10 (all three systems); official: "
                         "trec_eval's default measures (ragmeter and pytrec_eval)")
    ap.add_argument("--child", nargs=2, metavar=("SYSTEM", "FORM"), help=argparse.SUPPRESS)
    args = ap.parse_args()
    workdir = args.workdir / f"{args.queries}x{args.depth}-s{args.seed}"
    if args.child:
        child(args.child[0], args.child[1], workdir, args.measure_set)
        return
    workdir.mkdir(parents=True, exist_ok=True)
    t0 = time.perf_counter()
    generate(args.queries, args.depth, args.seed, workdir)
    print(f"data: {args.queries:,} queries x {args.depth} docs in {workdir} ({time.perf_counter() - t0:.1f}s)")
    shown = "trec_eval's official set" if args.measure_set == "official" else ", ".join(MEASURES)
    print(f"measures: {shown} (computed together); python {sys.version.split()[0]}, "
          f"{os.cpu_count()} cpu\n", flush=True)
    # measurements of systems not re-run (--only) are kept from the previous run on the same data
    saved = workdir / f"results-{args.measure_set}.json"
    results: dict[tuple[str, str], dict[str, float]] = {}
    if args.only and saved.exists():
        for key, info in json.loads(saved.read_text()).items():
            system, form = key.split("/")
            if system not in args.only:
                results[(system, form)] = info
    # repeats are interleaved (every system once, then again...) so load changes hit all alike
    todo = [(sf, args.ranx_repeat if sf[0] == "ranx" else args.repeat) for sf in RUNS
            if (not args.only or sf[0] in args.only) and (not args.forms or sf[1] in args.forms)
            and not (args.measure_set == "official" and sf[0] == "ranx")]
    runs: dict[tuple[str, str], list[dict[str, float]]] = {sf: [] for sf, _ in todo}
    for rep in range(max((n for _, n in todo), default=0)):
        for (system, form), n in todo:
            if rep >= n or (rep and not runs[(system, form)]):
                continue
            cmd = [sys.executable, __file__, "--queries", str(args.queries), "--depth", str(args.depth), "--seed",
                   str(args.seed), "--workdir", str(args.workdir), "--set", args.measure_set, "--child", system, form]
            proc = subprocess.run(cmd, capture_output=True, text=True)
            if proc.returncode != 0:
                print(f"{system} ({form}) failed:\n{proc.stderr[-2000:]}")
                continue
            runs[(system, form)].append(json.loads(proc.stdout.strip().splitlines()[-1]))
            print(f"  run {rep + 1}: {system:<12} {form:<10} {runs[(system, form)][-1]['time']:.2f} s", flush=True)
    for key, got in runs.items():
        if got:
            results[key] = min(got, key=lambda r: r["time"])
            results[key]["peak"] = max(r["peak"] for r in got)
            results[key]["cpu"] = min(r.get("cpu", float("nan")) for r in got)
    saved.write_text(json.dumps({f"{k[0]}/{k[1]}": v for k, v in results.items()}, indent=1))
    order = {key: i for i, key in enumerate(RUNS)}
    _report(dict(sorted(results.items(), key=lambda kv: order.get(kv[0], 99))), workdir, args.measure_set)


def _report(results: dict[tuple[str, str], dict[str, float]], workdir: Path, measure_set: str) -> None:
    ref = results.get(("ragmeter", "dict"))
    ref_values = np.load(workdir / f"values-{measure_set}-ragmeter-dict.npy") if ref else None
    ref_qids = json.loads((workdir / f"qids-{measure_set}-ragmeter-dict.json").read_text()) if ref else None
    pt = results.get(("pytrec_eval", "dict"), {}).get("time")
    print("\n| system | input | time (s) | CPU (s) | peak RSS (MB) | extra RSS (MB) | pytrec_eval(dict) / this "
          "| ranx(same input) / this | max abs diff vs ragmeter |")
    print("|---|---|---:|---:|---:|---:|---:|---:|---:|")
    for (system, form), info in results.items():
        values = np.load(workdir / f"values-{measure_set}-{system}-{form}.npy")
        qids = json.loads((workdir / f"qids-{measure_set}-{system}-{form}.json").read_text())
        diff = "n/a"
        if ref_values is not None and qids == ref_qids:
            keep = np.ones(len(values), dtype=bool)
            if measure_set == "official" and system == "pytrec_eval":  # trec_eval 9's iprec rounding
                keep = np.array([not n.startswith("iprec") for n in OFFICIAL])
            diff = f"{np.abs(values[keep] - ref_values[keep]).max():.1e}"
        elif ref_values is not None:
            diff = "qids differ"
        rx = results.get(("ranx", form), {}).get("time")
        r1 = f"{pt / info['time']:.2f}x" if pt else "-"
        r2 = f"{rx / info['time']:.2f}x" if rx else "-"
        name = system + (f" (+{info['jit']:.1f}s JIT warm-up)" if "jit" in info else "")
        cpu = info.get("cpu", float("nan"))
        print(f"| {name} | {form} | {info['time']:.2f} | {cpu:.2f} | {info['peak']:.0f} "
              f"| {info['peak'] - info['rss_before']:.0f} | {r1} | {r2} | {diff} |")
    _ratios(results)


def _ratios(results: dict[tuple[str, str], dict[str, float]]) -> None:
    """The targets against pytrec_eval (and ranx), from the same run: ragmeter's time over pytrec_eval's from
    dicts (<= 0.70x wanted) and pytrec_eval's parse + evaluate time over ragmeter's from TREC files (>= 3x)."""
    print()
    for peer in ("pytrec_eval", "ranx"):
        for form, target in (("dict", "<= 0.70x"), ("trec", ">= 3x faster")):
            ours, theirs = results.get(("ragmeter", form)), results.get((peer, form))
            if not ours or not theirs:
                continue
            wall, cpu = ours["time"] / theirs["time"], ours.get("cpu", float("nan")) / theirs.get("cpu", float("nan"))
            if form == "dict":
                print(f"from dicts:      ragmeter takes {wall:.2f}x {peer}'s time (CPU {cpu:.2f}x)"
                      + (f"; target {target}" if peer == "pytrec_eval" else ""))
            else:
                print(f"from TREC files: ragmeter is {1 / wall:.2f}x faster than {peer} (CPU {1 / cpu:.2f}x)"
                      + (f"; target {target}" if peer == "pytrec_eval" else ""))


if __name__ == "__main__":
    main()
