"""The comparison of three or more runs (``ragmeter report RUN_1 RUN_2 RUN_3 ...``).

Two tables, each in its own sideways-scrolling box so the page itself never scrolls sideways:

* **Means.** A row per metric: each run's mean with its interval (as ``summary.json`` records
  them: the mean over the run's own scored samples), and the best run (highest mean, lowest for a
  lower-is-better metric; "tie" when several share the best mean).
* **Paired tests.** A row per pair of runs and metric: Δ = later run − earlier run over the
  samples both scored (matched by id), its paired bootstrap interval, the paired test's p-value
  (:func:`ragmeter.stats.compare`) and the p-value Holm-adjusted over every pair and metric of
  the table together, with the verdict at that adjusted p-value.
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence
from typing import Any

from ..run_names import direction
from ..stats.compare import compare
from ..stats.paired import holm
from ._data import Run
from ._html import escape_html, fmt, fmt_p

#: Adjusted p-values below this are significant.
ALPHA = 0.05


def pairwise_tests(runs: Sequence[Any], labels: Sequence[str], metrics: Sequence[str]) -> list[dict[str, Any]]:
    """Every pair of runs (i < j) on every metric: :func:`~ragmeter.stats.compare` rows (``a``,
    ``b`` the two labels) with ``p_adjusted`` Holm-adjusted over the whole list and ``verdict``."""
    rows: list[dict[str, Any]] = []
    for i, j in itertools.combinations(range(len(runs)), 2):
        c = compare(runs[i], runs[j], metrics=list(metrics), correction="none", labels=(labels[i], labels[j]))
        rows += [{**r, "a": labels[i], "b": labels[j]} for r in c.metrics]
    for r, p in zip(rows, holm([r["p_value"] for r in rows]), strict=True):
        r["p_adjusted"] = p
        r["verdict"] = _verdict(r, p)
    return rows


def _verdict(row: dict[str, Any], p: float | None) -> str:
    """Which run of the pair is better at the adjusted p-value, or no significant difference."""
    if p is None or p >= ALPHA or not row["diff"]:
        return "no significant difference"
    up = row["diff"] > 0
    if row["higher_is_better"] is None:
        return f"{row['b'] if up else row['a']} higher"
    return f"{row['b'] if up == row['higher_is_better'] else row['a']} better"


def best_run(means: Sequence[float | None], metric: str) -> int | None:
    """The index of the best mean (highest; lowest for a lower-is-better metric); None when no run
    has a mean or several share the best."""
    known = [(k, v) for k, v in enumerate(means) if v is not None]
    if not known:
        return None
    sign = -1.0 if direction(metric) is False else 1.0
    top = max(sign * v for _, v in known)
    leaders = [k for k, v in known if sign * v == top]
    return leaders[0] if len(leaders) == 1 else None


def _mean_cell(entry: dict[str, Any] | None, best: bool) -> str:
    if not entry or entry.get("mean") is None:
        return "<td>—</td>"
    ci = entry.get("ci")
    interval = f'<br><span class="muted">[{escape_html(fmt(ci[0]))}, {escape_html(fmt(ci[1]))}]</span>' if ci else ""
    cls = ' class="good"' if best else ""
    return f"<td{cls}>{escape_html(fmt(entry['mean']))}{interval}</td>"


def multi_section(runs: Sequence[Run], labels: Sequence[str]) -> str:
    """The N-run comparison section (see the module docstring); ``labels`` name the runs."""
    metrics = [m for m in runs[0].metrics if all(m in r.metrics for r in runs[1:])]
    head = "".join(f"<th>{escape_html(label)}</th>" for label in labels)
    mean_rows = []
    for m in metrics:
        entries = [(r.summary.get("metrics") or {}).get(m) for r in runs]
        best = best_run([e.get("mean") if e else None for e in entries], m)
        cells = "".join(_mean_cell(e, k == best) for k, e in enumerate(entries))
        mean_rows.append(f'<tr><th scope="row">{escape_html(m)}</th>{cells}'
                         f'<td class="best">{escape_html(labels[best] if best is not None else "tie")}</td></tr>')
    tests = pairwise_tests([r.to_result() for r in runs], labels, metrics)
    test_rows = []
    for t in tests:
        cls = ' class="good"' if t["verdict"].endswith("better") else ""
        ci = f"[{fmt(t['ci'][0])}, {fmt(t['ci'][1])}]" if t.get("ci") else "—"
        diff = "—" if t["diff"] is None else f"{t['diff']:+.3f}"
        test_rows.append(
            f'<tr><th scope="row">{escape_html(t["metric"])}</th>'
            f'<td class="pair">{escape_html(t["b"])} − {escape_html(t["a"])}</td>'
            f"<td>{escape_html(diff)}</td><td>{escape_html(ci)}</td><td>{escape_html(fmt_p(t['p_value']))}</td>"
            f"<td>{escape_html(fmt_p(t['p_adjusted']))}</td><td>{escape_html(fmt(t['n_pairs']))}</td>"
            f'<td class="verdict"{cls}>{escape_html(t["verdict"])}</td></tr>')
    return (
        f'<section id="multi-comparison"><h2>Comparison of {len(runs)} runs</h2>'
        '<p class="muted">Each run\'s mean over its own scored samples, with its 95% interval; the best run '
        "per metric (highest, or lowest where lower is better).</p>"
        f'<div class="scroll-x"><table class="multi"><thead><tr><th>metric</th>{head}<th>best</th></tr></thead>'
        f"<tbody>{''.join(mean_rows)}</tbody></table></div>"
        "<h3>Paired tests between runs</h3>"
        '<p class="muted">Δ between two runs over the samples both scored, matched by id, with its paired '
        f"bootstrap 95% interval; p-values Holm-adjusted over all {len(tests)} pairs × metrics; significant "
        f"below {ALPHA}.</p>"
        '<div class="scroll-x"><table class="pairs"><thead><tr><th>metric</th><th class="pair">pair</th><th>Δ</th>'
        '<th>95% CI of Δ</th><th>p</th><th>p (adjusted)</th><th>pairs</th><th class="verdict">verdict</th></tr></thead>'
        f"<tbody>{''.join(test_rows)}</tbody></table></div></section>"
    )
