"""Compare two runs sample by sample: paired differences, CIs, tests, Holm correction, effect sizes.

:func:`compare` matches the samples of run A and run B by id and, for each metric the two runs
share, takes the samples scored in both, :math:`d_i = b_i - a_i`, and reports the mean difference
(B - A) with a paired bootstrap CI, a paired test (sign-flip permutation by default; McNemar for
0/1 metrics; the t-test on request), Holm-adjusted p-values across metrics and an effect size.
Nothing is dropped silently: ids present in only one run and samples scored in only one run are
counted and listed.

Each metric's row, on the n samples scored in both runs:

* ``diff`` :math:`= \\bar d = \\bar b - \\bar a` (B - A) and its paired bootstrap CI
  (resampling samples, i.e. pairs, see :func:`~ragmeter.stats.bootstrap_ci`);
* ``p_value`` of a two-sided paired test: ``"auto"`` uses McNemar
  (:func:`~ragmeter.stats.mcnemar_test`) when both runs' scores are all 0/1, else the
  sign-flip permutation test (:func:`~ragmeter.stats.paired_permutation_test`, exact for
  <= 16 non-zero differences, seeded Monte Carlo otherwise) up to ``permutation_max_n``
  pairs, and the paired t-test above (there the t-test is as accurate, by the CLT, while a
  randomisation test would cost n x ``n_resamples`` random signs; the row's ``note`` says
  so); ``"t-test"`` forces :func:`~ragmeter.stats.paired_ttest`, ``"permutation"`` the
  permutation test whatever n;
* ``p_adjusted``: Holm's step-down adjustment across the compared metrics
  (``correction="none"`` copies the raw p-values);
* ``significant``: ``p_adjusted < alpha``; ``verdict``: which run is better (using the
  metric's ``higher_is_better``), or "no significant difference";
* ``effect``: Cohen's :math:`d_z = \\bar d / s_d`, and for McNemar the discordant counts and
  the odds ratio :math:`n_{01} / n_{10}`.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from .._validate import check_choice, check_int, check_probability, check_seed, clean
from ..errors import InvalidParameterError
from ..intervals import N_RESAMPLES, bootstrap_ci, is_binary
from ..results import SCORED, RunResult
from ..run_names import direction
from ._io import check_unique_ids, load_run
from ._render import comparison_markdown, comparison_table, multi_latex, multi_markdown, multi_table
from .paired import cohens_dz, holm, mcnemar_test, paired_permutation_test, paired_ttest

TESTS = ("auto", "permutation", "t-test", "mcnemar")
#: Above this many pairs ``test="auto"`` uses the paired t-test instead of the permutation test.
PERMUTATION_MAX_N = 20_000


@dataclass
class Comparison:
    """The result of :func:`compare`; ``to_dict()`` is the ``--format json`` output.

    Attributes
    ----------
    a, b:
        Labels of the two runs.
    samples:
        ``{"a": n, "b": n, "matched": n, "only_in_a": {"count", "ids"}, "only_in_b": {...}}``.
    metrics:
        One dict per common metric (see :func:`compare`).
    metrics_only_in_a, metrics_only_in_b:
        Metrics that only one run has (not compared).
    settings:
        The test, confidence, resamples, seed and correction used.
    """

    a: str
    b: str
    samples: dict[str, Any]
    metrics: list[dict[str, Any]]
    metrics_only_in_a: list[str]
    metrics_only_in_b: list[str]
    settings: dict[str, Any] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        """A JSON-safe dict (NaN and infinities become null)."""
        return clean({"a": self.a, "b": self.b, "samples": self.samples, "metrics": self.metrics,
                      "metrics_only_in_a": self.metrics_only_in_a, "metrics_only_in_b": self.metrics_only_in_b,
                      "settings": self.settings})

    def to_json(self) -> str:
        """:meth:`to_dict` as indented JSON."""
        return json.dumps(self.to_dict(), indent=2, ensure_ascii=False)

    def to_markdown(self, max_ids: int = 10) -> str:
        """A Markdown report for a pull-request comment."""
        return comparison_markdown(self, max_ids=max_ids)

    def to_rich(self) -> Any:
        """A :class:`rich.table.Table` of the comparison."""
        return comparison_table(self)


def _ids_block(ids: list[str]) -> dict[str, Any]:
    return {"count": len(ids), "ids": ids}


def compare(
    run_a: RunResult | str | os.PathLike[str],
    run_b: RunResult | str | os.PathLike[str],
    *,
    metrics: list[str] | None = None,
    test: str = "auto",
    confidence: float = 0.95,
    alpha: float = 0.05,
    correction: str = "holm",
    ci_method: str = "bca",
    n_resamples: int = 10_000,
    n_bootstrap: int = N_RESAMPLES,
    seed: int = 0,
    labels: tuple[str, str] | None = None,
    permutation_max_n: int = PERMUTATION_MAX_N,
) -> Comparison:
    """Compare run B against run A, metric by metric, on the samples they share.

    For each metric common to both runs (or each of ``metrics``), on the n samples scored in
    both, with :math:`d_i = b_i - a_i`: the mean difference and its CI, a paired test, the
    Holm-adjusted p-value, the verdict and the effect size (each defined in the module docstring).
    Samples scored in only one run, or in neither, are counted and listed per metric; ids in
    only one run are listed in ``samples``.

    Parameters
    ----------
    run_a, run_b:
        :class:`~ragmeter.results.RunResult` objects or OUTDIR paths. Sample ids must be unique.
    metrics:
        Metric names to compare (default: every metric both runs have).
    test:
        ``"auto"``, ``"permutation"``, ``"t-test"`` or ``"mcnemar"`` (McNemar where the scores
        are 0/1, the permutation test elsewhere; the metric's ``test`` field says which ran).
    confidence:
        CI coverage. ``alpha``: significance level for ``significant``.
    correction:
        ``"holm"`` or ``"none"``.
    ci_method:
        ``"bca"`` or ``"percentile"``.
    n_resamples, n_bootstrap, seed:
        Permutation resamples, bootstrap resamples and the seed: a fixed seed makes every CI
        and p-value reproducible.
    labels:
        Names for A and B in reports (default: the paths, or "A"/"B").
    permutation_max_n:
        Largest number of pairs for which ``test="auto"`` runs the permutation test.

    Returns
    -------
    Comparison
    """
    opts = _check_settings(test=test, confidence=confidence, alpha=alpha, correction=correction,
                           ci_method=ci_method, n_resamples=n_resamples, n_bootstrap=n_bootstrap, seed=seed,
                           permutation_max_n=permutation_max_n)
    if labels is None:
        labels = (str(run_a) if not isinstance(run_a, RunResult) else "A",
                  str(run_b) if not isinstance(run_b, RunResult) else "B")
    ra, rb = load_run(run_a, "run_a"), load_run(run_b, "run_b")
    check_unique_ids(ra, "run A")
    check_unique_ids(rb, "run B")
    pairs, samples = _pair_samples(ra, rb)
    chosen = _chosen_metrics([m for m in ra.metrics if m in rb.scores], metrics, "both runs have")
    rows = [_compare_metric(m, ra, rb, pairs, opts) for m in chosen]
    raw = [r["p_value"] for r in rows]
    adjusted = holm(raw) if opts["correction"] == "holm" else raw
    for r, p in zip(rows, adjusted, strict=True):
        _set_adjusted(r, p, opts["alpha"], labels)
    return Comparison(labels[0], labels[1], samples, rows,
                      [m for m in ra.metrics if m not in rb.scores], [m for m in rb.metrics if m not in ra.scores],
                      opts)


def _check_settings(**opts: Any) -> dict[str, Any]:
    """The validated settings of :func:`compare` (also reported in ``Comparison.settings``)."""
    return {"test": check_choice(opts["test"], "test", TESTS),
            "confidence": check_probability(opts["confidence"], "confidence"),
            "alpha": check_probability(opts["alpha"], "alpha"),
            "correction": check_choice(opts["correction"], "correction", ("holm", "none")),
            "ci_method": check_choice(opts["ci_method"], "ci_method", ("bca", "percentile")),
            "n_resamples": check_int(opts["n_resamples"], "n_resamples", minimum=1),
            "n_bootstrap": check_int(opts["n_bootstrap"], "n_bootstrap", minimum=1),
            "seed": check_seed(opts["seed"]),
            "permutation_max_n": check_int(opts["permutation_max_n"], "permutation_max_n", minimum=0)}


@dataclass(frozen=True)
class _Pairs:
    """The samples of run A and run B matched by id: their positions in each run, and their ids."""

    ia: np.ndarray
    ib: np.ndarray
    ids: np.ndarray


def _pair_samples(ra: RunResult, rb: RunResult) -> tuple[_Pairs, dict[str, Any]]:
    """Match the two runs' samples by id; also the ``samples`` block (counts, ids in one run only)."""
    pos_a = {i: k for k, i in enumerate(ra.ids)}
    pos_b = {i: k for k, i in enumerate(rb.ids)}
    matched = [i for i in ra.ids if i in pos_b]
    pairs = _Pairs(np.array([pos_a[i] for i in matched], dtype=np.int64),
                   np.array([pos_b[i] for i in matched], dtype=np.int64),
                   np.array(matched, dtype=object))
    samples = {
        "a": len(ra.ids), "b": len(rb.ids), "matched": len(matched),
        "only_in_a": _ids_block([i for i in ra.ids if i not in pos_b]),
        "only_in_b": _ids_block([i for i in rb.ids if i not in pos_a]),
    }
    return pairs, samples


def paired_scores(run_a: RunResult | str | os.PathLike[str], run_b: RunResult | str | os.PathLike[str],
                  metrics: list[str]) -> dict[str, tuple[list[str], np.ndarray, np.ndarray]]:
    """Per metric, the samples both runs scored, matched by id: ``{metric: (ids, scores in A, scores in B)}``.

    These are the pairs :func:`compare` tests (in run A's order). Sample ids must be unique.
    """
    ra, rb = load_run(run_a, "run_a"), load_run(run_b, "run_b")
    check_unique_ids(ra, "run A")
    check_unique_ids(rb, "run B")
    missing = [m for m in metrics if m not in ra.scores or m not in rb.scores]
    if missing:
        raise InvalidParameterError(f"metrics: expected metrics both runs have, got {', '.join(missing)}")
    pairs, _ = _pair_samples(ra, rb)
    out = {}
    for m in metrics:
        both = (ra.status[m][pairs.ia] == SCORED) & (rb.status[m][pairs.ib] == SCORED)
        out[m] = (pairs.ids[both].tolist(), ra.scores[m][pairs.ia][both].astype(np.float64),
                  rb.scores[m][pairs.ib][both].astype(np.float64))
    return out


def _chosen_metrics(common: list[str], metrics: list[str] | None, having: str) -> list[str]:
    """``metrics`` checked against ``common``, the metrics the runs share (default: all of those);
    ``having`` names them in the error (``"both runs have"``, ``"every run has"``)."""
    if metrics is None:
        return common
    if isinstance(metrics, str) or not all(isinstance(m, str) for m in metrics):
        raise InvalidParameterError(f"metrics: expected a list of metric names, got {metrics!r}")
    missing = [m for m in metrics if m not in common]
    if missing:
        raise InvalidParameterError(f"metrics: expected metrics {having} ({', '.join(common) or 'none'}), "
                                    f"got {', '.join(missing)}")
    return list(metrics)


def _compare_metric(m: str, ra: RunResult, rb: RunResult, pairs: _Pairs, opts: dict[str, Any]) -> dict[str, Any]:
    """One metric's row before the multiple-testing adjustment (see the module docstring)."""
    sa = ra.status[m][pairs.ia] == SCORED
    sb = rb.status[m][pairs.ib] == SCORED
    both = sa & sb
    xa, xb = ra.scores[m][pairs.ia][both], rb.scores[m][pairs.ib][both]
    row: dict[str, Any] = {
        "metric": m, "n_pairs": int(both.sum()),
        "mean_a": float(xa.mean()) if xa.size else None,
        "mean_b": float(xb.mean()) if xb.size else None,
        "higher_is_better": direction(m),
        "scored_only_in_a": _ids_block(pairs.ids[sa & ~sb].tolist()),
        "scored_only_in_b": _ids_block(pairs.ids[sb & ~sa].tolist()),
        "scored_in_neither": int((~sa & ~sb).sum()),
    }
    iv = bootstrap_ci(xb - xa, confidence=opts["confidence"], method=opts["ci_method"],
                      n_resamples=opts["n_bootstrap"], seed=opts["seed"])
    row.update(diff=iv.estimate, ci=iv.ci, ci_method=iv.method)
    res, note = _paired_test(xa, xb, opts)
    row.update(test=res.method, statistic=res.statistic, p_value=res.p_value)
    effect: dict[str, Any] = {"cohens_dz": cohens_dz(xa, xb)}
    if res.method.startswith("mcnemar"):
        effect.update(res.extra)
    row["effect"] = effect
    if note:
        row["note"] = note
    return row


def _paired_test(xa: np.ndarray, xb: np.ndarray, opts: dict[str, Any]) -> tuple[Any, str | None]:
    """The paired test the settings choose for these pairs, and a note when the choice needs one."""
    test, max_n = opts["test"], opts["permutation_max_n"]
    binary = is_binary(xa) and is_binary(xb)
    if test == "t-test":
        return paired_ttest(xa, xb), None
    if test == "auto" and not binary and xa.size > max_n:
        return paired_ttest(xa, xb), (f"{xa.size} pairs > permutation_max_n = {max_n}: paired t-test used "
                                      "(the CLT makes it accurate at this size)")
    if test in ("auto", "mcnemar") and binary:
        return mcnemar_test(xa, xb), None
    note = "scores are not all 0/1: McNemar does not apply, the permutation test was used" \
        if test == "mcnemar" else None
    return paired_permutation_test(xa, xb, n_resamples=opts["n_resamples"], seed=opts["seed"]), note


def _set_adjusted(row: dict[str, Any], p: float | None, alpha: float, labels: tuple[str, str]) -> None:
    """Complete a metric's row with its adjusted p-value, whether it is significant, and the verdict."""
    row["p_adjusted"] = p
    row["significant"] = p is not None and p < alpha
    row["verdict"] = _verdict(row, labels)


def _verdict(row: dict[str, Any], labels: tuple[str, str]) -> str:
    if row["p_adjusted"] is None:
        return "not testable (fewer than 2 paired scores)" if row["n_pairs"] < 2 else "not testable"
    if not row["significant"] or not row["diff"]:
        return "no significant difference"
    up = row["diff"] > 0
    hib = row["higher_is_better"]
    if hib is None:
        return f"B higher ({labels[1]})" if up else f"A higher ({labels[0]})"
    return "B better" if up == hib else "A better"


@dataclass
class MultiComparison:
    """The result of :func:`compare_many`: N runs against the first, ranx-style.

    Attributes
    ----------
    labels:
        One label per run; ``labels[0]`` is the baseline every other run is tested against.
    metrics:
        The metrics compared (those every run has, or the ones asked for).
    cells:
        ``cells[k][metric]``: run k's ``mean`` and ``n`` over its own scored samples and, for
        k >= 1, the paired comparison against run 0: ``diff``, ``ci``, ``test``, ``p_value``,
        ``p_adjusted`` (Holm over every comparison of the table), ``significant`` and ``mark``
        (``"better"``, ``"worse"``, ``"higher"``, ``"lower"`` or None; see :data:`MARKS`).
    comparisons:
        The N - 1 pairwise :class:`Comparison` objects (run 0 vs run k), their p-values adjusted
        over the whole table; with N = 2 this is exactly ``compare(run_0, run_1)``.
    settings:
        As :attr:`Comparison.settings`, plus ``n_comparisons`` (the size of the Holm family).
    """

    labels: list[str]
    metrics: list[str]
    cells: list[dict[str, dict[str, Any]]]
    comparisons: list[Comparison]
    settings: dict[str, Any] = field(default_factory=dict)

    def tests_used(self) -> dict[str, list[str]]:
        """``{metric: [test, ...]}``: the paired test(s) each metric's comparisons used."""
        out: dict[str, list[str]] = {m: [] for m in self.metrics}
        for c in self.comparisons:
            for r in c.metrics:
                if r["test"] not in out[r["metric"]]:
                    out[r["metric"]].append(r["test"])
        return out

    def best(self, metric: str) -> int | None:
        """The index of the run with the best mean on ``metric`` (highest, or lowest for a
        lower-is-better metric); None when no run has a mean or several tie for best."""
        winners = self.leaders(metric)
        return winners[0] if len(winners) == 1 else None

    def leaders(self, metric: str) -> list[int]:
        """The indices of the runs with the best mean on ``metric`` (several when they tie; none
        when no run has a mean), in run order."""
        means = [(k, c[metric]["mean"]) for k, c in enumerate(self.cells) if c[metric]["mean"] is not None]
        if not means:
            return []
        sign = -1.0 if direction(metric) is False else 1.0
        top = max(sign * v for _, v in means)
        return [k for k, v in means if sign * v == top]

    def higher_is_better(self, metric: str) -> bool:
        """False for a lower-is-better metric (from the registry), True otherwise."""
        return direction(metric) is not False

    def to_dict(self) -> dict[str, Any]:
        """A JSON-safe dict: the table, the pairwise comparisons and the settings."""
        return clean({"runs": self.labels, "baseline": self.labels[0], "metrics": self.metrics,
                      "table": [{"run": label, "metrics": cells} for label, cells in zip(self.labels, self.cells,
                                                                                        strict=True)],
                      "tests": self.tests_used(), "comparisons": [c.to_dict() for c in self.comparisons],
                      "settings": self.settings})

    def to_json(self) -> str:
        """:meth:`to_dict` as indented JSON."""
        return json.dumps(self.to_dict(), indent=2, ensure_ascii=False)

    def to_markdown(self) -> str:
        """The table as GitHub-flavoured Markdown, with the legend and the tests used."""
        return multi_markdown(self)

    def to_latex(self) -> str:
        """The table as a LaTeX ``table`` + ``tabular`` (no package needed), legend in the caption."""
        return multi_latex(self)

    def to_rich(self) -> Any:
        """A :class:`rich.table.Table` of the N-run table."""
        return multi_table(self)


def compare_many(
    runs: list[RunResult | str | os.PathLike[str]],
    *,
    metrics: list[str] | None = None,
    test: str = "auto",
    confidence: float = 0.95,
    alpha: float = 0.05,
    correction: str = "holm",
    ci_method: str = "bca",
    n_resamples: int = 10_000,
    n_bootstrap: int = N_RESAMPLES,
    seed: int = 0,
    labels: list[str] | None = None,
    permutation_max_n: int = PERMUTATION_MAX_N,
) -> MultiComparison:
    """Compare every run against the first one (ranx-style table: a row per run, a column per metric).

    Each run k >= 1 is compared with run 0 by :func:`compare` (same pairing by id, CIs and tests).
    The family of the multiple-testing correction is the whole table: the (N - 1) x M p-values of
    the N - 1 comparisons and M metrics are Holm-adjusted together (with N = 2 that is exactly
    :func:`compare`'s correction across metrics). A cell is marked (:data:`MARKS`) when its
    adjusted p-value is below ``alpha``. Each run's ``mean`` is over its own scored samples; the
    paired numbers (``diff``, ``ci``, ``p_value``) are over the samples scored in both runs.

    Parameters
    ----------
    runs:
        Two or more :class:`~ragmeter.results.RunResult` objects or OUTDIR paths; the first is the
        baseline.
    metrics:
        Metrics to compare (default: every metric all the runs have).
    labels:
        One name per run (default: the paths, or "run 1", "run 2", ...).
    test, confidence, alpha, correction, ci_method, n_resamples, n_bootstrap, seed, permutation_max_n:
        As in :func:`compare`.

    Returns
    -------
    MultiComparison
    """
    if isinstance(runs, str | os.PathLike | RunResult) or len(runs) < 2:
        raise InvalidParameterError(f"runs: expected a list of at least two runs, got {runs!r}")
    if labels is None:
        labels = [str(r) if not isinstance(r, RunResult) else f"run {k + 1}" for k, r in enumerate(runs)]
    if len(labels) != len(runs):
        raise InvalidParameterError(f"labels: expected one label per run ({len(runs)}), got {len(labels)}")
    loaded = [load_run(r, f"runs[{k}]") for k, r in enumerate(runs)]
    common = [m for m in loaded[0].metrics if all(m in r.scores for r in loaded[1:])]
    chosen = _chosen_metrics(common, metrics, "every run has")
    kw: dict[str, Any] = {"test": test, "confidence": confidence, "alpha": alpha, "ci_method": ci_method,
                          "n_resamples": n_resamples, "n_bootstrap": n_bootstrap, "seed": seed,
                          "permutation_max_n": permutation_max_n}
    check_choice(correction, "correction", ("holm", "none"))
    pairwise = [compare(loaded[0], r, metrics=chosen, correction="none", labels=(labels[0], labels[k]), **kw)
                for k, r in enumerate(loaded[1:], start=1)]
    rows = [row for c in pairwise for row in c.metrics]
    raw = [r["p_value"] for r in rows]
    adjusted = holm(raw) if correction == "holm" else raw
    adjusted_iter = iter(adjusted)
    for c in pairwise:
        c.settings["correction"] = correction
        for r in c.metrics:
            _set_adjusted(r, next(adjusted_iter), c.settings["alpha"], (c.a, c.b))
    settings = dict(pairwise[0].settings, n_comparisons=sum(p is not None for p in raw))
    cells = [_own_means(loaded[0], chosen)]
    for k, c in enumerate(pairwise, start=1):
        cells.append(_own_means(loaded[k], chosen))
        for r in c.metrics:
            cells[k][r["metric"]].update(
                diff=r["diff"], ci=r["ci"], test=r["test"], p_value=r["p_value"], p_adjusted=r["p_adjusted"],
                significant=r["significant"], mark=_mark(r))
    return MultiComparison(list(labels), chosen, cells, pairwise, settings)


def _own_means(run: RunResult, metrics: list[str]) -> dict[str, dict[str, Any]]:
    """Each metric's mean and count over the run's own scored samples."""
    out: dict[str, dict[str, Any]] = {}
    for m in metrics:
        x = run.scores[m][run.status[m] == SCORED]
        out[m] = {"mean": float(x.mean()) if x.size else None, "n": int(x.size)}
    return out


def _mark(row: dict[str, Any]) -> str | None:
    """The cell's mark (a key of :data:`MARKS`) from a pairwise row, None when not significant."""
    if not row["significant"] or not row["diff"]:
        return None
    up = row["diff"] > 0
    hib = row["higher_is_better"]
    if hib is None:
        return "higher" if up else "lower"
    return "better" if up == hib else "worse"
