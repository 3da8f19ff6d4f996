"""The comparison report's pictures and baseline texts (``ragmeter report BASELINE RUN``).

* :func:`forest_svg`: one row per metric, the mean difference Δ = run − baseline as a dot and
  its confidence interval as a whisker with end caps, on one axis symmetric around 0 (a forest
  plot); colour says whether the run is significantly better, worse, or neither.
* :func:`scatter_svg`: one metric's per-sample scores, baseline (x) against run (y), with the
  diagonal y = x: points above it are samples the run scores higher. A large run shows a seeded
  random sample of at most ``max_points`` pairs and says so; the counts above / below / on the
  diagonal are over every pair.
* :func:`add_baseline_texts`: puts the baseline's contexts (and answer, where it differs) into
  the embedded samples so the expanded sample shows them next to the run's.

Everything is inline SVG with presentation attributes (no script, no style attribute: the page's
Content-Security-Policy allows neither), so the pictures render with JavaScript off.

Geometry of :func:`forest_svg`, stated once here and relied on by the tests: the plot area spans
x = ``LABEL_W`` to x = ``width - VALUE_W``; with D = the largest ``|value|`` among the Δ and the CI
ends (1 when all are 0), a value v sits at ``LABEL_W + (v + D) / (2 D) * (plot width)``; row i
(0-based) is centred at y = ``TOP + i * ROW_H + ROW_H / 2``.
"""

from __future__ import annotations

import math
import os
from collections.abc import Sequence
from typing import Any

import numpy as np

from ._data import MetricComparison, Run, clip_text, compare_runs, find_data_path, histogram_range, sanitize
from ._html import escape_html, fmt, render_comparison

LABEL_W = 180
VALUE_W = 190
TOP = 28
ROW_H = 26
#: Colours: significantly better, significantly worse, neither.
GOOD, BAD, NEUTRAL = "#1a7f37", "#cf222e", "#57606a"
#: At most this many points per scatter plot (a seeded random sample beyond).
MAX_POINTS = 1000


def _side(c: MetricComparison) -> str:
    """``good``/``bad`` when the verdict says the run (candidate) or the baseline is better, else ``neutral``."""
    if c.verdict == "candidate better":
        return "good"
    if c.verdict == "baseline better":
        return "bad"
    return "neutral"


def _r(v: float) -> str:
    """A coordinate with at most 2 decimals."""
    return f"{v:.2f}".rstrip("0").rstrip(".")


def forest_svg(comps: Sequence[MetricComparison], *, width: int = 640) -> str:
    """A forest plot of Δ (run − baseline) with its CI, one row per metric (see the module docstring).

    A metric without paired scores gets a row with its label and "no paired scores" and no mark.
    """
    values = [abs(v) for c in comps for v in (c.diff, *(c.ci or ())) if v is not None and math.isfinite(v)]
    d = max(values, default=0.0) or 1.0
    x0, x1 = LABEL_W, width - VALUE_W
    height = TOP + ROW_H * len(comps) + 8

    def x(v: float) -> float:
        return x0 + (v + d) / (2 * d) * (x1 - x0)

    parts = [f'<svg class="forest" viewBox="0 0 {width} {height}" width="{width}" height="{height}" role="img" '
             f'aria-label="difference run minus baseline per metric, with confidence intervals" '
             f'font-size="12" font-family="sans-serif">']
    for v, anchor in ((-d, "start"), (0.0, "middle"), (d, "end")):
        parts.append(f'<text class="tick" x="{_r(x(v))}" y="{TOP - 12}" text-anchor="{anchor}" '
                     f'fill="{NEUTRAL}">{escape_html(f"{v:+.3g}" if v else "0")}</text>')
    parts.append(f'<line class="zero" x1="{_r(x(0))}" y1="{TOP - 6}" x2="{_r(x(0))}" y2="{height - 8}" '
                 f'stroke="{NEUTRAL}" stroke-dasharray="3 3"/>')
    for i, c in enumerate(comps):
        y = TOP + i * ROW_H + ROW_H / 2
        side = _side(c)
        colour = {"good": GOOD, "bad": BAD}.get(side, NEUTRAL)
        parts.append(f'<g class="forest-row {side}" data-metric="{escape_html(c.metric)}">')
        parts.append(f'<text class="label" x="{LABEL_W - 8}" y="{_r(y + 4)}" text-anchor="end">'
                     f"{escape_html(c.metric)}</text>")
        if c.diff is None:
            parts.append(f'<text class="value" x="{x1 + 8}" y="{_r(y + 4)}" fill="{NEUTRAL}">no paired scores</text>'
                         "</g>")
            continue
        if c.ci is not None:
            lo, hi = x(c.ci[0]), x(c.ci[1])
            parts.append(f'<line class="whisker" x1="{_r(lo)}" y1="{_r(y)}" x2="{_r(hi)}" y2="{_r(y)}" '
                         f'stroke="{colour}" stroke-width="2"/>')
            for cap in (lo, hi):
                parts.append(f'<line class="cap" x1="{_r(cap)}" y1="{_r(y - 5)}" x2="{_r(cap)}" y2="{_r(y + 5)}" '
                             f'stroke="{colour}" stroke-width="2"/>')
        ci_text = f" [{c.ci[0]:+.3f}, {c.ci[1]:+.3f}]" if c.ci is not None else ""
        title = f"{c.metric}: Δ {c.diff:+.4f}{ci_text}, p (adjusted) {fmt(c.p_adjusted, 4)}, {c.verdict or ''}"
        parts.append(f'<circle class="diff" cx="{_r(x(c.diff))}" cy="{_r(y)}" r="4" fill="{colour}">'
                     f"<title>{escape_html(title)}</title></circle>")
        parts.append(f'<text class="value" x="{x1 + 8}" y="{_r(y + 4)}" fill="{colour}">'
                     f"{escape_html(f'{c.diff:+.3f}{ci_text}')}</text></g>")
    parts.append("</svg>")
    return "".join(parts)


def sample_points(n: int, max_points: int = MAX_POINTS, seed: int = 0) -> np.ndarray:
    """The positions of the pairs a scatter plot draws: all of ``range(n)``, or a seeded random
    sample of ``max_points`` of them (sorted) when ``n`` is larger; the same inputs give the same points."""
    if n <= max_points:
        return np.arange(n)
    return np.sort(np.random.default_rng(seed).choice(n, size=max_points, replace=False))


def scatter_svg(metric: str, ids: Sequence[str], base: np.ndarray, run: np.ndarray, *,
                max_points: int = MAX_POINTS, seed: int = 0, size: int = 220) -> str:
    """A scatter plot of one metric's paired scores: baseline on x, run on y, the diagonal y = x.

    Returns a ``<figure>`` with the SVG and a caption counting the pairs above (run higher), below
    (run lower) and on the diagonal over every pair, and, when the pairs outnumber
    ``max_points``, how many are drawn (a seeded random sample, :func:`sample_points`).
    """
    n = len(ids)
    lo, hi = histogram_range(np.concatenate([base, run])) if n else (0.0, 1.0)
    span = (hi - lo) or 1.0
    left, top, plot = 30, 8, size - 38

    def px(v: float) -> float:
        return left + (v - lo) / span * plot

    def py(v: float) -> float:
        return top + plot - (v - lo) / span * plot

    shown = sample_points(n, max_points, seed)
    parts = [f'<svg class="scatter" viewBox="0 0 {size} {size}" width="{size}" height="{size}" role="img" '
             f'aria-label="{escape_html(metric)}: run against baseline per sample" font-size="11" '
             'font-family="sans-serif">',
             f'<rect x="{left}" y="{top}" width="{plot}" height="{plot}" fill="none" stroke="#d0d7de"/>',
             f'<line class="diagonal" x1="{left}" y1="{top + plot}" x2="{left + plot}" y2="{top}" '
             f'stroke="{NEUTRAL}" stroke-dasharray="3 3"/>']
    for k in shown:
        b, r = float(base[k]), float(run[k])
        colour = GOOD if r > b else BAD if r < b else NEUTRAL
        parts.append(f'<circle cx="{_r(px(b))}" cy="{_r(py(r))}" r="2.5" fill="{colour}" fill-opacity="0.45">'
                     f"<title>{escape_html(f'{ids[k]}: baseline {b:.3f}, run {r:.3f}')}</title></circle>")
    parts += [f'<text x="{left}" y="{size - 16}" fill="{NEUTRAL}">{escape_html(fmt(lo, 2))}</text>',
              f'<text x="{left + plot}" y="{size - 16}" text-anchor="end" fill="{NEUTRAL}">{escape_html(fmt(hi, 2))}'
              "</text>",
              f'<text x="{left + plot / 2}" y="{size - 3}" text-anchor="middle">baseline</text>',
              f'<text x="10" y="{top + plot / 2}" text-anchor="middle" '
              f'transform="rotate(-90 10 {top + plot / 2})">run</text>', "</svg>"]
    above, below = int((run > base).sum()), int((run < base).sum())
    caption = f"{n:,} pairs: run higher on {above:,}, lower on {below:,}, equal on {n - above - below:,}."
    if len(shown) < n:
        caption += f" Showing {len(shown):,} of {n:,} pairs (a seeded random sample, seed {seed})."
    return (f'<figure class="scatter-fig" data-metric="{escape_html(metric)}"><figcaption><strong>'
            f"{escape_html(metric)}</strong> {escape_html(caption)}</figcaption>{''.join(parts)}</figure>")


def comparison_section(base: Run, run: Run, metrics: Sequence[str], index_of: dict[str, int]) -> str:
    """The comparison's table (:func:`~ragmeter.report._html.render_comparison`) and its pictures
    (:func:`render_compare_plots`), from the two runs' score columns (no record is re-read)."""
    results = load_results(base, run)
    comps = compare_runs(base, run, metrics, results=results)
    return render_comparison(comps, base, run, index_of) + render_compare_plots(comps, *results)


def load_results(base: Run, run: Run) -> tuple[Any, Any]:
    """Both runs as :class:`~ragmeter.results.RunResult` (what :mod:`ragmeter.stats` compares),
    made of the columns already indexed (:meth:`Run.to_result`): the full records are never held."""
    return base.to_result(), run.to_result()


def render_compare_plots(comps: Sequence[MetricComparison], base: Any, run: Any, *,
                         max_points: int = MAX_POINTS, seed: int = 0) -> str:
    """The comparison's pictures as a page section: the forest plot, then one scatter per metric.

    ``base``, ``run``: the two runs as :class:`~ragmeter.results.RunResult` objects or OUTDIR paths.
    """
    from ..stats import load_run
    from ..stats.compare import paired_scores

    base, run = load_run(base, "baseline"), load_run(run, "run")
    pairs = paired_scores(base, run, [c.metric for c in comps])
    scatters = [scatter_svg(c.metric, *pairs[c.metric], max_points=max_points, seed=seed) for c in comps]
    return ('<section id="comparison-plots"><h2>Δ per metric</h2>'
            '<p class="muted">Dot: mean difference run − baseline over the samples both runs scored; whisker: its '
            "confidence interval; dashed line: no difference. Green: the run is significantly better, red: worse "
            '(Holm-adjusted).</p><div class="scroll-x">' + forest_svg(comps) + "</div>"
            + '<h3>Per sample: run against baseline</h3><p class="muted">Each dot is a sample; above the dashed '
            "diagonal the run scores higher.</p>"
            + '<div class="scatters">' + "".join(scatters) + "</div></section>")


def read_baseline_texts(path: str | os.PathLike[str], ids: set[str], *, format: str | None = None,
                        field_map: dict[str, str] | None = None) -> dict[str, dict[str, Any]]:
    """``{id: {"a": answer, "c": [[id, text, score], ...]}}`` for the samples ``ids`` of the baseline's data
    file (read one row at a time; bad rows are skipped, as the run recorded them)."""
    from ..errors import InputError
    from ..io import read_samples

    out: dict[str, dict[str, Any]] = {}
    for s in read_samples(path, on_error="skip", format=format, field_map=field_map):  # type: ignore[arg-type]
        if isinstance(s, InputError) or s.id not in ids:
            continue
        out[s.id] = {"a": s.answer, "c": [[c.id, c.text, c.score] for c in s.contexts]}
    return out


def baseline_texts(base: Run, ids: set[str]) -> dict[str, dict[str, Any]] | None:
    """The baseline's texts for ``ids`` (:func:`read_baseline_texts`) from the data file its run info
    names, or None when that file is not found."""
    path = find_data_path(base)
    if path is None:
        return None
    return read_baseline_texts(path, ids, format=base.info.get("format"), field_map=base.info.get("field_map") or None)


def add_baseline_texts(payload: dict[str, Any], base_texts: dict[str, dict[str, Any]] | None, *,
                       clip_chars: int | None) -> dict[str, Any]:
    """Add the baseline's contexts and answer to the embedded samples (``payload`` is changed and returned).

    Per sample: ``bc`` the baseline's contexts (``[[id, text, score], ...]``) when they differ from
    the run's, ``bsame`` true when they are the same, neither when the baseline's data has no such
    sample; ``ba`` the baseline's answer when it differs from the run's. ``payload["baseText"]``
    says whether the baseline's data file was read at all.
    """
    payload["baseText"] = base_texts is not None
    for entry in payload["samples"]:
        t = (base_texts or {}).get(entry["id"])
        if t is None:
            continue
        ctx = sanitize([[cid, clip_text(text, clip_chars), score] for cid, text, score in t["c"]])
        if ctx == entry.get("c"):
            entry["bsame"] = True
        else:
            entry["bc"] = ctx
        answer = clip_text(t["a"], clip_chars)
        if answer != entry.get("a"):
            entry["ba"] = answer
    return payload
