"""Position analysis: the answer metric as a function of the rank of the first relevant chunk
(from the retrieval metrics' ``details.relevant_ranks``), to show lost-in-the-middle effects
(:func:`position_analysis`; :func:`.diagnose.diagnose` includes it)."""

from __future__ import annotations

import math
import os
from typing import Any

import numpy as np

from .._dist import spearman
from .._validate import check_probability
from ..errors import InvalidParameterError
from ..intervals import metric_ci
from ..results import SCORED, RunResult
from ..run_names import metric_spec, parse_name
from ._io import load_run

BUCKETS: tuple[tuple[str, int, int], ...] = (
    ("1", 1, 1), ("2", 2, 2), ("3", 3, 3), ("4-5", 4, 5), ("6-10", 6, 10), ("11-20", 11, 20), (">20", 21, 10**9),
)


def answer_metric(metrics: list[str]) -> str | None:
    """The run's answer metric: a metric whose registered role is ``"answer"`` and that is
    higher-is-better, the lowest ``answer_preference`` of its spec first (a spec without one after
    every ranked one); else a metric ragmeter does not know at all (no role to go by). A retrieval
    or context metric is never the answer metric."""
    known: list[tuple[float, str]] = []
    unknown: list[str] = []
    for m in metrics:
        p = parse_name(m)
        if p is None:
            continue
        spec = metric_spec(p[0])
        if spec is None:
            unknown.append(m)
        elif spec.role == "answer" and spec.higher_is_better:
            known.append((math.inf if spec.answer_preference is None else spec.answer_preference, m))
    if known:
        return min(known, key=lambda t: t[0])[1]
    return unknown[0] if unknown else None


def position_analysis(
    run: RunResult | str | os.PathLike[str],
    *,
    metric: str | None = None,
    confidence: float = 0.95,
    seed: int = 0,
    first_ranks: np.ndarray | None = None,
) -> dict[str, Any] | None:
    """The answer metric grouped by the rank of the first relevant retrieved chunk.

    The answer metric (when ``metric`` is None) is a registered ``role="answer"``, higher-is-better
    metric of the run (:func:`answer_metric`), else a metric ragmeter does not
    know; never a retrieval or context metric.
    The rank comes from ``details.relevant_ranks`` that the retrieval metrics record in
    ``results.jsonl`` (the first metric of each sample that has it); samples where no relevant
    chunk was retrieved form the bucket ``"none"``. Buckets: 1, 2, 3, 4-5, 6-10, 11-20, >20.
    Each bucket reports n, the mean and its CI (:func:`~ragmeter.stats.metric_ci`). Also:
    Spearman's rho between rank and score over samples with a rank, and two flags:
    ``position_effect`` (rho < 0 with p < 0.05) and ``lost_in_the_middle`` (a bucket strictly
    between the first and the last non-empty one has its CI entirely below the rank-1 bucket's
    CI and a mean below the last bucket's mean: the U shape of Liu et al. 2023). Heuristics for
    reading, not tests with error control.

    ``first_ranks`` gives those ranks per sample instead (inf: no relevant chunk retrieved, NaN:
    no retrieval details), for a run held without its records (the HTML report's).

    Returns None when the run has no answer metric (``metric`` None and none found) or no
    per-sample records (and no ``first_ranks``); ``{"metric", "note"}`` when no sample has
    relevant ranks.
    """
    confidence = check_probability(confidence, "confidence")
    r = load_run(run)
    if metric is None:
        metric = answer_metric(r.metrics)
        if metric is None:
            return None
    elif metric not in r.scores:
        raise InvalidParameterError(f"metric: expected one of {', '.join(r.metrics)}, got {metric!r}")
    if first_ranks is not None:
        rank_arr = np.asarray(first_ranks, dtype=np.float64)
    elif r.records is None:
        return None
    else:
        rank_arr = _first_ranks(r.records)
    return _position_buckets(r, metric, rank_arr, confidence, seed)


def _first_ranks(records: list[dict[str, Any]]) -> np.ndarray:
    """Per record, the smallest of the first ``details.relevant_ranks`` found (inf: empty, NaN: none)."""
    first: list[float] = []
    for rec in records:
        rank = math.nan
        found = False
        for res in (rec.get("metrics") or {}).values():
            det = (res or {}).get("details") or {}
            if isinstance(det, dict) and "relevant_ranks" in det:
                ranks = det["relevant_ranks"] or []
                rank = float(min(ranks)) if ranks else math.inf
                found = True
                break
        first.append(rank if found else math.nan)
    return np.asarray(first)


def _position_buckets(r: RunResult, metric: str, rank_arr: np.ndarray, confidence: float,
                      seed: int) -> dict[str, Any]:
    """The position analysis of ``metric`` given each sample's first relevant rank."""
    vals = r.scores[metric]
    scored = r.status[metric] == SCORED
    if np.isnan(rank_arr).all():
        return {"metric": metric, "note": "no retrieval metric with details.relevant_ranks in results.jsonl"}
    buckets: list[dict[str, Any]] = []
    for label, lo, hi in (*BUCKETS, ("none", -1, -1)):
        sel = scored & (np.isinf(rank_arr) if label == "none" else (rank_arr >= lo) & (rank_arr <= hi))
        iv = metric_ci(vals[sel], confidence=confidence, seed=seed)
        buckets.append({"bucket": label, "n": int(sel.sum()), "mean": iv.estimate, "ci": iv.ci, "ci_method": iv.method})
    ranked = scored & np.isfinite(rank_arr)
    rho = p = None
    if ranked.sum() >= 3 and np.ptp(rank_arr[ranked]) > 0 and np.ptp(vals[ranked]) > 0:
        rho, p = spearman(rank_arr[ranked], vals[ranked])
    nonempty = [b for b in buckets[:-1] if b["n"] > 0]
    lim = False
    if len(nonempty) >= 3 and nonempty[0]["bucket"] == "1" and nonempty[0]["ci"]:
        top, last = nonempty[0], nonempty[-1]
        lim = any(b["ci"] and b["ci"][1] < top["ci"][0] and b["mean"] < last["mean"] for b in nonempty[1:-1])
    return {"metric": metric, "buckets": buckets, "spearman_rho": rho, "spearman_p": p,
            "position_effect": bool(rho is not None and p is not None and rho < 0 and p < 0.05),
            "lost_in_the_middle": bool(lim), "n_with_rank": int(ranked.sum()),
            "n_without_relevant": int((scored & np.isinf(rank_arr)).sum())}
