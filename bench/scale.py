"""End-to-end throughput of the engines (a script that prints Markdown tables, not a timed test).

    python bench/scale.py                      # everything: 1,000,000 retrieval rows, 10,000 judged samples
    python bench/scale.py --n 1000 --rows 200000 --sample-rows 20000    # a quick run
    python bench/scale.py --only retrieval     # or: --only judged
    python bench/scale.py --only retrieval --rows 200000 --ray-rows 200000 --sample-rows 5000 --no-ray
                                               # Parquet, JSONL and CSV rows per CPU-second at 200k rows

**(a) Retrieval metrics** (``mrr``, ``ndcg@10``) over ``--rows`` seeded RAG samples in one Parquet
file (10 id-only contexts per row out of 1,000 documents, 1-3 labelled ids, each a retrieved id
with probability 1/2; generated once into ``--data-dir``). Each measurement runs in its own
subprocess, which reports its wall time, CPU time and peak RSS (``ru_maxrss``), after an
``os.sync()``, each output removed once read (no measurement pays the kernel's writeback of an
earlier one's ``results.jsonl``): the local engine
as ``ragmeter eval`` runs it (``evaluate_file``: the columnar fast path), the Sample path
(``ragmeter.evaluate(read_samples(...))``, on ``--sample-rows`` rows: it is ~20x slower), and the
Ray engine (``--ray-rows`` rows; its workers' memory is not in the driver's RSS; its workers at
the default priority, ``RAY_worker_niceness=0``, as the local engine runs; over the local
engine's own file when ``--ray-rows`` equals ``--rows``, else over the first ``--ray-rows`` rows
in row groups of the same 100,000 rows; its clock starts once ``ray.init`` has returned, the
cluster's start being no part of the engine's run). The first
``--ray-rows`` rows are also written as JSONL and as CSV (``contexts`` / ``relevant`` JSON-encoded
in their cells) and run the same way; a second table gives the rows per CPU-second of the three
inputs and Parquet's ratio to each (target: at most 2x). For Ray, the table's CPU is the driver's
alone; lines below it give the driver's CPU-seconds per 1M rows and the CPU of the cluster's own
processes (workers, raylet, GCS: the processes under the bench's, read from ``/proc``).

**(b) Judged metrics** (``context_relevancy``: 1 call per sample; ``faithfulness``: 2 chained calls)
over ``--n`` samples against the loopback OpenAI-compatible server (``tests/judges/fake_server.py``
with the rule-based judge of ``tests/metrics/generation/rules.py``) with ``--latency`` seconds per
reply, no cache. The bound is ``workers x concurrency / latency`` calls per second; the table
gives the share of it achieved (target >= 85 %) and the calls per sample.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
RETRIEVAL_METRICS = ["mrr", "ndcg@10"]
JUDGED_METRICS = ["context_relevancy", "faithfulness"]


# ---- data ---------------------------------------------------------------------------------------


def make_parquet(path: Path, rows: int, *, seed: int = 0, k: int = 10, docs: int = 1000) -> Path:
    """Write ``rows`` seeded id-labelled RAG samples to ``path`` (skipped when it already exists)."""
    import numpy as np
    import pyarrow as pa
    import pyarrow.parquet as pq

    if path.exists():
        return path
    rng = np.random.default_rng(seed)
    schema = pa.schema([("id", pa.string()), ("contexts", pa.list_(pa.struct([("id", pa.string())]))),
                        ("relevant", pa.list_(pa.string()))])
    tmp = path.with_suffix(".tmp")
    with pq.ParquetWriter(tmp, schema) as writer:
        for start in range(0, rows, 100_000):
            m = min(100_000, rows - start)
            ids = pa.array([f"q{i}" for i in range(start, start + m)])
            cid = rng.integers(0, docs, size=m * k)
            ctx_ids = pa.array(np.char.add("d", cid.astype(str)))
            ctx = pa.ListArray.from_arrays(pa.array(np.arange(0, m * k + 1, k, dtype=np.int32)),
                                           pa.StructArray.from_arrays([ctx_ids], ["id"]))
            nlab = rng.integers(1, 4, size=m)
            # half the labels name one of the row's retrieved ids (a hit at a uniform rank), half any document
            lrow = np.repeat(np.arange(m), nlab)
            hit = rng.random(len(lrow)) < 0.5
            lid = np.where(hit, cid[lrow * k + rng.integers(0, k, size=len(lrow))],
                           rng.integers(0, docs, size=len(lrow)))
            labels = pa.array(np.char.add("d", lid.astype(str)))
            offsets = pa.array(np.concatenate(([0], np.cumsum(nlab))).astype(np.int32))
            writer.write_table(pa.table({"id": ids, "contexts": ctx,
                                         "relevant": pa.ListArray.from_arrays(offsets, labels)}, schema=schema))
    tmp.rename(path)
    return path


#: Rows per row group of the generated files (:func:`make_parquet` writes 100,000 at a time).
GROUP_ROWS = 100_000


def head_parquet(src: Path, dst: Path, rows: int) -> Path:
    """The first ``rows`` rows of ``src`` as ``dst``, in row groups of :data:`GROUP_ROWS` rows as
    ``src`` has them (the Ray engine's tasks are row groups: the same layout as the local engine's
    file, not one group of every row)."""
    import pyarrow.parquet as pq

    if not dst.exists():
        pq.write_table(pq.read_table(src).slice(0, rows), dst, row_group_size=GROUP_ROWS)
    return dst


def make_jsonl(src: Path, dst: Path) -> Path:
    """``src`` (Parquet) as JSONL, one row per line (skipped when it already exists)."""
    import pyarrow.parquet as pq

    if not dst.exists():
        tmp = dst.with_suffix(".tmp")
        with open(tmp, "w", encoding="utf-8") as fh:
            for batch in pq.ParquetFile(src).iter_batches(batch_size=65536):
                fh.writelines(json.dumps(r) + "\n" for r in batch.to_pylist())
        tmp.rename(dst)
    return dst


def make_csv(src: Path, dst: Path) -> Path:
    """``src`` (Parquet) as CSV: ``contexts`` and ``relevant`` JSON-encoded in their cells, as
    Python's ``csv`` module writes ``json.dumps`` (skipped when it already exists)."""
    import csv

    import pyarrow.parquet as pq

    if not dst.exists():
        tmp = dst.with_suffix(".tmp")
        with open(tmp, "w", encoding="utf-8", newline="") as fh:
            writer = csv.writer(fh)
            writer.writerow(["id", "contexts", "relevant"])
            for batch in pq.ParquetFile(src).iter_batches(batch_size=65536):
                writer.writerows([r["id"], json.dumps(r["contexts"]), json.dumps(r["relevant"])]
                                 for r in batch.to_pylist())
        tmp.rename(dst)
    return dst


def judged_rows(n: int) -> list[dict[str, Any]]:
    """``n`` samples with 3 contexts, a two-sentence answer and labels (seeded, deterministic)."""
    return [{"id": f"j{i}", "query": f"What does passage {i} say?",
             "answer": f"Passage {i} is about topic {i % 17}. It has {i % 5} parts.",
             "contexts": [{"id": f"d{(i + j) % 50}", "text": f"passage {i} is about topic {i % 17} [rating {j + 5}]"}
                          for j in range(3)],
             "relevant": [f"d{i % 50}"]} for i in range(n)]


# ---- one measurement per subprocess --------------------------------------------------------------


def _child(spec: dict[str, Any]) -> dict[str, Any]:
    """Run one measurement in this process; returns its numbers (wall, cpu, peak RSS)."""
    t0, c0 = time.perf_counter(), time.process_time()
    out: dict[str, Any] = {}
    kind = spec["kind"]
    if kind == "columnar":
        from ragmeter.engines.local import evaluate_file

        run = evaluate_file(spec["data"], RETRIEVAL_METRICS, out_dir=spec["out"])
        out["path"] = run.run.get("engine", {}).get("path")
        out["n"] = len(run)
    elif kind == "make-jsonl":
        make_jsonl(Path(spec["src"]), Path(spec["data"]))
        out["n"] = 0
    elif kind == "make-csv":
        make_csv(Path(spec["src"]), Path(spec["data"]))
        out["n"] = 0
    elif kind == "numpy":
        out["n"], out["head"] = _plain_numpy(spec["data"])
    elif kind == "samples":
        from ragmeter import evaluate
        from ragmeter.io import read_samples

        run = evaluate(read_samples(spec["data"]), RETRIEVAL_METRICS, out_dir=spec["out"], keep_records=False)
        out["n"] = len(run)
    elif kind in ("ray", "ray-judged"):
        import ray

        from ragmeter.engines.ray_engine import evaluate_ray

        # Ray starts its workers at nice 15: on a shared machine that would time the other load, not
        # the engine (the local engine runs at the default priority, 0)
        os.environ.setdefault("RAY_worker_niceness", "0")
        ray.init(num_cpus=spec.get("cpus", 2), include_dashboard=False, log_to_driver=False,
                 configure_logging=False)
        # the cluster's start is not the engine's: ray.init returns while its worker processes are
        # still starting (~0.4 CPU-s left of it), so one empty task per CPU waits for them
        # (they import nothing of ragmeter: the engine's own imports stay in its time)
        noop = ray.remote(num_cpus=1)(_noop)
        ray.get([noop.remote() for _ in range(spec.get("cpus", 2))])
        t0, c0 = time.perf_counter(), time.process_time()
        ray0 = _descendants_cpu()
        if kind == "ray":
            run = evaluate_ray(spec["data"], RETRIEVAL_METRICS, out_dir=spec["out"], keep_records=False,
                               batch_size=spec.get("batch_size", 4096))
            ray1 = _descendants_cpu()
            out["ray_cpu"] = None if ray0 is None or ray1 is None else ray1 - ray0
        else:
            run = evaluate_ray(judged_rows(spec["n"]), spec["metrics"], judge_spec=spec["judge"],
                               judge_options={"cache": False, "concurrency": spec["concurrency"]},
                               num_workers=spec["workers"], batch_size=spec["batch_size"], keep_records=False)
            out["requests"] = run.run["judge"]["requests"]
        out["n"] = len(run)
    elif kind == "local-judged":
        from ragmeter import evaluate
        from ragmeter.judges import from_spec

        judge = from_spec(spec["judge"], cache=False, concurrency=spec["concurrency"])
        run = evaluate(judged_rows(spec["n"]), spec["metrics"], judge=judge, keep_records=False,
                       chunk_size=spec["batch_size"])
        out["requests"] = run.run["judge"]["requests"]
        out["n"] = len(run)
    out["wall"] = time.perf_counter() - t0
    out["cpu"] = time.process_time() - c0
    out["rss_mib"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    return out


def _noop() -> int:
    """An empty Ray task (what waits for the cluster's workers to be up)."""
    return os.getpid()


def _descendants_cpu() -> float | None:
    """CPU seconds (user + system) of every live process descending from this one (the local
    Ray cluster: raylet, GCS, workers), read from ``/proc``; None where there is no ``/proc``."""
    try:
        tick = os.sysconf("SC_CLK_TCK")
        stats: dict[int, tuple[int, float]] = {}
        for name in os.listdir("/proc"):
            if name.isdigit():
                try:
                    with open(f"/proc/{name}/stat", encoding="ascii", errors="replace") as fh:
                        fields = fh.read().rsplit(")", 1)[1].split()
                except OSError:
                    continue  # ended meanwhile
                stats[int(name)] = (int(fields[1]), (int(fields[11]) + int(fields[12])) / tick)
    except (OSError, ValueError):
        return None
    total, todo = 0.0, [os.getpid()]
    while todo:
        parent = todo.pop()
        for pid, (ppid, cpu) in stats.items():
            if ppid == parent:
                total += cpu
                todo.append(pid)
    return total


def _plain_numpy(path: str) -> tuple[int, list[list[float]]]:
    """The practical limit: ``mrr`` and ``ndcg@10`` of the bench file in plain numpy (read with
    pyarrow, ids joined by dictionary codes, binary gains, nothing written), checked against
    ragmeter's scores on the first 1,000 rows by the caller. Returns the rows scored and the first
    1,000 rows' ``[mrr, ndcg@10]``."""
    import numpy as np
    import pyarrow as pa
    import pyarrow.compute as pc
    import pyarrow.parquet as pq

    table = pq.read_table(path)
    n, total = table.num_rows, 0
    head: list[list[float]] = []
    for batch in table.to_batches(max_chunksize=65536):
        ctx, rel = batch.column(1), batch.column(2)
        cids = pc.list_flatten(ctx).field("id")
        lids = pc.list_flatten(rel)
        codes = pa.concat_arrays([cids, lids]).dictionary_encode().indices.to_numpy().astype(np.int64)
        m = batch.num_rows
        clen = np.diff(ctx.offsets.to_numpy())
        llen = np.diff(rel.offsets.to_numpy())
        crow = np.repeat(np.arange(m), clen)
        lrow = np.repeat(np.arange(m), llen)
        width = int(codes.max()) + 1
        labels = np.unique(lrow * width + codes[len(cids):])  # for the join only
        keys = crow * width + codes[:len(cids)]
        j = np.minimum(np.searchsorted(labels, keys), len(labels) - 1)
        first = np.zeros(len(keys), dtype=bool)
        first[np.unique(keys, return_index=True)[1]] = True
        hit = (labels[j] == keys) & first  # a label is found at the first position of its id only
        rank = np.arange(len(keys)) - np.repeat(np.concatenate(([0], np.cumsum(clen)[:-1])), clen) + 1
        # mrr: 1 / rank of the first hit
        best = np.full(m, np.inf)
        np.minimum.at(best, crow[hit], rank[hit])
        mrr = np.where(np.isfinite(best), 1.0 / best, 0.0)
        # ndcg@10, binary gains: DCG over the top 10, ideal from the distinct labels per row
        top = hit & (rank <= 10)
        dcg = np.bincount(crow[top], weights=1.0 / np.log2(rank[top] + 1.0), minlength=m)
        nrel = llen  # every label counts, a repeated one too (as ragmeter reads a list of ids)
        disc = np.concatenate(([0.0], np.cumsum(1.0 / np.log2(np.arange(2, 12)))))
        idcg = disc[np.minimum(nrel, 10)]
        ndcg = np.divide(dcg, idcg, out=np.zeros(m), where=idcg > 0)
        total += m
        if not head:
            head = np.stack([mrr[:1000], ndcg[:1000]], axis=1).tolist()
    assert total == n
    return n, head


def measure(spec: dict[str, Any]) -> dict[str, Any]:
    """Run ``spec`` in a fresh interpreter and return its numbers."""
    # every measurement starts with no dirty page left by the one before: the kernel's writeback of
    # the last run's ~700 MB would otherwise take CPU from the next one (the last measured, Ray,
    # ran with 2 GB of the local engines' output being flushed)
    os.sync()
    proc = subprocess.run([sys.executable, __file__, "--_child", json.dumps(spec)], capture_output=True,
                          text=True, cwd=ROOT, check=False)
    if proc.returncode != 0:
        raise SystemExit(f"measurement {spec['kind']} failed:\n{proc.stderr[-3000:]}")
    return json.loads(proc.stdout.strip().splitlines()[-1])


def _drop(path: Path) -> None:
    """Remove a measurement's output directory once read (its dirty pages go without being written)."""
    import shutil

    shutil.rmtree(path, ignore_errors=True)


# ---- the loopback judge server ---------------------------------------------------------------------

_SERVER = """
import sys, time
sys.path.insert(0, {root!r})
from tests.judges.fake_server import FakeLLMServer
from tests.metrics.generation.rules import judge_rule
server = FakeLLMServer(judge_rule, latency={latency}).start()
print("READY", server.url, flush=True)
sys.stdin.read()
"""


def start_server(latency: float) -> tuple[subprocess.Popen[str], str]:
    """The rule-based fake judge in a subprocess (its own GIL); returns it and its URL."""
    proc = subprocess.Popen([sys.executable, "-c", _SERVER.format(root=str(ROOT), latency=latency)],
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    assert proc.stdout is not None
    line = proc.stdout.readline().split()
    if not line or line[0] != "READY":
        proc.kill()
        raise SystemExit("the fake judge server did not start")
    return proc, line[1]


# ---- the tables -----------------------------------------------------------------------------------


def retrieval_table(args: argparse.Namespace) -> None:
    """Part (a)."""
    data_dir = Path(args.data_dir)
    data_dir.mkdir(parents=True, exist_ok=True)
    full = make_parquet(data_dir / f"rag-v2-{args.rows}.parquet", args.rows)
    small = head_parquet(full, data_dir / f"rag-{args.rows}-head{args.sample_rows}.parquet", args.sample_rows)
    # the Ray engine reads the local engine's own file when it runs as many rows (same bytes, same
    # row groups); else the head of it, in row groups of the same size
    ray_data = full if args.ray_rows == args.rows else head_parquet(
        full, data_dir / f"rag-v2-{args.rows}-head{args.ray_rows}.parquet", args.ray_rows)
    rows = []
    with tempfile.TemporaryDirectory(prefix="ragmeter-scale-out-") as tmp:  # ~600 MB of results.jsonl
        out = Path(tmp)
        r = measure({"kind": "columnar", "data": str(full), "out": str(out / "columnar")})
        with open(out / "columnar" / "results.jsonl", encoding="utf-8") as fh:
            r["head"] = [line for _, line in zip(range(1000), fh, strict=False)]
        _drop(out / "columnar")
        rows.append(("local, columnar fast path (`ragmeter eval`)", r))
        jsonl = data_dir / f"rag-{args.rows}-head{args.ray_rows}.jsonl"
        measure({"kind": "make-jsonl", "src": str(ray_data), "data": str(jsonl)})  # not in this process's RSS
        r = measure({"kind": "columnar", "data": str(jsonl), "out": str(out / "jsonl")})
        _drop(out / "jsonl")
        rows.append(("local, columnar path over JSONL (`ragmeter eval`)", r))
        csv_data = data_dir / f"rag-{args.rows}-head{args.ray_rows}.csv"
        measure({"kind": "make-csv", "src": str(ray_data), "data": str(csv_data)})
        r = measure({"kind": "columnar", "data": str(csv_data), "out": str(out / "csv")})
        _drop(out / "csv")
        rows.append(("local, columnar path over CSV (`ragmeter eval`)", r))
        limit = measure({"kind": "numpy", "data": str(full)})
        rows.append(("plain numpy, same measures, nothing written (the practical limit)", limit))
        r = measure({"kind": "samples", "data": str(small), "out": str(out / "samples")})
        _drop(out / "samples")
        rows.append(("local, Sample path (`ragmeter.evaluate`)", r))
        if not args.no_ray:
            r = measure({"kind": "ray", "data": str(ray_data), "out": str(out / "ray"), "cpus": 2})
            _drop(out / "ray")
            rows.append(("ray, 2 CPUs (driver CPU and RSS only)", r))
    print(f"\n### (a) retrieval metrics {', '.join(RETRIEVAL_METRICS)} from Parquet\n")
    print("| engine | rows | wall s | rows/s (wall) | CPU s | rows per CPU-second | peak RSS MiB |")
    print("|---|---:|---:|---:|---:|---:|---:|")
    for name, r in rows:
        print(f"| {name} | {r['n']:,} | {r['wall']:.1f} | {r['n'] / r['wall']:,.0f} | {r['cpu']:.1f} | "
              f"{r['n'] / max(r['cpu'], 1e-9):,.0f} | {r['rss_mib']:,.0f} |")
    col, jl, cs, lim = rows[0][1], rows[1][1], rows[2][1], rows[3][1]
    import numpy as np

    got = [[json.loads(line)["metrics"][m]["score"] for m in RETRIEVAL_METRICS] for line in col["head"]]
    print(f"\nplain numpy agrees with ragmeter on the first {len(got):,} rows: "
          f"{np.allclose(np.array(got, dtype=float), np.array(lim['head']), rtol=0, atol=1e-12)}")
    rate = {name: r["n"] / max(r["cpu"], 1e-9) for name, r in (("Parquet", col), ("JSONL", jl), ("CSV", cs))}
    print("\n| input | rows | rows per CPU-second | Parquet / this |\n|---|---:|---:|---:|")
    for name, r in (("Parquet", col), ("JSONL", jl), ("CSV", cs)):
        print(f"| {name} | {r['n']:,} | {rate[name]:,.0f} | {rate['Parquet'] / rate[name]:.2f}x |")
    print(f"\nParquet / JSONL, rows per CPU-second: {rate['Parquet'] / rate['JSONL']:.2f}x; "
          f"Parquet / CSV: {rate['Parquet'] / rate['CSV']:.2f}x (target: each <= 2x)")
    print(f"\nragmeter columnar / plain numpy, rows per CPU-second: "
          f"{(col['n'] / col['cpu']) / (lim['n'] / lim['cpu']):.1%}")
    ray_row = next((r for name, r in rows if name.startswith("ray")), None)
    if ray_row is not None:
        print(f"\nRay (2 workers) / local columnar, rows/s (wall): "
              f"{(ray_row['n'] / ray_row['wall']) / (col['n'] / col['wall']):.2f}x")
        per_m = 1e6 / max(ray_row["n"], 1)
        print(f"\nRay driver CPU (the table's CPU s: the driver process only): {ray_row['cpu']:.2f} s, "
              f"{ray_row['cpu'] * per_m:.2f} CPU-s per 1M rows")
        if ray_row.get("ray_cpu") is not None:
            both = ray_row["cpu"] + ray_row["ray_cpu"]
            print(f"Ray cluster CPU (workers, raylet, GCS): {ray_row['ray_cpu']:.2f} s, "
                  f"{ray_row['ray_cpu'] * per_m:.2f} CPU-s per 1M rows; rows per CPU-second, driver and "
                  f"cluster: {ray_row['n'] / max(both, 1e-9):,.0f} (local columnar: {col['n'] / col['cpu']:,.0f})")
    print(f"\nmachine: {os.cpu_count()} cores, load average {os.getloadavg()[0]:.1f} at the end")


def judged_table(args: argparse.Namespace) -> None:
    """Part (b)."""
    server, url = start_server(args.latency)
    spec = f"openai:fake-model@{url}"
    try:
        rows = []
        common = {"n": args.n, "metrics": JUDGED_METRICS, "judge": spec, "concurrency": args.concurrency,
                  "batch_size": args.batch_size}
        rows.append(("local", 1, measure({"kind": "local-judged", **common})))
        if not args.no_ray:
            for workers in (1, 2):
                rows.append((f"ray, {workers} worker(s)", workers,
                             measure({"kind": "ray-judged", "workers": workers, "cpus": 2, **common})))
    finally:
        assert server.stdin is not None
        server.stdin.close()
        server.wait(timeout=10)
    print(f"\n### (b) judged metrics {', '.join(JUDGED_METRICS)}: {args.n:,} samples, "
          f"latency {args.latency * 1000:.0f} ms, concurrency {args.concurrency} per worker\n")
    print("| engine | calls | calls/sample | wall s | calls/s | bound calls/s | share of bound | driver CPU s |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|")
    for name, workers, r in rows:
        bound = workers * args.concurrency / args.latency
        rate = r["requests"] / r["wall"]
        print(f"| {name} | {r['requests']:,} | {r['requests'] / r['n']:.2f} | {r['wall']:.1f} | {rate:,.0f} | "
              f"{bound:,.0f} | {rate / bound:.0%} | {r['cpu']:.1f} |")


def main() -> None:
    """Parse the options and print the tables."""
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--only", choices=["retrieval", "judged"], default=None)
    ap.add_argument("--rows", type=int, default=1_000_000, help="retrieval rows (columnar path)")
    ap.add_argument("--sample-rows", type=int, default=50_000, help="rows for the Sample path")
    ap.add_argument("--ray-rows", type=int, default=100_000, help="rows for the Ray engine and the JSONL / CSV files")
    ap.add_argument("--data-dir", default=str(Path(tempfile.gettempdir()) / "ragmeter-scale-data"))
    ap.add_argument("--n", type=int, default=10_000, help="judged samples")
    ap.add_argument("--latency", type=float, default=0.2, help="judge reply latency, seconds")
    ap.add_argument("--concurrency", type=int, default=64, help="judge calls in flight per worker")
    ap.add_argument("--batch-size", type=int, default=500, help="samples per chunk / Ray task (judged)")
    ap.add_argument("--no-ray", action="store_true", help="skip the Ray engine")
    ap.add_argument("--_child", default=None, help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args._child is not None:
        sys.path.insert(0, str(ROOT))
        print(json.dumps(_child(json.loads(args._child))))
        return
    if args.only in (None, "retrieval"):
        retrieval_table(args)
    if args.only in (None, "judged"):
        judged_table(args)


if __name__ == "__main__":
    main()
