"""Judge-check: measure how well a judge's metrics separate good answers from bad ones, before trusting it.

:func:`judge_check` runs judged metrics over hand-labelled rows (the bundled sets in
``ragmeter/data/validation/`` or the user's JSONL with a ``labels`` object per row) and reports, per
metric, the AUROC of the score against the human label with DeLong's 95% interval
(:func:`ragmeter.stats.roc.auroc_interval`), agreement with the labels
(:func:`ragmeter.stats.agreement`), Spearman's rho against graded labels, the position profile,
judge calls, seconds and cost, and a verdict: ``usable`` or ``not usable`` by the
:class:`Thresholds` (stated in the output).

Labels, per metric: each metric declares its built-in label rule, its unit (row or retrieved
chunk), its bundled labelled set and how its hard value is read on its spec
(:class:`ragmeter.registry.LabelCheck`, ``MetricSpec.check``); this module reads only that, so it
names no metric. The "good" side is label 1; a lower-is-better metric's score is negated for its
AUROC (the registry's ``higher_is_better``). docs/judges.md lists the built-in rules.

**Your own label rule** (any registered metric: a rubric, an offline metric, a built-in one whose
rule you replace): ``labels={NAME: RULE}`` in Python, ``--label NAME=RULE`` on the command line,
with RULE ``FIELD`` (a boolean ``labels.FIELD``: AUROC against it) or ``FIELD>=K`` (a numeric
``labels.FIELD``: AUROC against ``value >= K``, Spearman's rho against the value), see
:mod:`ragmeter.judges.label_rules`. A user rule is per row (also for a chunk metric) and replaces
the built-in rule of that metric; the built-in rules above stay for every other metric.

Every judged metric also gets the same numbers from its *hard* values (:func:`hard_value`: the
verdicts and ratings the judge wrote, kept in the details beside a probability-weighted score; the
score itself where a result has none, e.g. ``scoring=hard``): ``auroc_hard`` in the report, a
``NAME [hard]`` row in :func:`separation`.

A judge error on a row is counted (``errors``), never scored; an undefined score is left out
(``undefined``). The bench ``bench/judge_quality.py`` prints the same numbers from these functions.
"""

from __future__ import annotations

import json
import math
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path
from typing import TYPE_CHECKING, Any, cast

import numpy as np

from .._dist import spearman
from .._validate import check_probability, clean
from ..errors import InputError, InvalidParameterError, JudgeUnreachable
from ..registry import LabelCheck, canonical_name, list_metrics, lookup_spec
from ..run_names import direction
from .label_rules import LabelRule, base_of, check_rule_labels, resolve_rules, row_lines
from .record import prompt_versions

if TYPE_CHECKING:
    from ..types import Sample

#: The labelled set of a metric checked by a user's label rule without ``data``.
DEFAULT_SET = "judge_validation.jsonl"


def label_check(name: str) -> LabelCheck | None:
    """What judge-check knows of metric ``name`` (its spec's :class:`~ragmeter.registry.LabelCheck`),
    None for a name the registry does not know or a metric that declares none."""
    spec = lookup_spec(base_of(name))
    return None if spec is None else spec.check


def bundled_sets() -> dict[str, str]:
    """Metric -> its bundled labelled set (a file in ``ragmeter/data/validation/``), registry order."""
    return {s.name: s.check.data for s in list_metrics() if s.check is not None and s.check.data is not None}


def default_metrics() -> tuple[str, ...]:
    """The metrics checked when none is named."""
    return tuple(s.name for s in list_metrics() if s.check is not None and s.check.default)


def labelled_metrics() -> list[str]:
    """Every metric with a built-in label rule."""
    return [s.name for s in list_metrics() if s.check is not None and s.check.label is not None]


def hard_value(name: str, details: dict[str, Any]) -> float | None:
    """The score metric ``name`` would have from the hard verdicts or ratings in a result's
    ``details`` (on the score's own scale, its spec's ``check.hard``), None when the details keep
    none (the score already is the hard one, or the result has no judge rating: an embedder score,
    an empty-answer shortcut) or the metric declares no hard value."""
    check = label_check(name)
    return None if check is None or check.hard is None else check.hard(details)


def bundled_path(filename: str) -> Path:
    """The path of a bundled labelled set (package data, so it works from an installed package)."""
    return Path(str(resources.files("ragmeter").joinpath("data", "validation", filename)))


@dataclass(frozen=True)
class Thresholds:
    """When a metric's judge is ``usable``: every condition holds.

    ``min_auroc``: the AUROC is at least this; ``min_ci_low``: the lower end of its 95% interval
    is above this (0.5: better than chance with 95% confidence); ``min_per_class``: at least this
    many labelled units on each side; ``max_error_rate``: at most this share of rows with a judge
    error; ``min_spearman``: Spearman's rho against a graded label at least this (graded metrics).
    """

    min_auroc: float = 0.75
    min_ci_low: float = 0.5
    min_per_class: int = 5
    max_error_rate: float = 0.10
    min_spearman: float = 0.5

    def describe(self) -> str:
        """The rule in one line, as printed and written."""
        return (f"usable when AUROC >= {self.min_auroc:g}, the lower end of its 95% CI > {self.min_ci_low:g}, "
                f">= {self.min_per_class} labelled units per class, judge errors <= {self.max_error_rate:.0%} "
                f"of rows, and (graded labels) Spearman rho >= {self.min_spearman:g}")

    def to_dict(self) -> dict[str, Any]:
        """The thresholds and the rule text."""
        return {"min_auroc": self.min_auroc, "min_ci_low": self.min_ci_low, "min_per_class": self.min_per_class,
                "max_error_rate": self.max_error_rate, "min_spearman": self.min_spearman, "rule": self.describe()}


# ---- labelled pairs ---------------------------------------------------------------------------------

@dataclass
class Pairs:
    """One metric's judge scores beside the human labels on a labelled set.

    ``scores``/``labels``: one per labelled unit (row, or chunk for context_relevancy), label 1 =
    the good side (faithful, relevant, correct, complete); ``sign`` is -1 for a lower-is-better
    metric (its score is negated for the AUROC); ``scale`` is the top of the score's range (10 for
    a chunk's 0-10 rating, else 1). ``graded``: (judge, human) pairs for rho.
    ``hard``: per unit, the hard value (:func:`hard_value`) on the score's scale, else the score;
    ``hard_graded``: ``graded`` with the hard values.
    ``rows``: per sample ``{"id", "score", "label"}`` with the label on the metric's own scale
    (what ``calibrate --judge-check`` reads). ``label``: the rule, as reported (``correct``,
    ``polite``, ``grade>=4``).
    """

    metric: str
    label: str = ""
    unit: str = "row"
    sign: float = 1.0
    scale: float = 1.0
    scores: list[float] = field(default_factory=list)
    labels: list[int] = field(default_factory=list)
    graded: list[tuple[float, float]] = field(default_factory=list)
    hard: list[float] = field(default_factory=list)
    hard_graded: list[tuple[float, float]] = field(default_factory=list)
    rows: list[dict[str, Any]] = field(default_factory=list)
    errors: int = 0
    undefined: int = 0
    n_rows: int = 0

    def split(self, values: Sequence[float] | None = None) -> tuple[list[float], list[float]]:
        """Signed scores (or ``values``) of the label-1 and label-0 units."""
        vals = self.scores if values is None else values
        pos = [self.sign * v for v, y in zip(vals, self.labels, strict=True) if y]
        neg = [self.sign * v for v, y in zip(vals, self.labels, strict=True) if not y]
        return pos, neg


def builtin_rule(name: str) -> LabelRule | None:
    """The built-in rule of a metric (its spec's ``check.label`` and ``check.at_least``), None when it
    has none."""
    check = label_check(name)
    if check is None or check.label is None:
        return None
    return LabelRule(check.label, check.at_least)


def labelled_pairs(name: str, records: Sequence[dict[str, Any]], labels: Sequence[dict[str, Any]],
                   rule: LabelRule | None = None) -> Pairs:
    """The :class:`Pairs` of metric ``name`` from evaluation records (``RunResult.records``) and
    the rows' ``labels`` objects, in the same order, by the user's ``rule`` or else the metric's
    built-in rule (label rules: the module docstring)."""
    base = base_of(name)
    check = label_check(name) or LabelCheck()
    builtin = rule is None
    rule = rule or builtin_rule(name)
    if rule is None:
        raise InvalidParameterError(f"metrics: no label rule for {name!r}: give one (--label {name}=FIELD or "
                                    f"{name}=FIELD>=K; Python: labels={{{name!r}: 'FIELD'}}); built-in rules: "
                                    f"{', '.join(labelled_metrics())}")
    chunks = builtin and check.unit == "chunk" and check.chunk_ratings is not None
    out = Pairs(name, label=rule.field if builtin else str(rule), unit="chunk" if chunks else "row",
                sign=-1.0 if direction(base) is False else 1.0, scale=10.0 if chunks else 1.0)
    for rec, lab in zip(records, labels, strict=True):
        out.n_rows += 1
        r = rec["metrics"][name]
        if r["error"]:
            out.errors += 1
            continue
        if r["score"] is None:
            out.undefined += 1
            continue
        score, details = float(r["score"]), r.get("details") or {}
        if chunks and check.chunk_ratings is not None:
            rel = [int(bool(x)) for x in lab[rule.field]]
            used, hards = check.chunk_ratings(details)
            for u, hd, y in zip(used, hards, rel, strict=True):
                out.scores.append(u)
                out.hard.append(hd)
                out.labels.append(y)
            out.rows.append({"id": rec.get("id"), "score": score, "label": float(np.mean(rel)) if rel else 0.0})
            continue
        h = None if check.hard is None else check.hard(details)
        hard = score if h is None else h
        y = rule.binary(lab[rule.field])
        if rule.graded:
            out.graded.append((score, float(lab[rule.field])))
            out.hard_graded.append((hard, float(lab[rule.field])))
        if builtin and check.finals is not None:
            judged, judged_hard, human = check.finals(details, lab)
            out.graded.append((judged, human))
            out.hard_graded.append((judged_hard, human))
        out.scores.append(score)
        out.labels.append(y)
        out.hard.append(hard)
        out.rows.append({"id": rec.get("id"), "score": score, "label": float(y if out.sign > 0 else 1 - y)})
    return out


def separation(records: Sequence[dict[str, Any]], labels: Sequence[dict[str, Any]],
               rules: dict[str, LabelRule] | None = None) -> list[dict[str, Any]]:
    """The bench's table: per metric with a label rule (built-in, or the user's in ``rules``,
    metric name -> rule: :func:`ragmeter.judges.label_rules.resolve_rules`), n scored, errors,
    AUROC, the mean score of the label-1 and label-0 units, Spearman's rho (graded labels) and, for
    passage_recall, the MAE of the 1-5 final; plus, per judged metric, a ``NAME [hard]`` row: the
    same AUROC, means and rho from the hard values (:func:`hard_value`, per chunk the spec's
    ``check.chunk_ratings``; the score where a result keeps none)."""
    from ..stats.roc import auroc

    rules = rules or {}
    pairs = {name: labelled_pairs(name, records, labels, rules.get(name)) for name in records[0]["metrics"]
             if name in rules or builtin_rule(name) is not None}
    rows = []
    for name, p in pairs.items():
        pos, neg = p.split()
        raw_pos, raw_neg = [p.sign * v for v in pos], [p.sign * v for v in neg]
        row: dict[str, Any] = {"metric": name, "n": len(p.scores), "errors": p.errors,
                               "auroc": _nan(auroc(pos, neg)),
                               "mean_pos": float(np.mean(raw_pos)) if raw_pos else math.nan,
                               "mean_neg": float(np.mean(raw_neg)) if raw_neg else math.nan}
        if p.graded:
            row["spearman"] = _rho(p.graded)
        if _human_finals(p):
            row["mae_final"] = float(np.mean([abs(a - b) for a, b in p.graded]))
        rows.append(row)
    for name, p in pairs.items():
        if _needs_judge(name):
            pos, neg = p.split(p.hard)
            mp, mn = (float(np.mean([p.sign * v for v in x])) if x else math.nan for x in (pos, neg))
            hard_row = {"metric": f"{name} [hard]", "n": len(p.hard), "errors": p.errors,
                        "auroc": _nan(auroc(pos, neg)), "mean_pos": mp, "mean_neg": mn}
            if p.hard_graded:
                hard_row["spearman"] = _rho(p.hard_graded)
            rows.append(hard_row)
    return rows


def _rho(graded: Sequence[tuple[float, float]]) -> float:
    return spearman([g[0] for g in graded], [g[1] for g in graded])[0]


def _human_finals(p: Pairs) -> bool:
    """True when ``p.graded`` holds the metric's (judged, human) finals (``check.finals``, its built-in rule)."""
    check = label_check(p.metric)
    return check is not None and check.finals is not None and p.label == check.label and bool(p.graded)


def _needs_judge(name: str) -> bool:
    spec = lookup_spec(base_of(name))
    return spec is not None and spec.needs_judge


def _nan(v: float | None) -> float:
    return math.nan if v is None else v


def position_profile(records: Sequence[dict[str, Any]], labels: Sequence[dict[str, Any]]) -> dict[str, list[Any]]:
    """Share of "yes" per item position (claim 1, 2, 3+; chunk 1, 2, 3+), beside the human rate
    for chunks: a judge that copies a pattern answers by position, not by content."""
    out: dict[str, list[Any]] = {}
    for name in records[0]["metrics"]:
        check = label_check(name)
        if check is None or check.positions is None:
            continue
        yes: list[list[float]] = [[], [], []]
        human: list[list[float]] = [[], [], []]
        for rec, lab in zip(records, labels, strict=True):
            d = rec["metrics"][name]["details"] or {}
            for i, (judged, h) in enumerate(check.positions(d, lab)):
                yes[min(i, 2)].append(judged)
                if h is not None:
                    human[min(i, 2)].append(h)
        if not any(yes):
            continue  # no item list (e.g. faithfulness(mode=direct)): no profile
        out[name] = [{"position": ("1", "2", "3+")[k], "n": len(yes[k]),
                      "judged_yes": float(np.mean(yes[k])) if yes[k] else None,
                      "human_yes": float(np.mean(human[k])) if human[k] else None} for k in range(3)]
    return out


# ---- the check ----------------------------------------------------------------------------------------

def _spearman(graded: Sequence[tuple[float, float]], confidence: float) -> dict[str, Any] | None:
    """Spearman's rho with a Fisher-z interval (Bonett-Wright standard error
    :math:`\\sqrt{(1 + \\rho^2/2)/(n - 3)}`); None with fewer than 4 pairs or a constant side."""
    from ..intervals import normal_interval

    a, b = np.array([g[0] for g in graded]), np.array([g[1] for g in graded])
    if a.size < 4 or np.ptp(a) == 0 or np.ptp(b) == 0:
        return None
    rho = spearman(a, b)[0]
    z = math.atanh(min(max(rho, -0.999999), 0.999999))
    iv = normal_interval(z, math.sqrt((1 + rho * rho / 2) / (a.size - 3)), int(a.size), confidence)
    return {"rho": rho, "ci": [math.tanh(iv.low or 0.0), math.tanh(iv.high or 0.0)], "n": int(a.size)}


def verdict(report: dict[str, Any], t: Thresholds) -> tuple[str, list[str]]:
    """``("usable" | "not usable", reasons)`` for one metric's report by the thresholds ``t``."""
    fails, passes = [], []
    rows, errors = report["rows"], report["errors"]
    if rows and errors / rows > t.max_error_rate:
        fails.append(f"judge errors on {errors} of {rows} rows (> {t.max_error_rate:.0%})")
    if min(report["n_pos"], report["n_neg"]) < t.min_per_class:
        fails.append(f"too few labelled {report['unit']}s: {report['n_pos']} positive, {report['n_neg']} negative "
                     f"(need {t.min_per_class} of each)")
    auc, ci = report["auroc"], report["auroc_ci"]
    if auc is None or auc < t.min_auroc:
        fails.append(f"AUROC {_fmt(auc)} < {t.min_auroc:g}")
    else:
        passes.append(f"AUROC {auc:.3f} >= {t.min_auroc:g}")
    if ci is None or ci[0] <= t.min_ci_low:
        fails.append(f"95% CI lower end {_fmt(ci[0] if ci else None)} <= {t.min_ci_low:g} (not clearly better "
                     "than chance)")
    else:
        passes.append(f"CI lower end {ci[0]:.3f} > {t.min_ci_low:g}")
    sp = report.get("spearman")
    if report.get("graded"):
        if sp is None or sp["rho"] < t.min_spearman:
            fails.append(f"Spearman rho {_fmt(sp['rho'] if sp else None)} < {t.min_spearman:g}")
        else:
            passes.append(f"rho {sp['rho']:.2f} >= {t.min_spearman:g}")
    return ("not usable", fails) if fails else ("usable", passes)


def _fmt(v: float | None) -> str:
    return "n/a" if v is None else f"{v:.3f}"


def metric_report(p: Pairs, judge_stats: dict[str, Any], seconds: float, thresholds: Thresholds,
                  confidence: float = 0.95) -> dict[str, Any]:
    """One metric's judge-check report from its :class:`Pairs`, the judge counters of its run and
    its wall time: AUROC with interval, agreement, rho, calls, seconds, cost and the verdict."""
    from ..stats import agreement
    from ..stats.roc import auroc, auroc_interval

    pos, neg = p.split()
    iv = auroc_interval(pos, neg, confidence=confidence)
    direction = [y if p.sign > 0 else 1 - y for y in p.labels]
    agree = agreement(direction, [v / p.scale for v in p.scores], threshold=0.5) if p.scores else None
    report: dict[str, Any] = {
        "metric": p.metric, "label": p.label, "unit": p.unit,
        "rows": p.n_rows, "n": len(p.scores), "n_pos": len(pos), "n_neg": len(neg),
        "errors": p.errors, "undefined": p.undefined,
        "auroc": iv.estimate, "auroc_ci": iv.ci, "ci_method": iv.method, "confidence": confidence,
        "mean_pos": float(np.mean([p.sign * v for v in pos])) if pos else None,
        "mean_neg": float(np.mean([p.sign * v for v in neg])) if neg else None,
        "agreement": None if agree is None else {k: agree.get(k) for k in ("accuracy", "cohen_kappa", "threshold")},
        "graded": bool(p.graded), "spearman": _spearman(p.graded, confidence) if p.graded else None,
    }
    if p.hard and any(h != s for h, s in zip(p.hard, p.scores, strict=True)):
        report["auroc_hard"] = auroc(*p.split(p.hard))
        if p.hard_graded:
            report["spearman_hard"] = _spearman(p.hard_graded, confidence)
    if _human_finals(p):
        report["mae_final"] = float(np.mean([abs(a - b) for a, b in p.graded]))
    report.update({
        "calls": int(judge_stats.get("calls", 0)), "requests": int(judge_stats.get("requests", 0)),
        "cache_hits": int(judge_stats.get("cache_hits", 0)), "retries": int(judge_stats.get("retries", 0)),
        "prompt_tokens": int(judge_stats.get("prompt_tokens", 0)),
        "completion_tokens": int(judge_stats.get("completion_tokens", 0)),
        "cost": judge_stats.get("cost"), "seconds": round(seconds, 3),
        "seconds_per_row": round(seconds / p.n_rows, 3) if p.n_rows else None,
    })
    report["verdict"], report["reasons"] = verdict(report, thresholds)
    return report


def by_kind(p: Pairs, kinds: Mapping[str, Any], thresholds: Thresholds,
            confidence: float = 0.95) -> dict[str, dict[str, Any]]:
    """Per kind of text (the rows' ``kind`` field, e.g. ``short``, ``summary``, ``dialogue``), the
    AUROC of a row metric with its interval, the labelled rows on each side and the verdict's AUROC
    conditions (``usable`` when the AUROC and the lower end of its interval meet ``thresholds``), so
    a judge good on one kind is not trusted on another; {} when no row has a kind (or for a chunk metric)."""
    from ..stats.roc import auroc_interval

    if p.unit != "row":
        return {}
    groups: dict[str, tuple[list[float], list[float]]] = {}
    for r in p.rows:
        kind = kinds.get(str(r["id"]))
        if kind is None:
            continue
        pos, neg = groups.setdefault(str(kind), ([], []))
        (pos if r["label"] >= 0.5 else neg).append(r["score"])
    out = {}
    for kind, (pos, neg) in sorted(groups.items()):
        iv = auroc_interval(pos, neg, confidence=confidence)
        ok = (iv.estimate is not None and iv.estimate >= thresholds.min_auroc and iv.low is not None
              and iv.low > thresholds.min_ci_low and min(len(pos), len(neg)) >= thresholds.min_per_class)
        out[kind] = {"n_pos": len(pos), "n_neg": len(neg), "auroc": iv.estimate, "auroc_ci": iv.ci,
                     "verdict": "usable" if ok else "not usable"}
    return out


@dataclass
class JudgeCheck:
    """The result of :func:`judge_check`; :meth:`to_dict` is the JSON written by ``-o``.

    ``metrics``: one report per metric (:func:`metric_report`); ``rows``: per metric the per-sample
    ``{"id", "score", "label"}`` (labels on the metric's scale, for ``ragmeter calibrate
    --judge-check``); ``positions``: the position profiles; ``stopped``: why the check stopped
    early (an unreachable judge), None when it finished; ``label_rules``: the user's label rule per
    checked metric (``{"politeness": "grade>=4"}``), none for a metric checked by its built-in rule.
    """

    judge: dict[str, Any]
    judge_spec: str | None
    metrics: list[dict[str, Any]]
    rows: dict[str, list[dict[str, Any]]]
    positions: dict[str, list[Any]]
    thresholds: Thresholds
    data: dict[str, str]
    prompts: dict[str, str]
    created: str
    stopped: str | None = None
    record: str | None = None
    label_rules: dict[str, str] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        """A JSON-safe dict."""
        from .. import __version__

        return clean({"kind": "ragmeter-judge-check", "format": 1, "ragmeter_version": __version__,
                      "created": self.created, "judge": self.judge, "judge_spec": self.judge_spec,
                      "thresholds": self.thresholds.to_dict(), "data": self.data, "prompts": self.prompts,
                      "metrics": self.metrics, "positions": self.positions, "rows": self.rows,
                      "label_rules": self.label_rules, "stopped": self.stopped, "record": self.record})

    def to_json(self) -> str:
        """:meth:`to_dict` as indented JSON."""
        return json.dumps(self.to_dict(), indent=1, ensure_ascii=False)


def load_labelled(path: str | Path, limit: int | None = None) -> tuple[list[Any], list[dict[str, Any]]]:
    """The samples of a labelled JSONL file and their ``labels`` objects (first ``limit`` rows).

    A row without a ``labels`` object is an :class:`~ragmeter.errors.InputError` naming the file
    and line."""
    from ..io import read_samples

    samples = []
    # read_samples' default on_error="raise": a bad row raises, so every item is a Sample
    for i, s in enumerate(cast("Iterator[Sample]", read_samples(path))):
        if limit is not None and i >= limit:
            break
        if not isinstance(s.metadata.get("labels"), dict):
            raise InputError("expected a 'labels' object (see the bundled judge_validation.jsonl)", path=str(path),
                             line=row_lines(path, i + 1)[-1], field="labels")
        samples.append(s)
    return samples, [s.metadata["labels"] for s in samples]


def _check_labels(name: str, path: str, labels: Sequence[dict[str, Any]], rule: LabelRule | None = None,
                  lines: Sequence[int] | None = None) -> None:
    """Raise InputError naming the file, the line (``lines``: each row's line, default read from
    ``path``) and the field at the first row that lacks a label ``name`` needs, by the user's
    ``rule`` or else its built-in one, or holds a value that rule cannot read."""
    lines = row_lines(path, len(labels)) if lines is None else lines
    need: tuple[str, ...] = ()
    if rule is None:
        check = label_check(name) or LabelCheck()
        chunks = check.unit == "chunk" and check.label is not None
        need = ((check.label,) if chunks and check.label else ()) + check.needs
        rule = None if chunks else builtin_rule(name)
        if rule is None and not need:
            labelled_pairs(name, [], [])  # raises: no label rule
    for lab, line in zip(labels, lines, strict=True):
        for f in need:
            if f not in lab:
                raise InputError(f"metric {name} needs labels.{f}", path=path, line=line, field=f"labels.{f}")
    if rule is not None:
        check_rule_labels(name, rule, path, labels, lines)


def judge_check(judge: Any, *, metrics: Sequence[str] | None = None, data: str | Path | None = None,
                labels: Mapping[str, str | LabelRule] | None = None, limit: int | None = None,
                thresholds: Thresholds | None = None, confidence: float = 0.95, judge_spec: str | None = None,
                on_metric: Callable[[dict[str, Any]], None] | None = None) -> JudgeCheck:
    """Run each metric of ``metrics`` (default: the metrics ``labels`` names, else
    :func:`default_metrics`) with ``judge`` over its labelled set (``data``, else its bundled set,
    :func:`bundled_sets`, or ``judge_validation.jsonl`` for another metric with a rule in ``labels``;
    first ``limit`` rows) and report per metric (see the module docstring). ``labels``: metric name
    -> label rule (``"polite"``, ``"correct>=4"``, a :class:`~ragmeter.judges.label_rules.LabelRule`)
    for any registered metric (a rubric: :mod:`ragmeter.metrics.generation.rubric`), replacing a
    built-in rule. Metrics run one after another, so each one's calls, seconds and cost are its
    own. Every label a metric needs is checked before any call. An unreachable judge stops the
    check: the metrics finished so far are kept and ``stopped`` says why. ``on_metric`` is called
    with each metric's report as it finishes."""
    from .. import evaluate

    confidence = check_probability(confidence, "confidence")
    thresholds = thresholds or Thresholds()
    names = [canonical_name(m) for m in (metrics or (list(labels) if labels else default_metrics()))]
    bundled = bundled_sets()
    rules = resolve_rules(names, labels)
    sets: dict[str, tuple[str, list[Any], list[dict[str, Any]]]] = {}
    lines: dict[str, list[int]] = {}
    plan = []
    for name in names:
        base = base_of(name)
        if data is None and base not in bundled and name not in rules:
            raise InvalidParameterError(f"metrics: no bundled labelled set for {name!r} (bundled: "
                                        f"{', '.join(bundled)}); pass --data with a 'labels' object per row "
                                        f"and a label rule (--label {name}=FIELD)")
        path = str(data) if data is not None else str(bundled_path(bundled.get(base, DEFAULT_SET)))
        if path not in sets:
            sets[path] = (path, *load_labelled(path, limit))
            lines[path] = row_lines(path, len(sets[path][2]))
        _check_labels(name, path, sets[path][2], rules.get(name), lines[path])
        plan.append((name, sets[path]))
    reports, rows, positions, stopped = [], {}, {}, None
    for name, (path, samples, labelled) in plan:
        t0 = time.perf_counter()
        try:
            run = evaluate(samples, [name], judge=judge, engine="local")
        except JudgeUnreachable as exc:
            stopped = f"{exc}; stopped before finishing {name}"
            break
        assert run.records is not None  # evaluate keeps the records by default (keep_records=True)
        pairs = labelled_pairs(name, run.records, labelled, rules.get(name))
        report = metric_report(pairs, run.run.get("judge") or {}, time.perf_counter() - t0, thresholds, confidence)
        report["data"] = Path(path).name
        kinds = by_kind(pairs, {str(smp.id): smp.metadata.get("kind") for smp in samples}, thresholds, confidence)
        if kinds:
            report["by_kind"] = kinds
        reports.append(report)
        rows[name] = pairs.rows
        positions.update(position_profile(run.records, labelled))
        if on_metric is not None:
            on_metric(report)
    return JudgeCheck(judge=judge.describe(), judge_spec=judge_spec, metrics=reports, rows=rows, positions=positions,
                      thresholds=thresholds, data={n: p for n, (p, _, _) in plan}, prompts=prompt_versions(),
                      created=time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()), stopped=stopped,
                      label_rules={n: str(r) for n, r in rules.items()})
