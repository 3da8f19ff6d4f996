"""``diagnose``: map metric signatures to the failing pipeline stage and the fix to try.

Four rules (thresholds in :data:`DEFAULT_THRESHOLDS`, all configurable):

========================  ===============================================  ==========================
finding                   signature                                        stage
========================  ===============================================  ==========================
``retriever_misses``      recall@5 < 0.65 (faithfulness >= 0.75)            retrieval
                          [not if recall@20 >= 0.80]
``ranked_too_low``        recall@20 >= 0.80 and ndcg@5 < 0.50               ranking
``generator_ignores``     faithfulness < 0.75 (ndcg@5 >= 0.70)              generation (grounding)
``dodges_question``       answer_relevancy < 0.70 (faithfulness >= 0.95)    generation (relevance)
========================  ===============================================  ==========================

Conditions in parentheses are *supporting*: when that metric is missing the finding still
fires, marked with the missing metric and a lower strength. Conditions in brackets are
*exclusions*: when the metric is present and the condition fails (the mean), the signature
belongs to another rule (high recall@20 with low recall@5 is a ranking problem, not a miss);
when it is missing it is ignored (and it is never read from a shallower cutoff). A rule needs
its other (*primary*) metrics. For each metric family the run's metric with the nearest cutoff
is used (e.g. ``recall@10`` when ``recall@5`` is absent) and the finding says which.

Run level: a condition *holds* when the metric's mean satisfies it and is *confirmed* when its
whole 95% CI does. Strength: ``strong`` (every condition confirmed, nothing missing),
``moderate`` (confirmed, a supporting metric missing), ``tentative`` (some condition holds by
the mean only). Per sample: the same rules on each sample's own scores.

Position analysis: the answer metric as a function of the rank of the first relevant chunk
(from the retrieval metrics' ``details.relevant_ranks``), to show lost-in-the-middle effects.
"""

from __future__ import annotations

import json
import math
import os
import re
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ..errors import InvalidParameterError
from ..registry import MetricSpec, lookup_spec
from ..results import SCORED, RunResult
from ._io import load_run
from ._validate import check_int, check_probability, clean
from .intervals import metric_ci

DEFAULT_THRESHOLDS: dict[str, float] = {
    "recall_low": 0.65,
    "faithfulness_high": 0.75,
    "recall_high": 0.80,
    "ndcg_low": 0.50,
    "ndcg_high": 0.70,
    "faithfulness_low": 0.75,
    "faithfulness_very_high": 0.95,
    "relevancy_low": 0.70,
}

#: Names that peers give to metrics ragmeter has under its own name (a saved run may come from
#: RAGAS, TruLens or trec_eval): foreign base name -> ragmeter metric. Only foreign names belong
#: here; everything ragmeter itself registers (names, aliases, ``trec_name``, role, direction) is
#: read from the registry (:func:`ragmeter.registry.lookup_spec`).
FOREIGN_ALIASES: dict[str, str] = {
    "answer_correctness": "correctness",  # RAGAS
    "factual_correctness": "correctness",  # RAGAS
    "answer_relevance": "answer_relevancy",  # TruLens
    "response_relevancy": "answer_relevancy",  # RAGAS >= 0.2
    "average_precision": "map",
    "ap": "map",
    "hit": "hit_rate",
    "hits": "hit_rate",
}
#: Which answer metric the position analysis prefers when a run has several (a reading policy, not
#: a classification: any other registered answer metric that is higher-is-better comes after these).
ANSWER_PREFERENCE = ("faithfulness", "correctness", "answer_grade", "answer_relevancy", "semantic_similarity",
                     "token_f1", "rouge_l", "lexical_faithfulness")


def metric_spec(base: str) -> MetricSpec | None:
    """The registry spec a run's metric base name stands for (ragmeter's names and aliases, trec_eval
    names, then :data:`FOREIGN_ALIASES`), or None when the name is unknown."""
    spec = lookup_spec(base)
    if spec is None and base.lower() in FOREIGN_ALIASES:
        spec = lookup_spec(FOREIGN_ALIASES[base.lower()])
    return spec


@dataclass(frozen=True)
class Condition:
    """``family@cutoff op threshold`` with a role.

    ``primary``: needed for the rule to fire. ``supporting``: used when present; when missing the
    finding still fires with a lower strength. ``exclusion``: when present it must hold (by the
    mean), else the signature belongs to another rule; when missing it is ignored.
    """

    family: str
    cutoff: int | None
    op: str  # "<" or ">="
    threshold: str
    role: str = "primary"

    @property
    def primary(self) -> bool:
        """True for a primary condition."""
        return self.role == "primary"


@dataclass(frozen=True)
class Rule:
    """A metric signature, the stage it points to and the fix to try."""

    key: str
    stage: str
    problem: str
    fix: str
    conditions: tuple[Condition, ...]


RULES: tuple[Rule, ...] = (
    Rule("retriever_misses", "retrieval",
         "the retriever misses the evidence; the generator is faithful to what it gets",
         "hybrid retrieval (BM25 + dense fused with RRF: `ragmeter fuse`), chunk overlap, query expansion",
         (Condition("recall", 5, "<", "recall_low"),
          Condition("faithfulness", None, ">=", "faithfulness_high", "supporting"),
          Condition("recall", 20, "<", "recall_high", "exclusion"))),
    Rule("ranked_too_low", "ranking",
         "relevant chunks are retrieved but ranked too low to reach the top of the context",
         "add a cross-encoder reranker over the top 25, keep the top 5",
         (Condition("recall", 20, ">=", "recall_high"),
          Condition("ndcg", 5, "<", "ndcg_low"))),
    Rule("generator_ignores", "generation (grounding)",
         "good context reaches the generator but the answer is not supported by it",
         "lower the temperature, tighten the grounding instructions, abstain when entailment fails "
         "(`ragmeter calibrate` gives a threshold)",
         (Condition("faithfulness", None, "<", "faithfulness_low"),
          Condition("ndcg", 5, ">=", "ndcg_high", "supporting"))),
    Rule("dodges_question", "generation (relevance)",
         "answers are true to the context but do not answer the question",
         "instruct the generator to answer the question directly; check query rewriting; "
         "penalise generic answers",
         (Condition("answer_relevancy", None, "<", "relevancy_low"),
          Condition("faithfulness", None, ">=", "faithfulness_very_high", "supporting"))),
)

_NAME = re.compile(r"^(?P<base>[A-Za-z_][A-Za-z0-9_]*)(?P<params>\(.*\))?(?:@(?P<k>\d+))?$")


def _parse(name: str) -> tuple[str, bool, int | None] | None:
    m = _NAME.match(name)
    if not m:
        return None
    return m.group("base").lower(), m.group("params") is not None, int(m.group("k")) if m.group("k") else None


def pick_metric(available: list[str], family: str, cutoff: int | None) -> str | None:
    """The run's metric for ``family`` nearest to ``cutoff`` (None: no cutoff preferred).

    A name belongs to the family when it is the family's name or stands for the same registered
    metric (an alias, a trec_eval name, a peer's name in :data:`FOREIGN_ALIASES`); the family's own
    name wins over those, names without parameters win over parameterised ones; among cutoffs the smallest
    :math:`|k - k_{\\text{wanted}}|` wins, ties to the larger k; a name without cutoff (full depth)
    is used only when no cutoff variant exists.
    """
    fam = metric_spec(family)
    cands = []
    for name in available:
        p = _parse(name)
        if p is None:
            continue
        base, has_params, k = p
        spec = metric_spec(base)
        if base != family and (fam is None or spec is None or spec.name != fam.name):
            continue
        dist = (math.inf if cutoff is not None else 0) if k is None else (abs(k - cutoff) if cutoff else 0)
        cands.append((base != family, has_params, dist, -(k or 0), name))
    return min(cands)[-1] if cands else None


@dataclass
class Diagnosis:
    """The result of :func:`diagnose`; ``to_dict()`` is the ``--format json`` output.

    Attributes
    ----------
    findings:
        Run-level findings that fired, strongest first, each with ``stage``, ``problem``, ``fix``,
        ``strength``, ``evidence`` (per condition: metric used, mean, CI, n, threshold, holds,
        confirmed), ``missing_metrics`` and ``substitutions``.
    not_fired:
        The rules that did not fire, with the reason.
    samples:
        Per rule: ``{"count", "share", "ids"}`` of the samples whose own scores match the signature.
    per_sample:
        ``{id: [rule keys]}`` for every sample with a finding.
    position:
        Position analysis (see :func:`position_analysis`) or None.
    metrics_used:
        ``{family: metric name}`` for each family found in the run.
    """

    findings: list[dict[str, Any]]
    not_fired: list[dict[str, Any]]
    samples: dict[str, dict[str, Any]]
    per_sample: dict[str, list[str]]
    position: dict[str, Any] | None
    metrics_used: dict[str, str]
    thresholds: dict[str, float] = field(default_factory=dict)

    def to_dict(self, include_per_sample: bool = False) -> dict[str, Any]:
        """A JSON-safe dict (``per_sample`` only when asked: it can be large)."""
        out = {"findings": self.findings, "not_fired": self.not_fired, "samples": self.samples,
               "position": self.position, "metrics_used": self.metrics_used, "thresholds": self.thresholds}
        if include_per_sample:
            out["per_sample"] = self.per_sample
        return clean(out)

    def to_json(self, include_per_sample: bool = False) -> str:
        """:meth:`to_dict` as indented JSON."""
        return json.dumps(self.to_dict(include_per_sample), indent=2, ensure_ascii=False)

    def to_markdown(self) -> str:
        """A Markdown report."""
        from ._render import diagnosis_markdown

        return diagnosis_markdown(self)

    def to_rich(self) -> Any:
        """A rich renderable."""
        from ._render import diagnosis_rich

        return diagnosis_rich(self)


def _holds(value: float, op: str, thr: float) -> bool:
    return value < thr if op == "<" else value >= thr


def diagnose(
    run: RunResult | str | os.PathLike[str],
    *,
    thresholds: dict[str, float] | None = None,
    cutoffs: dict[str, int] | None = None,
    confidence: float = 0.95,
    max_ids: int = 50,
    seed: int = 0,
) -> Diagnosis:
    """Diagnose a run: which pipeline stage fails, with evidence, per run and per sample.

    See the module docstring for the rules, the strength levels and the nearest-cutoff policy.

    Parameters
    ----------
    run:
        A :class:`~ragmeter.results.RunResult` or an OUTDIR.
    thresholds:
        Overrides of :data:`DEFAULT_THRESHOLDS` (unknown keys are refused).
    cutoffs:
        Overrides of the preferred cutoffs, keyed by the rule for its first condition and
        ``rule.family@i`` for its condition i (0-based): ``retriever_misses`` (5),
        ``retriever_misses.recall@2`` (20), ``ranked_too_low`` (20), ``ranked_too_low.ndcg@1`` (5),
        ``generator_ignores.ndcg@1`` (5). Unknown keys are refused.
    confidence:
        Coverage of the metrics' CIs (:func:`~ragmeter.stats.metric_ci`).
    max_ids:
        At most this many sample ids listed per rule (counts are always complete).
    seed:
        Bootstrap seed.

    Returns
    -------
    Diagnosis
    """
    confidence = check_probability(confidence, "confidence")
    max_ids = check_int(max_ids, "max_ids", minimum=0)
    thr = _check_thresholds(thresholds)
    cut = _check_cutoffs(cutoffs)
    r = load_run(run)
    ci_cache: dict[str, Any] = {}

    def ci(name: str) -> Any:
        if name not in ci_cache:
            ci_cache[name] = metric_ci(r.scores[name][r.status[name] == SCORED], confidence=confidence, seed=seed)
        return ci_cache[name]

    findings, not_fired = [], []
    per_sample: dict[str, list[str]] = {}
    samples: dict[str, dict[str, Any]] = {}
    used: dict[str, str] = {}
    n = len(r.ids)
    for rule in RULES:
        check = _check_rule(rule, r, cut, thr, ci, used)
        ids = _matching_samples(r, check.resolved, thr) if not check.missing_primary and check.resolved else []
        for i in ids:
            per_sample.setdefault(i, []).append(rule.key)
        samples[rule.key] = {"count": len(ids), "share": len(ids) / n if n else None, "ids": ids[:max_ids]}
        base: dict[str, Any] = {"rule": rule.key, "stage": rule.stage, "missing_metrics": check.missing,
                                "substitutions": check.subs}
        evidence = check.evidence
        if check.missing_primary:
            not_fired.append({**base, "reason": f"needs {', '.join(check.missing_primary)}, not in the run"})
            continue
        if not all(e["holds"] for e in evidence):
            failed = [f"{e['metric']} mean {_fmt(e['mean'])} is not {e['condition']}"
                      + (" (the signature of another rule)" if e["role"] == "exclusion" else "")
                      for e in evidence if not e["holds"]]
            not_fired.append({**base, "reason": "; ".join(failed), "evidence": evidence})
            continue
        confirmed = all(e["confirmed"] for e in evidence if e["role"] != "exclusion")
        strength = ("strong" if not check.missing else "moderate") if confirmed else "tentative"
        findings.append({**base, "problem": rule.problem, "fix": rule.fix, "strength": strength,
                         "evidence": evidence, "samples_matching": samples[rule.key]["count"]})
    order = {"strong": 0, "moderate": 1, "tentative": 2}
    findings.sort(key=lambda f: order[f["strength"]])
    position = position_analysis(r, confidence=confidence, seed=seed)
    return Diagnosis(findings, not_fired, samples, per_sample, position, used, thr)


def _check_thresholds(thresholds: dict[str, float] | None) -> dict[str, float]:
    """:data:`DEFAULT_THRESHOLDS` with the validated overrides applied."""
    thr = dict(DEFAULT_THRESHOLDS)
    for k, v in (thresholds or {}).items():
        if k not in thr:
            raise InvalidParameterError(f"thresholds: expected keys among {', '.join(thr)}, got {k!r}")
        if isinstance(v, bool) or not isinstance(v, int | float) or not math.isfinite(v):
            raise InvalidParameterError(f"thresholds[{k!r}]: expected a finite number, got {v!r}")
        thr[k] = float(v)
    return thr


def _check_cutoffs(cutoffs: dict[str, int] | None) -> dict[str, int]:
    """The validated cutoff overrides (keys as :func:`_cut_key` makes them)."""
    cut = dict(cutoffs or {})
    known = {_cut_key(rule, i) for rule in RULES for i, c in enumerate(rule.conditions) if c.cutoff is not None}
    for k, v in cut.items():
        if k not in known:
            raise InvalidParameterError(f"cutoffs: expected keys among {', '.join(sorted(known))}, got {k!r}")
        check_int(v, f"cutoffs[{k!r}]", minimum=1)
    return cut


@dataclass
class _RuleCheck:
    """One rule's conditions resolved against a run: the metric used for each, the evidence, and
    what is missing (every missing primary or supporting metric; the primary ones)."""

    resolved: list[tuple[Condition, str]]
    evidence: list[dict[str, Any]]
    missing: list[str]
    missing_primary: list[str]
    subs: list[str]


def _check_rule(rule: Rule, r: RunResult, cut: dict[str, int], thr: dict[str, float], ci: Any,
                used: dict[str, str]) -> _RuleCheck:
    """Resolve each condition of ``rule`` to the run's nearest metric and test it on the run level
    (records the metric used in ``used``)."""
    evidence, missing, subs = [], [], []
    resolved: list[tuple[Condition, str]] = []
    for c_i, cond in enumerate(rule.conditions):
        want = cut.get(_cut_key(rule, c_i), cond.cutoff)
        name = pick_metric(r.metrics, cond.family, want)
        wanted = f"{cond.family}@{want}" if want is not None else cond.family
        if name is not None and cond.role == "exclusion" and want is not None:
            k = (_parse(name) or ("", False, None))[2]
            if k is not None and k < want:  # a shallower cutoff says nothing about depth `want`
                name = None
        if name is None:
            missing.append(wanted)
            continue
        used[wanted] = name
        if want is not None and name != wanted:
            subs.append(f"{name} used for {wanted} (nearest available cutoff)")
        resolved.append((cond, name))
        iv = ci(name)
        t = thr[cond.threshold]
        holds = iv.estimate is not None and _holds(iv.estimate, cond.op, t)
        confirmed = iv.ci is not None and holds and all(_holds(b, cond.op, t) for b in iv.ci) \
            and iv.method not in ("degenerate", "none")
        evidence.append({"metric": name, "condition": f"{cond.op} {t:g}", "mean": iv.estimate, "ci": iv.ci,
                         "ci_method": iv.method, "n": iv.n, "holds": holds, "confirmed": confirmed,
                         "role": cond.role})
    wanted_all = _wanted(rule, cut)
    missing_primary = [m for m, c in zip(wanted_all, rule.conditions, strict=True) if c.primary and m in missing]
    missing = [m for m, c in zip(wanted_all, rule.conditions, strict=True) if c.role != "exclusion" and m in missing]
    return _RuleCheck(resolved, evidence, missing, missing_primary, subs)


def _matching_samples(r: RunResult, resolved: list[tuple[Condition, str]], thr: dict[str, float]) -> list[str]:
    """The ids of the samples whose own scores match the rule's signature."""
    hits = np.ones(len(r.ids), dtype=bool)
    for cond, name in resolved:
        vals, st = r.scores[name], r.status[name]
        t = thr[cond.threshold]
        ok = (st == SCORED) & (vals < t if cond.op == "<" else vals >= t)
        if cond.primary:
            hits &= ok
        else:  # a supporting or exclusion metric the sample lacks does not veto
            hits &= ok | (st != SCORED)
    return [r.ids[i] for i in np.flatnonzero(hits)]


def _cut_key(rule: Rule, c_i: int) -> str:
    """The ``cutoffs`` key of a rule's condition: the rule for the first, ``rule.family@i`` after."""
    return rule.key if c_i == 0 else f"{rule.key}.{rule.conditions[c_i].family}@{c_i}"


def _wanted(rule: Rule, cut: dict[str, int]) -> list[str]:
    out = []
    for c_i, cond in enumerate(rule.conditions):
        want = cut.get(_cut_key(rule, c_i), cond.cutoff)
        out.append(f"{cond.family}@{want}" if want is not None else cond.family)
    return out


def _fmt(v: float | None) -> str:
    return "n/a" if v is None else f"{v:.3f}"


BUCKETS: tuple[tuple[str, int, int], ...] = (
    ("1", 1, 1), ("2", 2, 2), ("3", 3, 3), ("4-5", 4, 5), ("6-10", 6, 10), ("11-20", 11, 20), (">20", 21, 10**9),
)


def _answer_metric(metrics: list[str]) -> str | None:
    """The run's answer metric: a metric whose registered role is ``"answer"`` and that is
    higher-is-better, preferring :data:`ANSWER_PREFERENCE`'s order; else a metric ragmeter does not
    know at all (no role to go by). A retrieval or context metric is never the answer metric."""
    known: list[tuple[int, str]] = []
    unknown: list[str] = []
    for m in metrics:
        p = _parse(m)
        if p is None:
            continue
        spec = metric_spec(p[0])
        if spec is None:
            unknown.append(m)
        elif spec.role == "answer" and spec.higher_is_better:
            rank = ANSWER_PREFERENCE.index(spec.name) if spec.name in ANSWER_PREFERENCE else len(ANSWER_PREFERENCE)
            known.append((rank, m))
    if known:
        return min(known, key=lambda t: t[0])[1]
    return unknown[0] if unknown else None


def position_analysis(
    run: RunResult | str | os.PathLike[str],
    *,
    metric: str | None = None,
    confidence: float = 0.95,
    seed: int = 0,
) -> dict[str, Any] | None:
    """The answer metric grouped by the rank of the first relevant retrieved chunk.

    The answer metric (when ``metric`` is None) is a registered ``role="answer"``, higher-is-better
    metric of the run (first in :data:`ANSWER_PREFERENCE` order), else a metric ragmeter does not
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

    Returns None when the run has no answer metric (``metric`` None and none found) or no
    per-sample records; ``{"metric", "note"}`` when no sample has relevant ranks.
    """
    confidence = check_probability(confidence, "confidence")
    r = load_run(run)
    if metric is None:
        metric = _answer_metric(r.metrics)
        if metric is None:
            return None
    elif metric not in r.scores:
        raise InvalidParameterError(f"metric: expected one of {', '.join(r.metrics)}, got {metric!r}")
    if r.records is None:
        return None
    first: list[float] = []
    for rec in r.records:
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
    rank_arr = np.asarray(first)
    vals = r.scores[metric]
    scored = r.status[metric] == SCORED
    if np.isnan(rank_arr).all():
        return {"metric": metric, "note": "no retrieval metric with details.relevant_ranks in results.jsonl"}
    buckets = []
    for label, lo, hi in (*BUCKETS, ("none", -1, -1)):
        sel = scored & (np.isinf(rank_arr) if label == "none" else (rank_arr >= lo) & (rank_arr <= hi))
        iv = metric_ci(vals[sel], confidence=confidence, seed=seed)
        buckets.append({"bucket": label, "n": int(sel.sum()), "mean": iv.estimate, "ci": iv.ci, "ci_method": iv.method})
    ranked = scored & np.isfinite(rank_arr)
    rho = p = None
    if ranked.sum() >= 3 and np.ptp(rank_arr[ranked]) > 0 and np.ptp(vals[ranked]) > 0:
        from scipy import stats

        res = stats.spearmanr(rank_arr[ranked], vals[ranked])
        rho, p = float(res.statistic), float(res.pvalue)
    nonempty = [b for b in buckets[:-1] if b["n"] > 0]
    lim = False
    if len(nonempty) >= 3 and nonempty[0]["bucket"] == "1" and nonempty[0]["ci"]:
        top, last = nonempty[0], nonempty[-1]
        lim = any(b["ci"] and b["ci"][1] < top["ci"][0] and b["mean"] < last["mean"] for b in nonempty[1:-1])
    return {"metric": metric, "buckets": buckets, "spearman_rho": rho, "spearman_p": p,
            "position_effect": bool(rho is not None and p is not None and rho < 0 and p < 0.05),
            "lost_in_the_middle": bool(lim), "n_with_rank": int(ranked.sum()),
            "n_without_relevant": int((scored & np.isinf(rank_arr)).sum())}
