"""Benchmark: bootstrap CIs for 10 metrics on 100,000 samples (target: under 2 s in total).

Usage::

    /work/venv/bin/python bench/bootstrap.py                     # 10 metrics x 100,000 samples, BCa, B = 2000
    /work/venv/bin/python bench/bootstrap.py --method percentile --resamples 5000
    /work/venv/bin/python bench/bootstrap.py --scipy             # also time scipy.stats.bootstrap on one metric
    /work/venv/bin/python bench/bootstrap.py --accuracy          # binned vs exact resampler, in standard errors

The metrics are synthetic but shaped like ragmeter's: five discrete ones (recall@5 = j/|G|,
precision@5 = j/5, MRR = 1/rank, nDCG@5 over binary gains, a 1-5 judge grade rescaled to [0, 1])
and five continuous ones (embedding similarities, claim-level faithfulness with many claims,
...), which take the binned resampler. No metric is 0/1 (those get Wilson intervals, which cost
nothing). Each row is the wall time of ``ragmeter.stats.bootstrap_ci`` on that metric; the
total is the sum, plus the same through ``RunResult.summary()``.
"""

from __future__ import annotations

import argparse
import math
import time

import numpy as np

from ragmeter.intervals import MAX_CELLS
from ragmeter.results import RunResult
from ragmeter.stats import bootstrap_ci, bootstrap_means

TARGET_SECONDS = 2.0


def make_metrics(n: int, k: int, seed: int = 0) -> dict[str, tuple[str, np.ndarray]]:
    """``k`` synthetic per-sample metric columns of length ``n`` (half discrete, half continuous)."""
    rng = np.random.default_rng(seed)
    n_rel = rng.integers(1, 6, n)
    found = rng.binomial(n_rel, 0.6)
    ranks = rng.geometric(0.45, n)
    gains = rng.random((n, 5)) < 0.35
    disc = 1 / np.log2(np.arange(2, 7))
    ideal = np.array([disc[:j].sum() for j in range(6)])
    ndcg = (gains * disc).sum(axis=1) / ideal[np.maximum(gains.sum(axis=1), 1)]
    makers = [
        ("recall@5", "discrete", lambda: found / n_rel),
        ("precision@5", "discrete", lambda: rng.binomial(5, 0.4, n) / 5),
        ("mrr", "discrete", lambda: np.where(ranks <= 10, 1 / ranks, 0.0)),
        ("ndcg@5", "discrete", lambda: ndcg),
        ("judge_grade", "discrete", lambda: (rng.integers(1, 6, n) - 1) / 4),
        ("answer_similarity", "continuous", lambda: np.clip(rng.normal(0.78, 0.09, n), 0, 1)),
        ("context_similarity", "continuous", lambda: rng.beta(5, 2, n)),
        ("faithfulness", "continuous", lambda: rng.beta(8, 1.5, n)),
        ("answer_relevancy", "continuous", lambda: rng.beta(2.5, 1.2, n)),
        ("bleu", "continuous", lambda: rng.beta(0.8, 3, n)),
    ]
    out = {}
    for i in range(k):
        name, kind, make = makers[i % len(makers)]
        key = name if i < len(makers) else f"{name}_{i}"
        out[key] = (kind, make())
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    ap.add_argument("--n", type=int, default=100_000, help="samples")
    ap.add_argument("--metrics", type=int, default=10, help="metrics")
    ap.add_argument("--resamples", type=int, default=2000, help="bootstrap resamples B")
    ap.add_argument("--method", choices=["bca", "percentile"], default="bca")
    ap.add_argument("--repeat", type=int, default=3, help="runs per metric; the best time is kept")
    ap.add_argument("--scipy", action="store_true", help="also time scipy.stats.bootstrap on one metric")
    ap.add_argument("--accuracy", action="store_true", help="only compare the binned resampler with the exact one")
    args = ap.parse_args()
    if args.accuracy:
        accuracy()
        return

    metrics = make_metrics(args.n, args.metrics)
    print(f"bootstrap CIs: {args.metrics} metrics x {args.n:,} samples, {args.method}, B = {args.resamples}, "
          f"binned resampler above {MAX_CELLS} distinct values\n")
    header = f"{'metric':<20} {'kind':<11} {'distinct':>9} {'mean':>8} {'95% CI':>20} {'seconds':>8}"
    print(header)
    print("-" * len(header))
    total = 0.0
    for name, (kind, x) in metrics.items():
        best = math.inf
        for _ in range(args.repeat):
            t0 = time.perf_counter()
            iv = bootstrap_ci(x, method=args.method, n_resamples=args.resamples, seed=0)
            best = min(best, time.perf_counter() - t0)
        total += best
        ci = f"[{iv.low:.5f}, {iv.high:.5f}]"
        print(f"{name:<20} {kind:<11} {np.unique(x).size:>9,} {iv.estimate:>8.5f} {ci:>20} {best:>8.3f}")
    print("-" * len(header))
    verdict = "PASS" if total < TARGET_SECONDS else "FAIL"
    print(f"{'total (bootstrap_ci)':<52} {total:>19.3f} s  target < {TARGET_SECONDS:g} s: {verdict}")

    ids = [f"q{i}" for i in range(args.n)]
    run = RunResult(ids, {m: x for m, (_, x) in metrics.items()},
                    {m: np.zeros(args.n, dtype=np.int8) for m in metrics}, None, {})
    best = math.inf
    for _ in range(args.repeat):
        t0 = time.perf_counter()
        run.summary()
        best = min(best, time.perf_counter() - t0)
    print(f"{'RunResult.summary() (all metrics, BCa, B = 2000)':<52} {best:>19.3f} s")

    if args.scipy:
        from scipy import stats

        name, (_, x) = next(iter(metrics.items()))
        t0 = time.perf_counter()
        res = stats.bootstrap((x,), np.mean, method="BCa" if args.method == "bca" else "percentile",
                              n_resamples=args.resamples, batch=50, rng=np.random.default_rng(0))
        dt = time.perf_counter() - t0
        ci = res.confidence_interval
        print(f"\nscipy.stats.bootstrap on {name}: [{ci.low:.5f}, {ci.high:.5f}] in {dt:.3f} s")


def accuracy(b: int = 20_000) -> None:
    """Bounds of the binned resampler minus those of the exact one, in standard errors of the mean.

    The exact reference draws one multinomial cell per distinct value (the law of index
    resampling). Two Monte Carlo runs with B = 20,000 differ by about 0.02-0.04 se on their own.
    """
    rng = np.random.default_rng(0)
    cases = {
        "lognormal, n=200": rng.lognormal(0, 1.2, 200),
        "bimodal, n=500": np.r_[rng.beta(20, 2, 400), rng.beta(1, 20, 100)],
        "lognormal, n=3000": rng.lognormal(0, 1.5, 3000),
    }
    print(f"binned ({MAX_CELLS} cells) vs exact bootstrap of the mean, B = {b:,}; differences in se\n")
    print(f"{'data':<20} {'sd ratio':>9} {'2.5% bound':>11} {'97.5% bound':>12}")
    for name, x in cases.items():
        se = x.std() / math.sqrt(x.size)
        exact = bootstrap_means(x, n_resamples=b, seed=1, max_cells=10**6)
        binned = bootstrap_means(x, n_resamples=b, seed=2)
        lo, hi = ((np.quantile(binned, q) - np.quantile(exact, q)) / se for q in (0.025, 0.975))
        print(f"{name:<20} {binned.std() / exact.std():>9.3f} {lo:>+11.3f} {hi:>+12.3f}")


if __name__ == "__main__":
    main()
