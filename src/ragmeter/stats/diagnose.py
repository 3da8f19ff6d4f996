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

When no rule fires, a metric can still be *low*, always relative to something (:func:`clearly_low`):
its whole 95% CI lies on the failing side of its gate threshold when one is set (``gate``), else
of the reference level its registry spec states (``MetricSpec.reference_level``: set only where
an absolute level means something, such as recall or faithfulness; never for lexical overlap,
whose level depends on how long the references are); or, with a ``baseline`` run, it is
significantly worse than the baseline (paired test, Holm-adjusted). Those metrics are listed in
``low_metrics`` as tentative findings: a stage to look at, with no signature that says why.

The diagnosis also carries the position analysis (:func:`.position.position_analysis`): the
answer metric as a function of the rank of the first relevant chunk, to show lost-in-the-middle
effects.
"""

from __future__ import annotations

import json
import math
import os
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from .._validate import check_int, check_probability, clean
from ..errors import InvalidParameterError, RagmeterError
from ..intervals import metric_ci
from ..registry import canonical_name
from ..results import SCORED, RunResult
from ..run_names import metric_spec, parse_name
from ._io import load_run
from ._render import TENTATIVE_LEAD as TENTATIVE_LEAD  # the tentative findings' wording, for the report
from ._render import diagnosis_headline, diagnosis_markdown, diagnosis_rich, no_finding_sentence, score3
from ._render import tentative_sentence as tentative_sentence
from .compare import compare
from .position import position_analysis

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

__all__ = ["DEFAULT_THRESHOLDS", "RULES", "TENTATIVE_LEAD", "Diagnosis", "clearly_low", "diagnose",
           "diagnosis_headline", "no_finding_sentence", "pick_metric", "tentative_sentence"]

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

def pick_metric(available: list[str], family: str, cutoff: int | None) -> str | None:
    """The run's metric for ``family`` nearest to ``cutoff`` (None: no cutoff preferred).

    A name belongs to the family when it is the family's name or stands for the same registered
    metric (an alias, a trec_eval name, a peer's name in :data:`._names.FOREIGN_ALIASES`); the family's own
    name wins over those, names without parameters win over parameterised ones; among cutoffs the smallest
    :math:`|k - k_{\\text{wanted}}|` wins, ties to the larger k; a name without cutoff (full depth)
    is used only when no cutoff variant exists.
    """
    fam = metric_spec(family)
    cands = []
    for name in available:
        p = parse_name(name)
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
    low_metrics:
        The run's low metrics (:func:`clearly_low`; with a baseline, its significant regressions
        first), lowest first: tentative findings.
    baseline:
        The baseline run's label when the diagnosis compared against one, else None.
    """

    findings: list[dict[str, Any]]
    not_fired: list[dict[str, Any]]
    samples: dict[str, dict[str, Any]]
    per_sample: dict[str, list[str]]
    position: dict[str, Any] | None
    metrics_used: dict[str, str]
    thresholds: dict[str, float] = field(default_factory=dict)
    low_metrics: list[dict[str, Any]] = field(default_factory=list)
    baseline: str | None = None

    def to_dict(self, include_per_sample: bool = False) -> dict[str, Any]:
        """A JSON-safe dict (``per_sample`` only when asked: it can be large)."""
        out = {"findings": self.findings, "not_fired": self.not_fired, "samples": self.samples,
               "position": self.position, "metrics_used": self.metrics_used, "thresholds": self.thresholds,
               "low_metrics": self.low_metrics, "baseline": self.baseline}
        if include_per_sample:
            out["per_sample"] = self.per_sample
        return clean(out)

    def to_json(self, include_per_sample: bool = False) -> str:
        """:meth:`to_dict` as indented JSON."""
        return json.dumps(self.to_dict(include_per_sample), indent=2, ensure_ascii=False)

    def to_markdown(self) -> str:
        """A Markdown report."""
        return diagnosis_markdown(self)

    def to_rich(self) -> Any:
        """A rich renderable."""
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
    gate: dict[str, float] | None = None,
    first_ranks: np.ndarray | None = None,
    baseline: RunResult | str | os.PathLike[str] | None = None,
    alpha: float = 0.05,
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
    gate:
        ``{metric: threshold}`` of the run's quality gate, if any: a metric whose CI lies on the
        failing side of its threshold is low (:func:`clearly_low`).
    baseline:
        A run (or OUTDIR) to compare against (:func:`~ragmeter.stats.compare`, paired by sample id):
        a metric significantly worse than in the baseline (Holm-adjusted p < ``alpha``) is low.
    first_ranks:
        Per sample, the rank of the first relevant chunk (inf: none retrieved, NaN: unknown), for
        a ``run`` loaded without its records (see :func:`position_analysis`).

    Returns
    -------
    Diagnosis
    """
    confidence = check_probability(confidence, "confidence")
    alpha = check_probability(alpha, "alpha")
    max_ids = check_int(max_ids, "max_ids", minimum=0)
    thr = _check_thresholds(thresholds)
    cut = _check_cutoffs(cutoffs)
    r = load_run(run)
    ci = _ci_lookup(r, confidence, seed)
    findings: list[dict[str, Any]] = []
    not_fired: list[dict[str, Any]] = []
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
        fired, entry = _rule_verdict(rule, check, samples[rule.key]["count"])
        (findings if fired else not_fired).append(entry)
    order = {"strong": 0, "moderate": 1, "tentative": 2}
    findings.sort(key=lambda f: order[f["strength"]])
    position = position_analysis(r, confidence=confidence, seed=seed, first_ranks=first_ranks)
    low = clearly_low(r, ci, gate=gate)
    label = None
    if baseline is not None:
        label = "baseline" if isinstance(baseline, RunResult) else str(baseline)
        worse = regressions(compare(load_run(baseline, "baseline"), r, confidence=confidence, alpha=alpha,
                                    seed=seed).to_dict())
        low = worse + [e for e in low if e["metric"] not in {w["metric"] for w in worse}]
    return Diagnosis(findings, not_fired, samples, per_sample, position, used, thr, low, label)


def _ci_lookup(r: RunResult, confidence: float, seed: int) -> Any:
    """A memoised ``ci(name)``: the :func:`~ragmeter.stats.metric_ci` of metric ``name``'s scored samples."""
    ci_cache: dict[str, Any] = {}

    def ci(name: str) -> Any:
        if name not in ci_cache:
            ci_cache[name] = metric_ci(r.scores[name][r.status[name] == SCORED], confidence=confidence, seed=seed)
        return ci_cache[name]

    return ci


def _rule_verdict(rule: Rule, check: _RuleCheck, samples_matching: int) -> tuple[bool, dict[str, Any]]:
    """Whether ``rule`` fired, and its entry: a finding (with its strength) or, when it did not
    fire, the reason (a primary metric missing, or the conditions that do not hold)."""
    base: dict[str, Any] = {"rule": rule.key, "stage": rule.stage, "missing_metrics": check.missing,
                            "substitutions": check.subs}
    evidence = check.evidence
    if check.missing_primary:
        return False, {**base, "reason": f"needs {', '.join(check.missing_primary)}, not in the run"}
    if not all(e["holds"] for e in evidence):
        failed = [f"{e['metric']} mean {score3(e['mean'])} is not {e['condition']}"
                  + (" (the signature of another rule)" if e["role"] == "exclusion" else "")
                  for e in evidence if not e["holds"]]
        return False, {**base, "reason": "; ".join(failed), "evidence": evidence}
    confirmed = all(e["confirmed"] for e in evidence if e["role"] != "exclusion")
    strength = ("strong" if not check.missing else "moderate") if confirmed else "tentative"
    return True, {**base, "problem": rule.problem, "fix": rule.fix, "strength": strength,
                  "evidence": evidence, "samples_matching": samples_matching}


def clearly_low(r: RunResult, ci: Any, *, gate: dict[str, float] | None = None) -> list[dict[str, Any]]:
    """The run's low metrics, lowest first (by the CI's far end's distance from the threshold).

    A metric is low when its whole CI (``ci(name)``: an Interval; a degenerate or missing CI never
    counts) is on the failing side of its threshold: the gate's when ``gate`` has one for it (names
    compared as written and canonicalised), else the ``reference_level`` of its registry spec
    (below it for a higher-is-better metric, above it for a lower-is-better one). A metric with
    neither (lexical overlap, precision@k, an unknown metric) is never low on its own level.
    Each entry: ``metric``, ``stage`` (the registry role or None), ``mean``, ``ci``, ``n``,
    ``threshold``, ``basis`` (``"gate"`` or ``"reference level"``) and ``higher_is_better``.
    """
    gate_of = _gate_lookup(gate or {})
    out = []
    for name in r.metrics:
        p = parse_name(name)
        spec = metric_spec(p[0]) if p else None
        up = True if spec is None else bool(spec.higher_is_better)
        t, basis = gate_of(name), "gate"
        if t is None:
            t, basis = (spec.reference_level if spec is not None else None), "reference level"
        iv = ci(name)
        if t is None or iv.ci is None or iv.estimate is None or iv.method in ("degenerate", "none"):
            continue
        lo, hi = iv.ci
        if (hi < t) if up else (lo > t):
            out.append({"metric": name, "stage": spec.role if spec else None, "mean": iv.estimate, "ci": iv.ci,
                        "n": iv.n, "threshold": t, "basis": basis, "higher_is_better": up,
                        "margin": (t - hi) if up else (lo - t)})
    out.sort(key=lambda e: -e["margin"])
    for e in out:
        del e["margin"]
    return out


def regressions(comparison: dict[str, Any]) -> list[dict[str, Any]]:
    """The metrics of ``comparison`` (:meth:`~ragmeter.stats.Comparison.to_dict`, baseline A, run B)
    that are significantly worse in the run, largest drop first, as :func:`clearly_low` entries with
    ``basis="baseline"`` and ``baseline_mean``, ``diff`` (run - baseline), ``diff_ci`` and ``p_adjusted``."""
    out = []
    for row in comparison["metrics"]:
        up = row.get("higher_is_better")
        diff = row.get("diff")
        if not row.get("significant") or diff is None or up is None or (diff > 0) == up:
            continue
        spec = metric_spec((parse_name(row["metric"]) or (row["metric"], False, None))[0])
        out.append({"metric": row["metric"], "stage": spec.role if spec else None, "mean": row["mean_b"],
                    "ci": None, "n": row["n_pairs"], "threshold": None, "basis": "baseline",
                    "higher_is_better": up, "baseline_mean": row["mean_a"], "diff": diff,
                    "diff_ci": row["ci"], "p_adjusted": row["p_adjusted"]})
    out.sort(key=lambda e: -abs(e["diff"]))
    return out


def _gate_lookup(gate: dict[str, float]) -> Any:
    """``name -> threshold or None`` matching gate names as written or canonicalised."""

    def canon(n: str) -> str:
        try:
            return canonical_name(n)
        except RagmeterError:  # an unknown or foreign name: compare as written
            return n

    table = {canon(k): float(v) for k, v in gate.items()}
    return lambda name: table.get(name, table.get(canon(name)))


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
            k = (parse_name(name) or ("", False, None))[2]
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
