"""The report's data: a run directory joined with its samples' text, histograms and the comparison.

Everything here is pure Python over plain dicts and numpy arrays; :mod:`ragmeter.report._html`
turns the result into the page. The payload embedded in the page is compact on purpose (a
10,000-sample run must stay a usable file): per-sample texts under short keys, scores as
columns, and each sample's metric details stored once when several metrics share them (the
retrieval metrics all record the same ``relevant_ranks``).
"""

from __future__ import annotations

import json
import math
import os
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from ..errors import InputError, InvalidParameterError

#: Keys of the run info that may name the input data file, tried in this order.
DATA_PATH_KEYS = ("data", "data_path", "input", "input_path", "dataset_path", "dataset")

#: Texts longer than this are cut in the page (with a marker saying how long they were).
DEFAULT_MAX_TEXT_CHARS = 4000


@dataclass
class Run:
    """One run directory as read from disk: ``summary.json`` and every ``results.jsonl`` record."""

    path: Path
    summary: dict[str, Any]
    records: list[dict[str, Any]]

    @property
    def metrics(self) -> list[str]:
        """Metric names, in the summary's order."""
        return list(self.summary.get("metrics", {}))

    @property
    def info(self) -> dict[str, Any]:
        """The run information (``summary["run"]``)."""
        run = self.summary.get("run")
        return run if isinstance(run, dict) else {}

    def scores(self, metric: str) -> np.ndarray:
        """The metric's score per record, NaN where it has none (undefined or errored)."""
        out = np.full(len(self.records), np.nan)
        for i, rec in enumerate(self.records):
            r = rec.get("metrics", {}).get(metric) or {}
            if not r.get("error") and isinstance(r.get("score"), int | float):
                out[i] = float(r["score"])
        return out


def load_run(path: str | os.PathLike[str]) -> Run:
    """Read ``summary.json`` and ``results.jsonl`` from the run directory ``path``.

    Raises
    ------
    InvalidParameterError
        ``path`` is not a run directory (no ``summary.json`` / ``results.jsonl``) or a file in it is
        not valid JSON; the message says which file and what to do.
    """
    run_dir = Path(path)
    summary_path, results_path = run_dir / "summary.json", run_dir / "results.jsonl"
    for p in (summary_path, results_path):
        if not p.is_file():
            raise InvalidParameterError(
                f"{run_dir} is not a ragmeter run directory: {p.name} is missing; expected the OUTDIR "
                "written by `ragmeter eval -o OUTDIR` or ragmeter.evaluate(..., out_dir=OUTDIR)"
            )
    try:
        summary = json.loads(summary_path.read_text(encoding="utf-8"))
    except json.JSONDecodeError as exc:
        raise InvalidParameterError(f"{summary_path}: not valid JSON ({exc.msg} at char {exc.pos})") from exc
    records: list[dict[str, Any]] = []
    with open(results_path, encoding="utf-8") as fh:
        for lineno, line in enumerate(fh, start=1):
            if not line.strip():
                continue
            try:
                records.append(json.loads(line))
            except json.JSONDecodeError as exc:
                raise InvalidParameterError(f"{results_path}:{lineno}: not valid JSON ({exc.msg})") from exc
    if not isinstance(summary, dict) or not isinstance(summary.get("metrics"), dict):
        raise InvalidParameterError(f"{summary_path}: expected an object with a 'metrics' object")
    return Run(run_dir, summary, records)


def find_data_path(run: Run) -> Path | None:
    """The input data file named in the run info, if one of :data:`DATA_PATH_KEYS` names an existing file.

    A relative path is tried against the current directory, then against the run directory.
    """
    info = run.info
    for key in DATA_PATH_KEYS:
        value = info.get(key)
        if isinstance(value, dict):
            value = value.get("path")
        if not isinstance(value, str) or not value:
            continue
        for candidate in (Path(value), run.path / value):
            if candidate.is_file():
                return candidate
    return None


def read_texts(path: str | os.PathLike[str], *, format: str | None = None,
               field_map: dict[str, str] | None = None) -> dict[str, dict[str, Any]]:
    """``{sample id: {"q", "a", "r", "c"}}`` from a data file, through :func:`ragmeter.io.read_samples`.

    Bad rows are skipped (the run recorded them as errored samples already). ``c`` is a list of
    ``[id, text, score]`` per retrieved context, in rank order.
    """
    from ..io import read_samples

    out: dict[str, dict[str, Any]] = {}
    for s in read_samples(path, on_error="skip", format=format, field_map=field_map):  # type: ignore[arg-type]
        if isinstance(s, InputError):
            continue
        out[s.id] = {
            "q": s.query,
            "a": s.answer,
            "r": s.reference,
            "c": [[c.id, c.text, c.score] for c in s.contexts],
        }
    return out


def histogram(values: Iterable[float], bins: int = 10, lo: float = 0.0, hi: float = 1.0) -> list[int]:
    """Count ``values`` into ``bins`` equal-width bins over ``[lo, hi]``; NaN values are left out.

    Bin ``i`` holds ``lo + i*w <= v < lo + (i+1)*w`` (``w = (hi-lo)/bins``), except the last,
    which also holds ``hi`` itself. Values outside ``[lo, hi]`` are clamped into the first or
    last bin. With ``hi == lo`` every value lands in the first bin.

    >>> histogram([0.0, 0.05, 0.1, 0.95, 1.0, float("nan")], bins=10)
    [2, 1, 0, 0, 0, 0, 0, 0, 0, 2]
    """
    if bins < 1:
        raise InvalidParameterError(f"bins: expected an integer >= 1, got {bins!r}")
    counts = [0] * bins
    width = (hi - lo) / bins
    for v in values:
        if v is None or math.isnan(v):
            continue
        i = 0 if width <= 0 else math.floor((v - lo) / width)
        counts[min(max(i, 0), bins - 1)] += 1
    return counts


def histogram_range(values: np.ndarray) -> tuple[float, float]:
    """``(0, 1)`` when every finite value lies in it (scores), else the values' own min and max."""
    finite = values[np.isfinite(values)]
    if finite.size == 0 or (finite.min() >= 0.0 and finite.max() <= 1.0):
        return 0.0, 1.0
    return float(finite.min()), float(finite.max())


def clip_text(text: str | None, max_chars: int | None) -> str | None:
    """``text`` cut to ``max_chars`` characters with a marker that says how long it was (None/0: no limit)."""
    if text is None or not max_chars or len(text) <= max_chars:
        return text
    return text[:max_chars] + f" … [cut: {len(text):,} characters in all]"


@dataclass
class MetricComparison:
    """One metric's paired comparison of a candidate run against a baseline (``diff = candidate - baseline``)."""

    metric: str
    n: int
    baseline_mean: float | None
    candidate_mean: float | None
    diff: float | None
    ci: tuple[float, float] | None
    p_value: float | None
    method: str
    changed: list[tuple[str, float, float]] = field(default_factory=list)
    p_adjusted: float | None = None
    verdict: str = ""
    higher_is_better: bool | None = True


def paired_bootstrap_ci(diff: np.ndarray, *, resamples: int = 2000, level: float = 0.95,
                        seed: int = 0) -> tuple[float, float]:
    """Percentile bootstrap CI of the mean of paired differences ``diff``."""
    rng = np.random.default_rng(seed)
    n = diff.size
    means = np.empty(resamples)
    step = max(1, 2_000_000 // max(n, 1))  # bound memory: about 2M indices at a time
    for start in range(0, resamples, step):
        stop = min(resamples, start + step)
        idx = rng.integers(0, n, size=(stop - start, n))
        means[start:stop] = diff[idx].mean(axis=1)
    alpha = (1.0 - level) / 2.0
    return float(np.quantile(means, alpha)), float(np.quantile(means, 1.0 - alpha))


def paired_permutation_p(diff: np.ndarray, *, resamples: int = 5000, seed: int = 0) -> float:
    """Two-sided p-value of a paired randomisation (sign-flip) test of mean difference 0.

    Counts resampled ``|mean|`` at least the observed one, with the +1 correction so the p-value
    is never 0: ``(1 + count) / (1 + resamples)``.
    """
    n = diff.size
    observed = abs(float(diff.mean()))
    if observed == 0.0:
        return 1.0
    rng = np.random.default_rng(seed)
    count = 0
    step = max(1, 2_000_000 // max(n, 1))
    for start in range(0, resamples, step):
        stop = min(resamples, start + step)
        signs = rng.integers(0, 2, size=(stop - start, n)) * 2 - 1
        means = np.abs((signs * diff).mean(axis=1))
        count += int((means >= observed - 1e-12).sum())
    return (1 + count) / (1 + resamples)


def compare_runs(baseline: Run, candidate: Run, metrics: Sequence[str], *, top: int = 10,
                 seed: int = 0, results: tuple[Any, Any] | None = None) -> list[MetricComparison]:
    """Per-metric paired comparison over the samples (matched by id) that both runs scored.

    The statistics come from :func:`ragmeter.stats.compare` (paired bootstrap CI of the mean
    difference, paired permutation or McNemar test, Holm-adjusted p-values); where that module is
    not installed, from :func:`compare_runs_simple`. ``changed`` lists the ``top`` samples with
    the largest ``|candidate - baseline|`` as ``(id, baseline score, candidate score)``.
    ``results``: the two runs as :class:`~ragmeter.results.RunResult` when already loaded.
    """
    try:
        from ..stats.compare import compare
    except ImportError:  # a build without the statistics module
        return compare_runs_simple(baseline, candidate, metrics, top=top, seed=seed)
    simple = {c.metric: c for c in compare_runs_simple(baseline, candidate, metrics, top=top, seed=seed,
                                                       stats=False)}
    result = compare(*(results or (baseline.path, candidate.path)), metrics=list(metrics), seed=seed,
                     labels=("baseline", "candidate"))
    out: list[MetricComparison] = []
    for row in result.to_dict()["metrics"]:
        ci = row.get("ci")
        out.append(MetricComparison(
            metric=row["metric"], n=int(row.get("n_pairs") or 0), baseline_mean=row.get("mean_a"),
            candidate_mean=row.get("mean_b"), diff=row.get("diff"),
            ci=(float(ci[0]), float(ci[1])) if isinstance(ci, list) and len(ci) == 2 else None,
            p_value=row.get("p_value"), p_adjusted=row.get("p_adjusted"),
            method=f"CI: {row.get('ci_method')}; test: {row.get('test')}; p adjusted: Holm (ragmeter.stats.compare)",
            verdict=_verdict_words(str(row.get("verdict") or "")), changed=simple[row["metric"]].changed,
            higher_is_better=row.get("higher_is_better"),
        ))
    return out


def _verdict_words(verdict: str) -> str:
    """``ragmeter.stats`` says A/B; the report says baseline/candidate."""
    return {"A better": "baseline better", "B better": "candidate better"}.get(verdict, verdict)


def compare_runs_simple(baseline: Run, candidate: Run, metrics: Sequence[str], *, top: int = 10,
                        seed: int = 0, stats: bool = True) -> list[MetricComparison]:
    """The comparison without :mod:`ragmeter.stats`: paired bootstrap CI and sign-flip test.

    See :func:`paired_bootstrap_ci` and :func:`paired_permutation_p`; ``stats=False`` computes the
    means and the most changed samples only.
    """
    pos = {rec.get("id"): i for i, rec in enumerate(baseline.records)}
    cand_ids = [rec.get("id") for rec in candidate.records]
    out: list[MetricComparison] = []
    for m in metrics:
        b_all, c_all = baseline.scores(m), candidate.scores(m)
        pairs = [(sid, b_all[pos[sid]], c_all[i]) for i, sid in enumerate(cand_ids) if sid in pos]
        pairs = [(sid, b, c) for sid, b, c in pairs if not (math.isnan(b) or math.isnan(c))]
        if not pairs:
            out.append(MetricComparison(m, 0, None, None, None, None, None, "no paired scores"))
            continue
        b = np.array([p[1] for p in pairs])
        c = np.array([p[2] for p in pairs])
        d = c - b
        ci = paired_bootstrap_ci(d, seed=seed) if stats and d.size > 1 else None
        p = paired_permutation_p(d, seed=seed) if stats and d.size > 1 else None
        order = np.argsort(-np.abs(d), kind="stable")[:top]
        changed = [(str(pairs[i][0]), float(b[i]), float(c[i])) for i in order if d[i] != 0]
        out.append(MetricComparison(
            m, int(d.size), float(b.mean()), float(c.mean()), float(d.mean()), ci, p,
            "Paired bootstrap 95% CI (2000 resamples); p from a paired sign-flip randomisation test (5000)",
            changed,
        ))
    return out


def _clean_number(v: Any) -> Any:
    """``v``, or None when it is a non-finite float (NaN, infinity)."""
    if isinstance(v, float) and not math.isfinite(v):
        return None
    return v


def sanitize(obj: Any) -> Any:
    """``obj`` with every non-finite float made None (JSON has no NaN), recursively."""
    if isinstance(obj, dict):
        return {str(k): sanitize(v) for k, v in obj.items()}
    if isinstance(obj, list | tuple):
        return [sanitize(v) for v in obj]
    return _clean_number(obj)


def build_payload(run: Run, texts: dict[str, dict[str, Any]] | None, *, baseline: Run | None = None,
                  max_text_chars: int | None = DEFAULT_MAX_TEXT_CHARS) -> dict[str, Any]:
    """The JSON the page's script renders the sample table from.

    Shape::

        {"metrics": [...], "hasText": bool, "compare": bool,
         "samples": [{"id", "q", "a", "r", "c": [[id, text, score], ...],
                      "m": {metric: {"s": score, "t": reason, "e": error|null, "d": details-index|null}},
                      "d": [details, ...], "b": {metric: baseline score}, "x": true if any error}]}
    """
    metrics = run.metrics
    base_scores: dict[str, dict[str, float]] = {}
    if baseline is not None:
        for m in metrics:
            col = baseline.scores(m)
            base_scores[m] = {str(rec.get("id")): float(col[i]) for i, rec in enumerate(baseline.records)}
    samples: list[dict[str, Any]] = []
    for rec in run.records:
        sid = str(rec.get("id"))
        entry: dict[str, Any] = {"id": sid}
        t = (texts or {}).get(sid)
        if t is not None:
            entry["q"] = clip_text(t.get("q"), max_text_chars)
            entry["a"] = clip_text(t.get("a"), max_text_chars)
            entry["r"] = clip_text(t.get("r"), max_text_chars)
            entry["c"] = [[cid, clip_text(ctext, max_text_chars), _clean_number(cscore)]
                          for cid, ctext, cscore in t.get("c", [])]
        details_list: list[Any] = []
        mres: dict[str, Any] = {}
        any_error = False
        for m in metrics:
            r = rec.get("metrics", {}).get(m)
            if r is None:
                mres[m] = {"s": None, "t": "not in results.jsonl", "e": None, "d": None}
                continue
            details = r.get("details") or None
            di = None
            if details:
                # a handful of distinct details per sample: a linear scan with == is cheapest
                di = next((k for k, d in enumerate(details_list) if d == details), None)
                if di is None:
                    di = len(details_list)
                    details_list.append(sanitize(details))
            err = sanitize(r["error"]) if r.get("error") else None
            any_error = any_error or bool(err)
            mres[m] = {"s": _clean_number(r.get("score")), "t": clip_text(r.get("reason") or "", max_text_chars),
                       "e": err, "d": di}
        entry["m"] = mres
        if details_list:
            entry["d"] = details_list
        if any_error:
            entry["x"] = True
        if baseline is not None:
            entry["b"] = {m: _clean_number(base_scores[m].get(sid)) for m in metrics}
        samples.append(entry)
    # scores and details are made JSON-safe above (NaN -> None); embed_json refuses any NaN left
    return {"metrics": metrics, "hasText": texts is not None, "compare": baseline is not None, "samples": samples}
