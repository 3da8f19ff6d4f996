"""``calibrate``: how far to trust a judge, the corrected estimate (PPI++) and abstention thresholds.

Inputs are judge scores on many samples and human labels on a few of them (keyed by sample id
and metric). For each metric with labels, :func:`calibrate` reports agreement on the labelled
samples (:func:`~ragmeter.stats.agreement`), three intervals for the mean human label over the
whole run (labels only, judge only, PPI++), and a conformal abstention threshold.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from .._validate import check_finite, check_int, check_probability, clean
from ..errors import InvalidParameterError
from ..intervals import Interval, normal_interval
from ..results import RunResult
from ..run_names import direction
from ._io import ScoreTable, load_scores, read_long_table
from ._render import calibration_markdown, calibration_rich
from .abstain import DEFAULT_GRID, abstention_threshold
from .agreement import agreement
from .ppi import labels_only_interval, ppi_mean


@dataclass
class Calibration:
    """The result of :func:`calibrate`; ``to_dict()`` is the ``--format json`` output.

    ``metrics`` maps each labelled metric to its report: ``n_labelled``, ``n_unlabelled``,
    ``labels_without_score`` (``{"count", "ids"}``), ``agreement``, ``judge_bias``
    (:math:`\\overline{f_L - Y}`), ``intervals`` (``labels_only``, ``judge_only``, ``ppi``) and
    ``abstention``. ``metrics_without_scores`` lists label metrics the scores do not have.
    """

    metrics: dict[str, dict[str, Any]]
    metrics_without_scores: list[str]
    settings: dict[str, Any] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        """A JSON-safe dict."""
        return clean({"metrics": self.metrics, "metrics_without_scores": self.metrics_without_scores,
                      "settings": self.settings})

    def to_json(self) -> str:
        """:meth:`to_dict` as indented JSON."""
        return json.dumps(self.to_dict(), indent=2, ensure_ascii=False)

    def to_markdown(self) -> str:
        """A Markdown report."""
        return calibration_markdown(self)

    def to_rich(self) -> Any:
        """A rich renderable."""
        return calibration_rich(self)


def read_labels(path: str | os.PathLike[str], *, metric: str | None = None) -> ScoreTable:
    """Read human labels from a CSV/TSV/JSONL file with columns ``id``, ``metric``, ``label``.

    Without a ``metric`` column, every row labels ``metric``. Rows with an empty label are
    skipped; a repeated (id, metric) pair is an :class:`~ragmeter.errors.InputError`.
    """
    return read_long_table(path, "label", metric=metric)


#: Prefix of the sample ids read from a judge-check file (kept apart from the run's own ids).
JUDGE_CHECK_ID = "judge-check:"


def read_judge_check(path: str | os.PathLike[str]) -> tuple[ScoreTable, ScoreTable]:
    """The judge scores and human labels of a ``ragmeter judge-check -o`` file: per metric,
    ``{"judge-check:<id>": score}`` and ``{"judge-check:<id>": label}`` (labels on the metric's
    scale: 1/0 for faithful, relevant, correct >= 4, complete; 1 - faithful for
    hallucination_rate; the share of relevant chunks for context_relevancy)."""
    from ..errors import InputError

    try:
        with open(path, encoding="utf-8") as fh:
            data = json.load(fh)
    except ValueError as exc:
        raise InputError(f"not valid JSON ({exc})", path=str(path)) from None
    if not isinstance(data, dict) or data.get("kind") != "ragmeter-judge-check" or not isinstance(
            data.get("rows"), dict):
        raise InputError("expected the JSON written by `ragmeter judge-check -o`", path=str(path), field="kind")
    scores: ScoreTable = {}
    labels: ScoreTable = {}
    for metric, rows in data["rows"].items():
        for k, row in enumerate(rows):
            if not isinstance(row, dict) or not {"id", "score", "label"} <= set(row):
                raise InputError(f"rows.{metric}[{k}]: expected id, score and label", path=str(path),
                                 field=f"rows.{metric}")
            sid = JUDGE_CHECK_ID + str(row["id"])
            scores.setdefault(metric, {})[sid] = float(row["score"])
            labels.setdefault(metric, {})[sid] = float(row["label"])
    return scores, labels


def _judge_only(f_all: np.ndarray, confidence: float) -> Interval:
    if f_all.size == 0:
        return Interval(None, None, None, 0, "none", confidence)
    if f_all.size == 1:
        v = float(f_all[0])
        return Interval(v, v, v, 1, "degenerate", confidence)
    return normal_interval(float(f_all.mean()), float(f_all.std(ddof=1) / np.sqrt(f_all.size)),
                           int(f_all.size), confidence)


def calibrate(
    scores: RunResult | str | os.PathLike[str] | ScoreTable,
    labels: str | os.PathLike[str] | ScoreTable | None = None,
    *,
    judge_check: str | os.PathLike[str] | None = None,
    metrics: list[str] | None = None,
    confidence: float = 0.95,
    threshold: float = 0.5,
    bins: int = 10,
    alpha: float = 0.1,
    positive: float = 0.5,
    lam: float | str = "auto",
    metric: str | None = None,
) -> Calibration:
    """Judge-vs-human agreement, PPI++ estimate and abstention threshold for each labelled metric.

    For metric m, the labelled samples are those with both a label and a judge score (n); the
    unlabelled ones have a score only (N); labels whose sample has no score are listed, not used.

    * ``agreement``: see :func:`~ragmeter.stats.agreement` (binary labels: accuracy, Cohen's
      kappa, confusion matrix with the judge cut at ``threshold``; graded: Spearman, Kendall,
      MAE, bias; ECE with ``bins`` equal-width bins when scores and labels lie in [0, 1]).
    * ``intervals.labels_only``: :math:`\\bar Y \\pm z s_Y/\\sqrt n`;
      ``intervals.judge_only``: :math:`\\bar f \\pm z s_f/\\sqrt{n+N}` over every judge score
      (ignores the judge's bias, shown as ``judge_bias``); ``intervals.ppi``: PPI++
      (:func:`~ragmeter.stats.ppi_mean`) for the mean human label over all n + N samples.
    * ``abstention``: :func:`~ragmeter.stats.abstention_threshold` at risk ``alpha`` with
      acceptable = ``label >= positive``, when scores lie in [0, 1] (else None with a reason).

    Parameters
    ----------
    scores:
        A :class:`~ragmeter.results.RunResult`, an OUTDIR, a ``results.jsonl`` path, a
        long-format file (``id, metric, score``) or a ``{metric: {id: score}}`` dict.
    labels:
        A label file (``id, metric, label``; see :func:`read_labels`) or ``{metric: {id: label}}``.
    judge_check:
        A ``ragmeter judge-check -o`` file: its rows (the judge's scores and the human labels on the
        labelled set, ids prefixed ``judge-check:``) join the labelled samples, the run's scores
        stay the unlabelled ones. PPI++'s guarantee assumes the labelled rows are drawn from the
        same population as the run's samples; the bundled validation set is not your data, so the
        corrected interval holds only as far as it resembles it (``settings.judge_check`` says so).
    metrics:
        Restrict to these metrics (default: every metric that has labels and scores).
    metric:
        The metric of files without a ``metric`` column.
    confidence, threshold, bins, alpha, positive, lam:
        See above; ``lam`` is ``"auto"`` (PPI++) or a fixed value in [0, 1] (1 = classic PPI).

    Returns
    -------
    Calibration
    """
    confidence = check_probability(confidence, "confidence")
    threshold = check_finite(threshold, "threshold")
    bins = check_int(bins, "bins", minimum=1)
    alpha = check_probability(alpha, "alpha")
    positive = check_finite(positive, "positive")
    table, lab = _load_tables(scores, labels, judge_check, metric)
    names = _pick_metrics(table, lab, metrics)
    out = {m: _metric_report(table[m], lab[m], confidence=confidence, threshold=threshold, bins=bins,
                             alpha=alpha, positive=positive, lam=lam, higher=direction(m) is not False)
           for m in names}
    settings: dict[str, Any] = {"confidence": confidence, "threshold": threshold, "bins": bins,
                                "alpha": alpha, "positive": positive, "lambda": lam}
    if judge_check is not None:
        settings["judge_check"] = {"file": str(judge_check), "note": "labelled rows from a judge-check: PPI++ "
                                   "assumes they come from the same population as the run's samples"}
    return Calibration(out, [m for m in lab if m not in table], settings)


def _load_tables(scores: Any, labels: Any, judge_check: Any, metric: str | None) -> tuple[ScoreTable, ScoreTable]:
    """The judge scores and the human labels (``{metric: {id: value}}``), the judge-check file's
    rows added to both."""
    table = _as_table(scores, "scores", metric, load_scores)
    if labels is None and judge_check is None:
        raise InvalidParameterError("labels: expected a label file, a judge-check file (judge_check=), or both")
    lab = _as_table(labels, "labels", metric, read_labels) if labels is not None else {}
    if judge_check is not None:
        jc_scores, jc_labels = read_judge_check(judge_check)
        for m, rows in jc_scores.items():
            table.setdefault(m, {}).update(rows)
            lab.setdefault(m, {}).update(jc_labels[m])
    return table, lab


def _pick_metrics(table: ScoreTable, lab: ScoreTable, metrics: list[str] | None) -> list[str]:
    """The metrics to calibrate: those with both labels and scores, or the requested ones (which
    must be among them)."""
    names = [m for m in lab if m in table]
    if metrics is not None:
        unknown = [m for m in metrics if m not in names]
        if unknown:
            raise InvalidParameterError(f"metrics: expected metrics with both labels and scores "
                                        f"({', '.join(names) or 'none'}), got {', '.join(unknown)}")
        names = list(metrics)
    if not names:
        raise InvalidParameterError(
            f"labels: expected labels for a metric the scores have ({', '.join(table) or 'none'}), got labels for "
            f"{', '.join(lab) or 'nothing'}; check the 'metric' column")
    return names


def _metric_report(sc: dict[str, float], lb: dict[str, float], *, confidence: float, threshold: float, bins: int,
                   alpha: float, positive: float, lam: float | str, higher: bool = True) -> dict[str, Any]:
    """One metric's report (see :class:`Calibration`) from its judge scores ``sc`` and labels ``lb``;
    ``higher`` is the metric's direction (:func:`_abstention`)."""
    lab_ids = [i for i in lb if i in sc]
    y = np.array([lb[i] for i in lab_ids], dtype=np.float64)
    fl = np.array([sc[i] for i in lab_ids], dtype=np.float64)
    fu = np.array([v for i, v in sc.items() if i not in lb], dtype=np.float64)
    missing = [i for i in lb if i not in sc]
    f_all = np.concatenate([fl, fu])
    report: dict[str, Any] = {
        "n_labelled": int(y.size), "n_unlabelled": int(fu.size),
        "labels_without_score": {"count": len(missing), "ids": missing},
        "agreement": agreement(y, fl, threshold=threshold, bins=bins) if y.size else None,
        "judge_bias": float((fl - y).mean()) if y.size else None,
    }
    report["intervals"] = _intervals(y, fl, fu, confidence=confidence, lam=lam)
    in_unit = f_all.size > 0 and f_all.min() >= 0 and f_all.max() <= 1
    if y.size and in_unit:
        report["abstention"] = _abstention(fl, y, fu, alpha=alpha, positive=positive, higher=higher)
    else:
        report["abstention"] = None
        report["abstention_note"] = ("no labelled sample" if not y.size else
                                     "scores outside [0, 1]: use ragmeter.stats.abstention_threshold(grid=...)")
    return report


def _abstention(fl: np.ndarray, y: np.ndarray, fu: np.ndarray, *, alpha: float, positive: float,
                higher: bool) -> dict[str, Any]:
    """The abstention threshold of scores and labels in [0, 1], as a dict with ``answer_when``.

    Higher is better: answer when ``score >= threshold``, acceptable when ``label >= positive``. A
    lower-is-better metric (hallucination_rate: label 1 = hallucinated) is negated first (exactly,
    on the negated grid): answer when ``score <= threshold``, acceptable when ``label <= 1 - positive``.
    """
    if higher:
        return abstention_threshold(fl, y, alpha=alpha, positive=positive, scores_unlabelled=fu).to_dict() | {
            "answer_when": "score >= threshold"}
    out = abstention_threshold(-fl, -y, alpha=alpha, positive=positive - 1.0, grid=-DEFAULT_GRID[:-1],
                               scores_unlabelled=-fu).to_dict()
    if out["threshold"] is not None:
        out["threshold"] = -out["threshold"]
    return out | {"answer_when": "score <= threshold"}


def _intervals(y: np.ndarray, fl: np.ndarray, fu: np.ndarray, *, confidence: float,
               lam: float | str) -> dict[str, Any]:
    """The three intervals for the mean label (labels only, judge only, PPI++) and the ratio of
    the PPI++ interval's width to the labels-only one's."""
    ppi = ppi_mean(y, fl, fu, confidence=confidence, lam=lam)
    lo = labels_only_interval(y, confidence=confidence)
    intervals: dict[str, Any] = {"labels_only": lo.to_dict(),
                                 "judge_only": _judge_only(np.concatenate([fl, fu]), confidence).to_dict(),
                                 "ppi": ppi.to_dict()}
    w_ppi, w_lo = ppi.interval.width, lo.width
    intervals["ppi_width_ratio"] = (w_ppi / w_lo) if w_ppi is not None and w_lo else None
    return intervals


def _as_table(source: Any, name: str, metric: str | None, loader: Any) -> ScoreTable:
    if isinstance(source, dict):
        table: ScoreTable = {}
        for m, rows in source.items():
            if not isinstance(rows, dict):
                raise InvalidParameterError(f"{name}: expected {{metric: {{id: value}}}}, got {type(rows).__name__} "
                                            f"for metric {m!r}")
            table[str(m)] = {str(k): float(v) for k, v in rows.items() if v is not None}
        return table
    return loader(source, metric=metric)
