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
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from ..errors import InputError, InvalidParameterError
from ..run_names import direction, spec_of
from ..stats.compare import compare
from ._evidence import SCALE, evidence_marks, has_claim_spans

#: Keys of the run info that may name the input data file, tried in this order.
DATA_PATH_KEYS = ("data", "data_path", "input", "input_path", "dataset_path", "dataset")

#: Texts longer than this are cut in the page (with a marker saying how long they were).
DISPLAY_CLIP_CHARS = 4000


#: Status codes of :attr:`Run.status` (as :mod:`ragmeter.results` writes them).
SCORED, UNDEFINED, ERROR = 0, 1, 2

#: At most this many distinct undefined reasons / error types are counted per metric (the rest
#: are counted under ``"(other reasons)"``), so a reason with a sample id in it cannot grow memory.
MAX_DISTINCT_REASONS = 100

_DIGITS = re.compile(r"\d+")


class Run:
    """One run directory: ``summary.json`` and the per-sample columns of ``results.jsonl``.

    Reading ``results.jsonl`` keeps only what the report's aggregates need, per sample: the id,
    each metric's score and status, the rank of the first relevant context; and per metric the
    counts of undefined reasons and error types. That is about 10 bytes per sample and metric,
    so a run of any size can be reported. Full records are read again only for the samples the
    page embeds (:meth:`read_records`); a comparison uses the columns too (:meth:`to_result`).

    ``Run(path, summary, records)`` builds the same columns from records in hand.
    """

    def __init__(self, path: Path, summary: dict[str, Any],
                 records: list[dict[str, Any]] | None = None) -> None:
        self.path = Path(path)
        self.summary = summary
        self._records = records
        self.ids: list[str] = []
        self.status: dict[str, np.ndarray] = {}
        self.reasons: dict[str, dict[str, int]] = {m: {} for m in self.metrics}
        self.error_types: dict[str, dict[str, int]] = {m: {} for m in self.metrics}
        self._columns: dict[str, np.ndarray] = {}
        self.first_rank = np.empty(0)
        self.any_error = np.empty(0, dtype=bool)
        self._index(records if records is not None else self._iter_file())

    @property
    def metrics(self) -> list[str]:
        """Metric names, in the summary's order."""
        return list(self.summary.get("metrics", {}))

    @property
    def info(self) -> dict[str, Any]:
        """The run information (``summary["run"]``)."""
        run = self.summary.get("run")
        return run if isinstance(run, dict) else {}

    @property
    def records(self) -> list[dict[str, Any]]:
        """Every ``results.jsonl`` record (read on first use: for a large run, prefer :meth:`read_records`)."""
        if self._records is None:
            self._records = [rec for _, rec in self._iter_file()]
        return self._records

    def scores(self, metric: str) -> np.ndarray:
        """The metric's score per record, NaN where it has none (undefined or errored)."""
        return self._columns[metric] if metric in self._columns else np.full(len(self.ids), np.nan)

    def _iter_file(self) -> Iterable[tuple[int, dict[str, Any]]]:
        """``(byte offset of the line, record)`` for each record of ``results.jsonl``."""
        results_path = self.path / "results.jsonl"
        offset = 0
        with open(results_path, "rb") as fh:
            for lineno, line in enumerate(fh, start=1):
                start, offset = offset, offset + len(line)
                if not line.strip():
                    continue
                yield start, _parse_line(line, results_path, lineno)

    def _index(self, records: Iterable[Any]) -> None:
        """One pass over the records: ids, score and status columns, reasons, first relevant ranks."""
        metrics = self.metrics
        cols: dict[str, list[float]] = {m: [] for m in metrics}
        stat: dict[str, list[int]] = {m: [] for m in metrics}
        first: list[float] = []
        errs: list[bool] = []
        offsets: list[int] = []
        for item in records:
            rec = item[1] if isinstance(item, tuple) else item
            if isinstance(item, tuple):
                offsets.append(item[0])
            self.ids.append(str(rec.get("id")))
            results = rec.get("metrics") or {}
            rank = math.nan
            any_err = False
            for m in metrics:
                r = results.get(m) or {}
                score = r.get("score")
                if r.get("error"):
                    st, v = ERROR, math.nan
                    err = r["error"]
                    _count(self.error_types[m], str(err.get("type") if isinstance(err, dict) else err))
                    any_err = True
                elif isinstance(score, int | float) and not isinstance(score, bool) and math.isfinite(score):
                    st, v = SCORED, float(score)
                else:
                    st, v = UNDEFINED, math.nan
                    if m in results:
                        _count(self.reasons[m], _DIGITS.sub("N", str(r.get("reason") or "(no reason given)")))
                cols[m].append(v)
                stat[m].append(st)
                det = r.get("details")
                if math.isnan(rank) and isinstance(det, dict) and "relevant_ranks" in det:
                    ranks = [k for k in det["relevant_ranks"] or [] if isinstance(k, int | float)]
                    rank = float(min(ranks)) if ranks else math.inf
            first.append(rank)
            errs.append(any_err)
        self._columns = {m: np.asarray(v, dtype=np.float64) for m, v in cols.items()}
        self.status = {m: np.asarray(v, dtype=np.int8) for m, v in stat.items()}
        self.first_rank = np.asarray(first, dtype=np.float64)
        self.any_error = np.asarray(errs, dtype=bool)
        self._offsets = np.asarray(offsets, dtype=np.int64)

    def to_result(self) -> Any:
        """The run as a :class:`~ragmeter.results.RunResult` of its columns only (ids, scores,
        statuses, run info; ``records`` None): what :mod:`ragmeter.stats` compares and diagnoses,
        at about 10 bytes per sample and metric whatever the size of the records."""
        from ..results import RunResult

        return RunResult(self.ids, {m: self.scores(m) for m in self.metrics}, dict(self.status), None, self.info)

    def read_records(self, indices: Iterable[int]) -> dict[int, dict[str, Any]]:
        """The full records at these positions (0-based), read again from ``results.jsonl``."""
        wanted = set(indices)
        if self._records is not None:
            return {i: self._records[i] for i in wanted if 0 <= i < len(self._records)}
        out: dict[int, dict[str, Any]] = {}
        results_path = self.path / "results.jsonl"
        with open(results_path, "rb") as fh:  # seek to each wanted line: no second parse of the whole file
            for pos in sorted(i for i in wanted if 0 <= i < len(self._offsets)):
                fh.seek(int(self._offsets[pos]))
                out[pos] = _parse_line(fh.readline(), results_path, None)
        return out


def _parse_line(line: bytes, path: Path, lineno: int | None) -> dict[str, Any]:
    """One ``results.jsonl`` line as a record, or an error naming the file and line."""
    where = f"{path}:{lineno}" if lineno is not None else str(path)
    try:
        rec = json.loads(line)
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise InvalidParameterError(f"{where}: not valid JSON ({exc})") from exc
    if not isinstance(rec, dict):
        raise InvalidParameterError(f"{where}: expected a JSON object per line")
    return rec


def _count(counter: dict[str, int], key: str) -> None:
    """Add one to ``counter[key]``; past :data:`MAX_DISTINCT_REASONS` keys, to ``"(other reasons)"``."""
    if key not in counter and len(counter) >= MAX_DISTINCT_REASONS:
        key = "(other reasons)"
    counter[key] = counter.get(key, 0) + 1


def top_reasons(counter: dict[str, int], k: int = 2) -> list[tuple[str, int]]:
    """The ``k`` most common entries, most common first (ties in first-seen order).

    >>> top_reasons({"a": 1, "b": 3, "c": 3})
    [('b', 3), ('c', 3)]
    """
    return sorted(counter.items(), key=lambda kv: -kv[1])[:k]


def load_run(path: str | os.PathLike[str]) -> Run:
    """Read ``summary.json`` and index ``results.jsonl`` of the run directory ``path`` (see :class:`Run`).

    Raises
    ------
    InvalidParameterError
        ``path`` is not a run directory (no ``summary.json`` / ``results.jsonl``) or a file in it is
        not valid JSON; the message says which file (and line) and what to do.
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
    if not isinstance(summary, dict) or not isinstance(summary.get("metrics"), dict):
        raise InvalidParameterError(f"{summary_path}: expected an object with a 'metrics' object")
    return Run(run_dir, summary)


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
               field_map: dict[str, str] | None = None,
               ids: Iterable[str] | None = None) -> dict[str, dict[str, Any]]:
    """``{sample id: {"q", "a", "r", "c"}}`` from a data file, through :func:`ragmeter.io.read_samples`.

    Bad rows are skipped (the run recorded them as errored samples already). ``c`` is a list of
    ``[id, text, score]`` per retrieved context, in rank order. With ``ids``, only those samples'
    texts are kept (the file is still read lazily, one row at a time).
    """
    from ..io import read_samples

    wanted = None if ids is None else set(ids)
    out: dict[str, dict[str, Any]] = {}
    for s in read_samples(path, on_error="skip", format=format, field_map=field_map):  # type: ignore[arg-type]
        if isinstance(s, InputError) or (wanted is not None and s.id not in wanted):
            continue
        out[s.id] = {
            "q": s.query,
            "a": s.answer,
            "r": s.reference,
            "c": [[c.id, c.text, c.score] for c in s.contexts],
        }
    return out


def metric_spec_of(name: str) -> Any:
    """The registry spec of a run's metric name (``ndcg@5``, ``faithfulness(mode=direct)``, a peer's
    name), or None when ragmeter does not know it (:func:`ragmeter.run_names.spec_of`)."""
    return spec_of(name)


def higher_is_better(name: str) -> bool:
    """The metric's direction from the registry (True for a metric ragmeter does not know)."""
    return direction(name) is not False


#: At most this many samples are embedded in the page (a run with more embeds a selection).
DEFAULT_MAX_SAMPLES = 2000
#: The embedded samples stop when their JSON passes this many bytes (the page stays under ~20 MB).
DEFAULT_MAX_BYTES = 15_000_000


def select_samples(run: Run, *, max_samples: int = DEFAULT_MAX_SAMPLES, worst: int = 25, best: int = 5,
                   thresholds: dict[str, float] | None = None, seed: int = 0) -> list[tuple[int, list[str]]]:
    """The samples the page embeds, most important first, each with why it was chosen.

    A run of at most ``max_samples`` samples embeds all of them (in input order, no reasons).
    A larger one embeds, in this order of priority and without repeats: per metric, its ``worst``
    lowest and ``best`` highest scored samples (by the metric's direction: for a lower-is-better
    metric, "worst" is the highest); every errored sample and every sample on the failing side of
    a gate threshold (``thresholds``: ``{metric: threshold}``), up to half of ``max_samples``; then a
    random sample (``numpy.random.default_rng(seed)``) up to ``max_samples``. Aggregates (means,
    histograms, diagnosis) always use every sample.
    """
    n = len(run.ids)
    if n <= max_samples:
        return [(i, []) for i in range(n)]
    chosen: dict[int, list[str]] = {}

    def add(i: int, why: str, cap: int = max_samples) -> bool:
        if i in chosen:
            if why not in chosen[i]:
                chosen[i].append(why)
            return True
        if len(chosen) >= cap:
            return False
        chosen[i] = [why]
        return True

    order_of: dict[str, np.ndarray] = {}
    for m in run.metrics:
        col = run.scores(m)
        scored = np.flatnonzero(np.isfinite(col))
        key = col[scored] if higher_is_better(m) else -col[scored]
        order_of[m] = scored[np.argsort(key, kind="stable")]  # worst first
    for m, order in order_of.items():
        for i in order[:worst]:
            add(int(i), f"worst {m}")
        for i in order[::-1][:best]:
            add(int(i), f"best {m}")
    failing_cap = len(chosen) + max_samples // 2
    for i in np.flatnonzero(run.any_error):
        if not add(int(i), "error", failing_cap):
            break
    for m, t in (thresholds or {}).items():
        if m not in order_of:
            continue
        col = run.scores(m)
        up = higher_is_better(m)
        for i in order_of[m]:
            if (col[i] >= t) if up else (col[i] <= t):
                break  # sorted worst first: the rest pass
            if not add(int(i), f"fails gate {m}", failing_cap):
                break
    rng = np.random.default_rng(seed)
    for i in rng.permutation(n):
        if len(chosen) >= max_samples:
            break
        if int(i) not in chosen:
            add(int(i), "random")
    return list(chosen.items())


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


def compare_runs(baseline: Run, candidate: Run, metrics: Sequence[str], *, top: int = 10,
                 seed: int = 0, results: tuple[Any, Any] | None = None) -> list[MetricComparison]:
    """Per-metric paired comparison over the samples (matched by id) that both runs scored.

    The statistics come from :func:`ragmeter.stats.compare` (paired bootstrap CI of the mean
    difference, paired permutation or McNemar test, Holm-adjusted p-values). ``changed`` lists the
    ``top`` samples with the largest ``|candidate - baseline|`` as ``(id, baseline score, candidate
    score)`` (:func:`changed_samples`). ``results``: the two runs as
    :class:`~ragmeter.results.RunResult` when already loaded.
    """
    changed = changed_samples(baseline, candidate, metrics, top=top)
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
            verdict=_verdict_words(str(row.get("verdict") or "")), changed=changed[row["metric"]],
            higher_is_better=row.get("higher_is_better"),
        ))
    return out


def _verdict_words(verdict: str) -> str:
    """``ragmeter.stats`` says A/B; the report says baseline/candidate."""
    return {"A better": "baseline better", "B better": "candidate better"}.get(verdict, verdict)


def changed_samples(baseline: Run, candidate: Run, metrics: Sequence[str], *,
                    top: int = 10) -> dict[str, list[tuple[str, float, float]]]:
    """Per metric, the ``top`` samples scored in both runs whose score changed most, biggest
    ``|candidate - baseline|`` first (ties in the candidate's order), as ``(id, baseline score,
    candidate score)``; unchanged samples are left out. Reads the score columns, never the records."""
    pos = {sid: i for i, sid in enumerate(baseline.ids)}
    cand_ids = candidate.ids
    ic = np.fromiter((i for i, sid in enumerate(cand_ids) if sid in pos), dtype=np.int64)
    ib = np.fromiter((pos[cand_ids[i]] for i in ic), dtype=np.int64, count=ic.size)
    del pos
    out: dict[str, list[tuple[str, float, float]]] = {}
    for m in metrics:
        b, c = baseline.scores(m)[ib], candidate.scores(m)[ic]
        both = ~(np.isnan(b) | np.isnan(c))
        b, c, at = b[both], c[both], ic[both]
        d = c - b
        order = np.argsort(-np.abs(d), kind="stable")[:top]
        out[m] = [(str(cand_ids[at[i]]), float(b[i]), float(c[i])) for i in order if d[i] != 0]
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
                  clip_chars: int | None = DISPLAY_CLIP_CHARS,
                  selection: Sequence[tuple[int, list[str]]] | None = None,
                  max_bytes: int | None = DEFAULT_MAX_BYTES) -> dict[str, Any]:
    """The JSON the page's script renders the sample table from.

    ``selection`` (from :func:`select_samples`; default every sample) says which samples to embed,
    most important first, and why; samples are added in that order until their JSON passes
    ``max_bytes`` (None: no limit), then kept in the run's order.

    Shape::

        {"metrics": [...], "hasText": bool, "compare": bool, "total": samples in the run,
         "claimScale": how claims are classed (when a sample has "ev"),
         "samples": [{"id", "i": position in the run, "w": [why chosen] (a selection only),
                      "q", "a", "r", "c": [[id, text, score], ...],
                      "m": {metric: {"s": score, "t": reason, "e": error|null, "d": details-index|null}},
                      "d": [details, ...], "b": {metric: baseline score}, "x": true if any error,
                      "meta": the row's metadata, "cm": [each context's metadata] (when any),
                      "ev": claims and their evidence spans (:func:`ragmeter.report._evidence.evidence_marks`)}]}
    """
    metrics = run.metrics
    if selection is None:
        selection = [(i, []) for i in range(len(run.ids))]
    # the baseline's scores of the embedded samples, looked up by id in its columns when needed
    base_pos = {sid: i for i, sid in enumerate(baseline.ids)} if baseline is not None else {}
    base_cols = {m: baseline.scores(m) for m in metrics} if baseline is not None else {}
    records = run.read_records(i for i, _ in selection)
    samples: list[dict[str, Any]] = []
    size = 0
    for pos, why in selection:
        rec = records.get(pos)
        if rec is None:
            continue
        entry = _sample_entry(rec, metrics, texts, clip_chars)
        entry["i"] = pos
        if why:
            entry["w"] = why
        if baseline is not None:
            j = base_pos.get(entry["id"])
            entry["b"] = {m: None if j is None else _clean_number(float(base_cols[m][j])) for m in metrics}
        if max_bytes is not None:
            size += len(json.dumps(entry, ensure_ascii=False, allow_nan=True, default=str))
            if size > max_bytes and samples:
                break
        samples.append(entry)
    samples.sort(key=lambda e: e["i"])
    # scores and details are made JSON-safe above (NaN -> None); embed_json refuses any NaN left
    payload = {"metrics": metrics, "hasText": texts is not None, "compare": baseline is not None,
               "total": len(run.ids), "samples": samples}
    if any("ev" in e for e in samples):
        payload["claimScale"] = SCALE
    return payload


def _sample_entry(rec: dict[str, Any], metrics: Sequence[str], texts: dict[str, dict[str, Any]] | None,
                  clip_chars: int | None) -> dict[str, Any]:
    """One sample of the payload (see :func:`build_payload`), without the baseline scores."""
    sid = str(rec.get("id"))
    entry: dict[str, Any] = {"id": sid}
    t = (texts or {}).get(sid)
    if t is not None:
        entry["q"] = clip_text(t.get("q"), clip_chars)
        entry["a"] = clip_text(t.get("a"), clip_chars)
        entry["r"] = clip_text(t.get("r"), clip_chars)
        entry["c"] = [[cid, clip_text(ctext, clip_chars), _clean_number(cscore)]
                      for cid, ctext, cscore in t.get("c", [])]
    details_list: list[Any] = []
    mres: dict[str, Any] = {}
    any_error = False
    claims_from: tuple[str, dict[str, Any]] | None = None
    for m in metrics:
        r = rec.get("metrics", {}).get(m)
        if r is None:
            mres[m] = {"s": None, "t": "not in results.jsonl", "e": None, "d": None}
            continue
        details = r.get("details") or None
        if claims_from is None and has_claim_spans(details):
            claims_from = (m, details)
        di = None
        if details:
            # a handful of distinct details per sample: a linear scan with == is cheapest
            di = next((k for k, d in enumerate(details_list) if d == details), None)
            if di is None:
                di = len(details_list)
                details_list.append(sanitize(details))
        err = sanitize(r["error"]) if r.get("error") else None
        any_error = any_error or bool(err)
        mres[m] = {"s": _clean_number(r.get("score")), "t": clip_text(r.get("reason") or "", clip_chars),
                   "e": err, "d": di}
    entry["m"] = mres
    if claims_from is not None and t is not None:  # the claims marked in the answer, their evidence in the contexts
        marks = evidence_marks(*claims_from, t.get("a"), [c[1] for c in t.get("c", [])], clip_chars)
        if marks is not None:
            entry["ev"] = marks
    if rec.get("metadata"):  # the row's keys ragmeter does not read, as results.jsonl keeps them
        entry["meta"] = sanitize(rec["metadata"])
    if rec.get("context_metadata"):
        entry["cm"] = sanitize(rec["context_metadata"])
    if details_list:
        entry["d"] = details_list
    if any_error:
        entry["x"] = True
    return entry
