"""The CI quality gate: thresholds per metric, an error-rate ceiling, JUnit XML and Markdown output.

Exit codes (documented for CI systems): 0 pass, 1 quality gate failed, 2 usage or input error,
3 errors (judge or infrastructure failures, or bad rows) above the tolerated rate.

A threshold compares the metric's mean (``on="mean"``) or the lower end of its 95% interval
(``on="ci_low"``, a stricter gate that does not pass on luck). With a baseline run, a metric also
fails when it is *significantly* worse than the baseline (paired test, Holm-corrected), so noise
never fails a build.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any
from xml.sax.saxutils import escape, quoteattr

from .errors import InvalidParameterError

EXIT_PASS, EXIT_GATE, EXIT_USAGE, EXIT_ERRORS = 0, 1, 2, 3


@dataclass(frozen=True)
class Check:
    """One gate check: a threshold, a regression test or the error-rate ceiling."""

    name: str
    kind: str  # "threshold", "regression" or "errors"
    passed: bool
    message: str
    value: float | None = None
    limit: float | None = None
    #: The interval around the checked statistic: the metric's CI (threshold), the CI of the
    #: difference (regression); None when unknown.
    interval: tuple[float, float] | None = None


@dataclass
class GateResult:
    """All checks and the exit code they lead to."""

    checks: list[Check] = field(default_factory=list)

    @property
    def exit_code(self) -> int:
        """3 when the error ceiling is broken, else 1 when any check failed, else 0."""
        if any(not c.passed and c.kind == "errors" for c in self.checks):
            return EXIT_ERRORS
        return EXIT_GATE if any(not c.passed for c in self.checks) else EXIT_PASS

    @property
    def passed(self) -> bool:
        """True when every check passed."""
        return self.exit_code == EXIT_PASS


def parse_threshold(text: str) -> tuple[str, float]:
    """Parse ``NAME=VALUE`` (``--fail-under faithfulness=0.8``)."""
    name, sep, value = text.rpartition("=")
    try:
        t = float(value)
    except ValueError:
        t = math.nan
    if not sep or not name or math.isnan(t) or not 0.0 <= t <= 1.0:
        raise InvalidParameterError(f"expected METRIC=THRESHOLD with a threshold in [0, 1], got {text!r}")
    return name.strip(), t


def check_gate(
    summary: dict[str, dict[str, Any]],
    fail_under: dict[str, float],
    *,
    on: str = "mean",
    max_error_rate: float = 0.05,
    comparison: dict[str, Any] | None = None,
    alpha: float = 0.05,
    input_errors: int = 0,
) -> GateResult:
    """Evaluate the gate on a run's summary (``RunResult.summary()`` or summary.json's ``metrics``).

    Parameters
    ----------
    fail_under:
        ``{metric: threshold}``; metric names are matched after canonicalisation.
    on:
        ``"mean"`` or ``"ci_low"``.
    max_error_rate:
        The largest tolerated share of errored samples for any metric, judge and infrastructure
        failures only: ``(errors - input_errors) / (samples - input_errors)``.
    input_errors:
        Bad input rows the run recorded as errored samples (``on_error="skip"``, summary.json's
        ``run.input_errors``): counted in every metric's ``errors`` but skipped on request, so not
        failures of the run.
    comparison:
        Output of ``ragmeter.stats.compare`` against a baseline (``{"metrics": {name: {"diff",
        "p_adjusted", ...}}}``): a metric fails when it is worse with adjusted p < ``alpha``.
    """
    from .registry import canonical_name
    from .run_names import direction

    if on not in ("mean", "ci_low"):
        raise InvalidParameterError(f"gate 'on' expected mean or ci_low, got {on!r}")
    result = GateResult()
    canon = {canonical_name(m) if _known(m) else m: m for m in summary}
    for raw_name, threshold in fail_under.items():
        name = canonical_name(raw_name) if _known(raw_name) else raw_name
        if name not in canon:
            result.checks.append(Check(name, "threshold", False,
                                       f"{name}: not in this run (metrics: {', '.join(summary)})",
                                       None, threshold))
            continue
        entry = summary[canon[name]]
        if on == "ci_low":
            ci = entry.get("ci")
            value = None if not ci else ci[0]
        else:
            value = entry.get("mean")
        higher = direction(name) is not False  # an unknown metric: higher is better
        if value is None:
            result.checks.append(Check(name, "threshold", False, f"{name}: no {on} (no scored sample)",
                                       None, threshold))
            continue
        ok = value >= threshold if higher else value <= threshold
        rel = ">=" if higher else "<="
        ci = entry.get("ci")
        result.checks.append(Check(name, "threshold", ok,
                                   f"{name}: {on} {value:.4f} {'' if ok else 'not '}{rel} {threshold}",
                                   value, threshold, _pair(ci)))
    result.checks += _error_checks(summary, max_error_rate, input_errors)
    if comparison is not None:
        rows = comparison.get("metrics", [])  # ragmeter.stats.compare's rows, or {metric: row}
        for name, row in rows.items() if isinstance(rows, dict) else ((r["metric"], r) for r in rows):
            p = row.get("p_adjusted", row.get("p_value"))
            diff = row.get("diff")
            if p is None or diff is None:
                continue
            higher = direction(name) is not False  # an unknown metric: higher is better
            worse = diff < 0 if higher else diff > 0
            bad = worse and p < alpha
            result.checks.append(Check(name, "regression", not bad,
                                       f"{name}: {diff:+.4f} vs baseline, adjusted p = {p:.4g}"
                                       + (" (significant regression)" if bad else ""), diff, alpha,
                                       _pair(row.get("ci"))))
    return result


def _pair(ci: Any) -> tuple[float, float] | None:
    """``ci`` as a (low, high) pair of numbers, or None."""
    if isinstance(ci, list | tuple) and len(ci) == 2 and all(isinstance(v, int | float) for v in ci):
        return float(ci[0]), float(ci[1])
    return None


def check_line(c: Check) -> str:
    """One check in words: its message (statistic, threshold), then its 95% interval when known.

    >>> check_line(Check("mrr", "threshold", False, "mrr: mean 0.4100 not >= 0.65", 0.41, 0.65, (0.33, 0.49)))
    'mrr: mean 0.4100 not >= 0.65, 95% CI [0.3300, 0.4900]'
    """
    return c.message + (f", 95% CI [{c.interval[0]:.4f}, {c.interval[1]:.4f}]" if c.interval else "")


def banner(result: GateResult) -> list[str]:
    """The gate's verdict as the first lines of a summary: pass, or FAILED with the exit code and
    how many checks failed, then one line per failed check (:func:`check_line`); [] with no check.

    >>> r = GateResult([Check("mrr", "threshold", False, "mrr: mean 0.4100 not >= 0.65", 0.41, 0.65, (0.33, 0.49)),
    ...                 Check("ndcg@5", "threshold", True, "ndcg@5: mean 0.8000 >= 0.5", 0.8, 0.5)])
    >>> banner(r)
    ['Quality gate FAILED (exit 1): 1 of 2 checks failed', 'mrr: mean 0.4100 not >= 0.65, 95% CI [0.3300, 0.4900]']
    """
    if not result.checks:
        return []
    failed = [c for c in result.checks if not c.passed]
    n = len(result.checks)
    if not failed:
        return [f"Quality gate passed: {n} check{'s' if n > 1 else ''}"]
    return [f"Quality gate FAILED (exit {result.exit_code}): {len(failed)} of {n} checks failed",
            *(check_line(c) for c in failed)]


def _error_checks(summary: dict[str, dict[str, Any]], max_error_rate: float, input_errors: int) -> list[Check]:
    """A failed check per metric whose judge and infrastructure failures (its ``errors`` less the
    bad input rows) exceed ``max_error_rate`` of the samples read."""
    out = []
    for name, entry in summary.items():
        total = entry.get("n", 0) + entry.get("undefined", 0) + entry.get("errors", 0) - input_errors
        failed = entry.get("errors", 0) - input_errors
        rate = failed / total if total > 0 else 0.0
        if rate > max_error_rate:
            out.append(Check(name, "errors", False, f"{name}: {failed} of {total} samples errored "
                             f"({rate:.1%} > {max_error_rate:.1%} tolerated)", rate, max_error_rate))
    return out


def _known(name: str) -> bool:
    from .errors import RagmeterError
    from .registry import resolve_name

    try:
        resolve_name(name)
    except RagmeterError:
        return False
    return True


def junit_xml(result: GateResult, *, suite: str = "ragmeter") -> str:
    """The gate as JUnit XML: one test case per check, failures with their message."""
    failures = sum(not c.passed for c in result.checks)
    lines = ['<?xml version="1.0" encoding="UTF-8"?>',
             f'<testsuite name={quoteattr(suite)} tests="{len(result.checks)}" failures="{failures}">']
    for c in result.checks:
        head = f'  <testcase classname={quoteattr(suite + "." + c.kind)} name={quoteattr(c.name)}'
        if c.passed:
            lines.append(head + "/>")
        else:
            lines.append(head + ">")
            lines.append(f"    <failure message={quoteattr(c.message)}>{escape(c.message)}</failure>")
            lines.append("  </testcase>")
    lines.append("</testsuite>")
    return "\n".join(lines) + "\n"


def markdown(summary: dict[str, dict[str, Any]], result: GateResult | None = None,
             diagnosis: str | None = None) -> str:
    """A Markdown summary for pull-request comments: the gate's verdict first (:func:`banner`), the
    one-line ``diagnosis`` when given, the metric table, then every check."""
    out = []
    if result is not None and result.checks:
        head, *failed = banner(result)
        verdict, _, rest = head.partition(":")
        out += [f"**{verdict}**:{rest}", ""] + [f"- ❌ {line}" for line in failed] + ([""] if failed else [])
    if diagnosis:
        out += [f"Diagnosis: {diagnosis}", ""]
    out += ["| metric | mean | 95% CI | n | undefined | errors |", "|---|---:|---|---:|---:|---:|"]
    for name, e in summary.items():
        mean = "–" if e.get("mean") is None else f"{e['mean']:.4f}"
        ci = e.get("ci")
        ci_s = "–" if not ci or ci[0] is None else f"[{ci[0]:.4f}, {ci[1]:.4f}]"
        out.append(f"| `{name}` | {mean} | {ci_s} | {e.get('n', 0)} | {e.get('undefined', 0)} | {e.get('errors', 0)} |")
    if result is not None and result.checks:
        out += ["", "Checks:", ""]
        out += [f"- {'✅' if c.passed else '❌'} {check_line(c)}" for c in result.checks]
    return "\n".join(out) + "\n"
