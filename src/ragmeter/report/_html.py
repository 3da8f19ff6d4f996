"""Turning the report's data into one self-contained HTML page.

Safety rules, kept in one place (every evaluated text is untrusted):

* Text placed in HTML by Python goes through :func:`escape_html` (``& < > " '``), in element
  content and attribute values alike, SVG included.
* The sample data goes into ``<script type="application/json">`` through :func:`embed_json`,
  which escapes ``<``, ``>``, ``&``, U+2028 and U+2029 as ``\\uXXXX``, so no text can close the
  element (``</script>``) or open a comment; the page's script reads it with ``JSON.parse`` and
  renders it with ``textContent`` only.
* Bidirectional controls (U+202E RIGHT-TO-LEFT OVERRIDE and its kin, :data:`._text.BIDI_CONTROLS`) are
  shown as visible ``[U+202E]`` marks wherever evaluated text reaches the page (both rules above
  apply it), so ``invoice\u202etxt.exe`` can never read as ``invoiceexe.txt``.
* A Content-Security-Policy meta forbids everything but the page's own inline script and style,
  each allowed by its SHA-256 hash (:func:`csp_hash`), and ``data:`` images: no network, no
  injected script, even if an escaping rule were ever missed.

The page is a :class:`string.Template` (``templates/report.html``) with the CSS and the script
in files beside it, so the library needs no template engine.
"""

from __future__ import annotations

import base64
import hashlib
import html
import json
import math
from collections.abc import Sequence
from importlib import resources
from string import Template
from typing import Any

import numpy as np

from ..stats import what_changed
from ._data import MetricComparison, Run, histogram, histogram_range
from ._text import show_bidi

_JSON_ESCAPES = {
    "<": "\\u003c",
    ">": "\\u003e",
    "&": "\\u0026",
    "\u2028": "\\u2028",
    "\u2029": "\\u2029",
}
_JSON_TRANS = str.maketrans(_JSON_ESCAPES)

#: Run-info keys shown first, with a label, when present (anything else follows as it is).
RUN_LABELS = (
    ("dataset", "Dataset"),
    ("data", "Data file"),
    ("started", "Date"),
    ("ragmeter_version", "ragmeter"),
    ("judge", "Judge"),
    ("judge_check", "Judge check"),
    ("embedder", "Embedder"),
    ("seconds", "Seconds"),
    ("calls", "Calls"),
    ("cache_hits", "Cache hits"),
    ("tokens", "Tokens"),
    ("prompt_tokens", "Prompt tokens"),
    ("completion_tokens", "Completion tokens"),
    ("cost", "Cost"),
    ("errors", "Errors"),
    ("usage", "Usage"),
)
_SKIP_RUN_KEYS = {"metrics", "diagnosis", "findings"}
_FINDING_SHOWN = {"severity", "strength", "title", "name", "kind", "message", "detail", "description", "stage",
                  "problem", "fix", "rule"}


def escape_html(text: Any) -> str:
    """``text`` (any value; None is empty) as HTML-safe text for element content and quoted attributes.

    >>> escape_html('<a href="x">Tom & Jerry\\'s</a>')
    '&lt;a href=&quot;x&quot;&gt;Tom &amp; Jerry&#x27;s&lt;/a&gt;'
    """
    if text is None:
        return ""
    return html.escape(show_bidi(str(text)), quote=True)


def embed_json(obj: Any) -> str:
    """``obj`` as JSON that is safe inside ``<script type="application/json">``.

    Bidirectional controls become visible marks (:func:`show_bidi`; only strings can hold them).
    ``<``, ``>``, ``&``, U+2028 and U+2029 become ``\\u003c``, ``\\u003e``, ``\\u0026``, ``\\u2028``,
    ``\\u2029``: JSON allows these escapes inside strings (the only place these characters can
    occur in JSON), so ``JSON.parse`` gives back the same value, and the text can never contain
    ``</script`` or ``<!--``. NaN is refused (JSON has none): pass data through
    :func:`ragmeter.report._data.sanitize` first.

    >>> embed_json({"a": "</script>&"})
    '{"a":"\\\\u003c/script\\\\u003e\\\\u0026"}'
    """
    text = json.dumps(obj, ensure_ascii=False, allow_nan=False, separators=(",", ":"))
    return show_bidi(text).translate(_JSON_TRANS)


def csp_hash(source: str) -> str:
    """The CSP source expression allowing an inline ``<script>``/``<style>`` whose content is ``source``."""
    digest = hashlib.sha256(source.encode("utf-8")).digest()
    return "'sha256-" + base64.b64encode(digest).decode("ascii") + "'"


def content_security_policy(script: str, style: str) -> str:
    """The page's policy: nothing but its own inline script and style (by hash) and ``data:`` images."""
    return (
        "default-src 'none'; "
        f"script-src {csp_hash(script)}; "
        f"style-src {csp_hash(style)}; "
        "img-src data:; base-uri 'none'; form-action 'none'"
    )


def fmt(v: Any, digits: int = 3) -> str:
    """A number for display (``—`` for None/NaN); other values as text."""
    if v is None or (isinstance(v, float) and math.isnan(v)):
        return "—"
    if isinstance(v, bool):
        return "yes" if v else "no"
    if isinstance(v, int):
        return f"{v:,}"
    if isinstance(v, float):
        return f"{v:.{digits}f}"
    return str(v)


def fmt_p(p: float | None) -> str:
    """A p-value for display: 4 decimals, ``<0.0001`` below that, ``—`` when there is none."""
    if p is None or (isinstance(p, float) and math.isnan(p)):
        return "—"
    return f"{p:.4f}" if p >= 0.0001 else "<0.0001"


def svg_histogram(counts: Sequence[int], lo: float, hi: float, *, label: str,
                  width: int = 240, height: int = 72) -> str:
    """An inline SVG bar chart of ``counts`` over ``[lo, hi]`` with axis ends labelled (no style attributes)."""
    n = len(counts)
    top = max(counts) if counts and max(counts) > 0 else 1
    plot_h = height - 14
    bar_top = 11  # room for the count above the tallest bar
    bar_w = width / n if n else width
    parts = [
        f'<svg class="hist" viewBox="0 0 {width} {height}" width="{width}" height="{height}" role="img" '
        f'aria-label="{escape_html(label)}">'
    ]
    for i, c in enumerate(counts):
        h = 0.0 if c == 0 else max(1.5, (plot_h - bar_top) * c / top)
        x = i * bar_w
        b_lo = lo + (hi - lo) * i / n
        b_hi = lo + (hi - lo) * (i + 1) / n
        parts.append(
            f'<rect class="bar" x="{x + 1:.1f}" y="{plot_h - h:.1f}" width="{max(bar_w - 2, 1):.1f}" '
            f'height="{h:.1f}"><title>{escape_html(f"{b_lo:.2f}–{b_hi:.2f}: {c}")}</title></rect>'
        )
        if c:
            parts.append(f'<text class="count" x="{x + bar_w / 2:.1f}" y="{plot_h - h - 2:.1f}" '
                         f'text-anchor="middle">{c}</text>')
    parts.append(f'<line class="axis" x1="0" y1="{plot_h + 0.5}" x2="{width}" y2="{plot_h + 0.5}"/>')
    parts.append(f'<text class="tick" x="0" y="{height - 2}">{escape_html(fmt(lo, 2))}</text>')
    parts.append(f'<text class="tick" x="{width}" y="{height - 2}" text-anchor="end">{escape_html(fmt(hi, 2))}</text>')
    parts.append("</svg>")
    return "".join(parts)


def _kv_value(v: Any) -> str:
    if isinstance(v, dict):
        inner = "".join(f"<dt>{escape_html(k)}</dt><dd>{_kv_value(x)}</dd>" for k, x in v.items())
        return f'<dl class="kv inner">{inner}</dl>'
    if isinstance(v, list):
        if all(not isinstance(x, dict | list) for x in v):
            return escape_html(", ".join(fmt(x) for x in v)) or "—"
        if all(isinstance(x, dict) for x in v):
            keys: list[str] = []
            for x in v:
                keys.extend(str(k) for k in x if str(k) not in keys)
            head = "".join(f"<th>{escape_html(k)}</th>" for k in keys)
            body = "".join(
                "<tr>" + "".join(f"<td>{_kv_value(x.get(k))}</td>" for k in keys) + "</tr>" for x in v[:50]
            )
            return f'<table class="mini"><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>'
        return "<code>" + escape_html(json.dumps(v, ensure_ascii=False, default=str)) + "</code>"
    return escape_html(fmt(v))


def render_run_info(run: Run, data_note: str) -> str:
    """The header's key/value list: dataset, date, versions, judge/embedder, calls/tokens/cost, the rest."""
    info = run.info
    rows: list[str] = []
    shown: set[str] = set()
    for key, label in RUN_LABELS:
        if key in info and info[key] not in (None, "", [], {}):
            rows.append(f"<dt>{escape_html(label)}</dt><dd>{_kv_value(info[key])}</dd>")
            shown.add(key)
    for key, value in info.items():
        if key in shown or key in _SKIP_RUN_KEYS or value in (None, "", [], {}):
            continue
        rows.append(f"<dt>{escape_html(key)}</dt><dd>{_kv_value(value)}</dd>")
    n = len(run.ids)
    rows.insert(0, f"<dt>Samples</dt><dd>{n:,}</dd>")
    rows.append(f"<dt>Sample texts</dt><dd>{escape_html(data_note)}</dd>")
    return '<dl class="kv">' + "".join(rows) + "</dl>"


#: The report's stages, in pipeline order: registry role -> (heading, the question it answers).
STAGES = (
    ("retrieval", "Retrieval", "is the evidence retrieved, and ranked near the top?"),
    ("context", "Context use", "is the context handed to the generator usable for the question?"),
    ("answer", "Answer", "is the answer grounded, relevant and correct?"),
    (None, "Other metrics", "metrics ragmeter has no stage for"),
)


def card_state(mean: float | None, ci: Any, threshold: float | None, higher: bool, *, low: bool = False,
               on: str = "mean") -> tuple[str, str]:
    """``(state, label)`` of a metric card: ``pass`` / ``fail`` against the gate threshold, ``low``
    (no threshold, but clearly low: see :func:`ragmeter.stats.diagnose.clearly_low`), or
    ``unknown`` (no threshold, or no score to compare).

    >>> card_state(0.41, [0.33, 0.49], 0.65, True)
    ('fail', 'fail: mean 0.410 < 0.65')
    >>> card_state(0.2, None, 0.3, False)
    ('pass', 'pass: mean 0.200 <= 0.3')
    >>> card_state(None, None, 0.65, True)
    ('unknown', 'unknown: no score to compare with 0.65')
    """
    if threshold is None:
        return ("low", "clearly low") if low else ("unknown", "no gate threshold")
    value = mean
    if on == "ci_low":
        value = ci[0] if isinstance(ci, list | tuple) and len(ci) == 2 else None
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return "unknown", f"unknown: no score to compare with {threshold:g}"
    ok = value >= threshold if higher else value <= threshold
    rel = (">=" if ok else "<") if higher else ("<=" if ok else ">")
    state = "pass" if ok else "fail"
    return state, f"{state}: {on.replace('_', ' ')} {value:.3f} {rel} {threshold:g}"


def _counted(label: str, total: Any, cls: str) -> str:
    """``undefined 72``, coloured when not zero."""
    return f'<span class="{cls if total else ""}">{escape_html(label)} {escape_html(fmt(total or 0))}</span>'


def _reasons(title: str, total: Any, counts: dict[str, int], cls: str) -> str:
    """The most common reasons (or error types) behind ``total`` samples, with their counts; '' when none."""
    from ._data import top_reasons

    if not total or not counts:
        return ""
    tops = top_reasons(counts, 2)
    items = "".join(f"<li>{escape_html(r)} <span class=\"muted\">({n:,})</span></li>" for r, n in tops)
    more = len(counts) - len(tops)
    if more > 0:
        items += f'<li class="muted">and {more:,} other reason{"s" if more > 1 else ""}</li>'
    return f'<div class="why {escape_html(cls)}">{escape_html(title)}:<ul>{items}</ul></div>'


def _metric_card(run: Run, m: str, gate: dict[str, float], low_names: set[str], on: str) -> str:
    """One metric's card: direction, mean, CI, state against the gate, counts with reasons, histogram."""
    from ._data import higher_is_better

    s = run.summary["metrics"].get(m) or {}
    scores = run.scores(m)
    lo, hi = histogram_range(scores)
    counts = histogram(scores.tolist(), bins=10, lo=lo, hi=hi)
    ci = s.get("ci")
    ci_html = ""
    if isinstance(ci, list | tuple) and len(ci) == 2:
        method = s.get("ci_method")
        ci_html = (
            f'<div class="ci">95% CI [{escape_html(fmt(ci[0]))}, {escape_html(fmt(ci[1]))}]'
            + (f' <span class="muted">{escape_html(method)}</span>' if method else "")
            + "</div>"
        )
    versions = run.info.get("metrics") if isinstance(run.info.get("metrics"), dict) else {}
    v = versions.get(m, {}) if isinstance(versions, dict) else {}
    version = v.get("version") if isinstance(v, dict) else None
    n_scored = int(np.isfinite(scores).sum())
    up = higher_is_better(m)
    threshold = gate.get(m)
    state, state_label = card_state(s.get("mean"), ci, threshold, up, low=m in low_names, on=on)
    direction = "↑ higher is better" if up else "↓ lower is better"
    gate_html = (f'<span class="gate">gate {"≥" if up else "≤"} {escape_html(fmt(threshold))}</span>'
                 if threshold is not None else "")
    return (
        f'<article class="card state-{state}" data-metric="{escape_html(m)}" data-state="{state}">'
        f'<h3 title="{escape_html(m)}">{escape_html(m)}</h3>'
        f'<div class="dir">{direction}{" · " if gate_html else ""}{gate_html}</div>'
        f'<div class="mean">{escape_html(fmt(s.get("mean")))}'
        f' <span class="state" title="{escape_html(state_label)}">{escape_html(state_label)}</span></div>{ci_html}'
        f'<div class="counts">n = {escape_html(fmt(s.get("n", n_scored)))}'
        f" · {_counted('undefined', s.get('undefined', 0), 'warn')}"
        f" · {_counted('errors', s.get('errors', 0), 'bad')}</div>"
        + _reasons("undefined because", s.get("undefined", 0), run.reasons.get(m, {}), "warn")
        + _reasons("errors", s.get("errors", 0), run.error_types.get(m, {}), "bad")
        + svg_histogram(counts, lo, hi, label=f"histogram of {m} scores")
        + (f'<div class="muted small">version {escape_html(version)}</div>' if version else "")
        + "</article>"
    )


def render_metric_cards(run: Run, *, gate: dict[str, float] | None = None,
                        low: Sequence[dict[str, Any]] | None = None) -> str:
    """The metric cards grouped by pipeline stage (the registry's ``role`` of each metric).

    Each card: the metric's direction, its mean with the CI when the summary has one, the gate
    threshold when ``gate`` sets one, a pass / fail / clearly low / unknown state (see
    :func:`card_state`), the counts of scored, undefined (with the most common reasons) and
    errored samples (with the most common error types), the score histogram and the version.
    """
    from ._data import metric_spec_of

    gate = gate or {}
    low_names = {str(e.get("metric")) for e in (low or []) if isinstance(e, dict)}
    on = "mean"
    g = run.info.get("gate")
    if isinstance(g, dict) and g.get("statistic") in ("mean", "ci_low"):
        on = g["statistic"]
    groups: dict[str | None, list[str]] = {}
    for m in run.metrics:
        spec = metric_spec_of(m)
        role = spec.role if spec is not None and spec.role in ("retrieval", "context", "answer") else None
        groups.setdefault(role, []).append(m)
    parts: list[str] = []
    for role, heading, question in STAGES:
        if role not in groups:
            continue
        cards = "".join(_metric_card(run, m, gate, low_names, on) for m in groups[role])
        parts.append(f'<section class="stage" data-stage="{escape_html(role or "other")}">'
                     f'<h3 class="stage-head">{escape_html(heading)} <span class="muted small">'
                     f'{escape_html(question)}</span></h3><div class="cards">{cards}</div></section>')
    return "".join(parts)


def _evidence_phrase(e: dict[str, Any]) -> str:
    """``recall@5 0.410 [0.330, 0.490], below 0.65`` from one evidence entry of a diagnose finding."""
    cond = str(e.get("condition") or "")
    op, _, thr = cond.partition(" ")
    side = {"<": "below", ">=": "at or above"}.get(op, op)
    ci = e.get("ci")
    ci_text = f" [{fmt(ci[0])}, {fmt(ci[1])}]" if isinstance(ci, list | tuple) and len(ci) == 2 else ""
    return f"{e.get('metric')} {fmt(e.get('mean'))}{ci_text}, {side} {thr}".rstrip(", ")


def finding_sentence(f: dict[str, Any]) -> str:
    """A diagnose finding as one sentence with its evidence.

    >>> finding_sentence({"problem": "the retriever misses the evidence; the generator is faithful",
    ...                   "evidence": [{"metric": "recall@5", "condition": "< 0.65", "mean": 0.41,
    ...                                 "ci": [0.33, 0.49], "role": "primary"}]})
    'The retriever misses the evidence: recall@5 0.410 [0.330, 0.490], below 0.65'
    """
    problem = str(f.get("problem") or f.get("rule") or "").split(";")[0].strip()
    ev = [e for e in f.get("evidence") or [] if isinstance(e, dict) and e.get("role") != "exclusion"]
    text = problem[:1].upper() + problem[1:]
    if ev:
        text += ": " + "; ".join(_evidence_phrase(e) for e in ev)
    return text


def _position_html(p: Any) -> str:
    """The position analysis in one line, its buckets in a table under a disclosure."""
    if not isinstance(p, dict):
        return ""
    if "buckets" not in p:
        return f'<p class="muted small">Position analysis: {escape_html(p.get("note", "not available"))}</p>'
    rows = "".join(
        f"<tr><td>{escape_html(b['bucket'])}</td><td>{escape_html(fmt(b['n']))}</td>"
        f"<td>{escape_html(fmt(b.get('mean')))}</td><td>{escape_html(_ci_text(b.get('ci')))}</td></tr>"
        for b in p["buckets"] if b.get("n"))
    flags = [f"Spearman rho(rank, score) {fmt(p.get('spearman_rho'))}",
             "lost in the middle: " + ("yes" if p.get("lost_in_the_middle") else "no"),
             "position effect: " + ("yes" if p.get("position_effect") else "no")]
    return (f'<details class="position"><summary>{escape_html(p["metric"])} by rank of the first relevant chunk: '
            f"{escape_html('; '.join(flags))}</summary>"
            '<table class="changed"><thead><tr><th>first relevant rank</th><th>n</th><th>mean</th>'
            f"<th>95% CI</th></tr></thead><tbody>{rows}</tbody></table></details>")


def _ci_text(ci: Any) -> str:
    return f"[{fmt(ci[0])}, {fmt(ci[1])}]" if isinstance(ci, list | tuple) and len(ci) == 2 else "—"


def render_diagnose_result(d: dict[str, Any]) -> str:
    """The output of ``ragmeter.stats.diagnose`` (``to_dict()``) as the report's opening section.

    Each finding heads the section as a sentence with its evidence (:func:`finding_sentence`), its
    strength, stage, the fix to try and how many samples match on their own scores. With no
    finding, each low metric (against its gate, its reference level or the baseline) is a tentative finding
    (:func:`ragmeter.stats.diagnose.tentative_sentence`); with none either, the section says so.
    """
    from ..stats.diagnose import TENTATIVE_LEAD, no_finding_sentence, tentative_sentence

    items: list[str] = []
    for f in d.get("findings") or []:
        strength = str(f.get("strength") or "info")
        extra = []
        if f.get("samples_matching") is not None:
            extra.append(f"{fmt(f['samples_matching'])} samples match on their own scores")
        if f.get("missing_metrics"):
            extra.append("missing: " + ", ".join(map(str, f["missing_metrics"])))
        extra.extend(map(str, f.get("substitutions") or []))
        items.append(
            f'<li class="finding sev-{escape_html(strength.lower())}">'
            f'<span class="badge">{escape_html(strength)}</span> '
            f'<span class="stage-tag">{escape_html(f.get("stage"))}</span> '
            f'<strong class="sentence">{escape_html(finding_sentence(f))}</strong>'
            f'<div class="fix">Fix to try: {escape_html(f.get("fix"))}</div>'
            + (f'<div class="muted small">{escape_html("; ".join(extra))}</div>' if extra else "")
            + "</li>")
    if not items and d.get("low_metrics"):
        items.append(f'<li class="lead">{escape_html(TENTATIVE_LEAD)}:</li>')
        for low in d["low_metrics"]:
            items.append(f'<li class="finding sev-tentative"><span class="badge">tentative</span> '
                         f'<strong class="sentence">{escape_html(tentative_sentence(low))}</strong></li>')
    n_rules = len(d.get("findings") or []) + len(d.get("not_fired") or [])
    if not items:
        items.append(f'<li class="finding sev-ok"><span class="badge">ok</span> <strong class="sentence">'
                     f"{escape_html(no_finding_sentence(d))}</strong></li>")
    not_fired = "".join(f"<li><code>{escape_html(nf.get('rule'))}</code>: {escape_html(nf.get('reason'))}</li>"
                        for nf in d.get("not_fired") or [])
    return (
        '<section id="diagnosis"><h2>Diagnosis</h2><ul class="findings">' + "".join(items) + "</ul>"
        + _position_html(d.get("position"))
        + (f'<details class="not-fired"><summary>{n_rules} rules checked (ragmeter diagnose); '
           f"{len(d.get('not_fired') or [])} did not fire</summary><ul>{not_fired}</ul></details>" if n_rules else "")
        + "</section>"
    )


def render_diagnosis(findings: Any) -> str:
    """Diagnosis findings as the report's opening section; '' when none.

    ``ragmeter.stats.diagnose`` output goes to :func:`render_diagnose_result`; other findings
    (strings, or objects with severity/title/message/..., as a run info may hold) show as a list.
    """
    if findings is None or findings == []:
        return ""
    if isinstance(findings, dict) and isinstance(findings.get("findings"), list) \
            and isinstance(findings.get("not_fired"), list):
        return render_diagnose_result(findings)
    if isinstance(findings, dict):
        findings = findings.get("findings", [findings])
    if not isinstance(findings, list):
        findings = [findings]
    items: list[str] = []
    for f in findings:
        if isinstance(f, dict):
            sev = str(f.get("severity") or f.get("strength") or "info")
            stage, problem = f.get("stage"), f.get("problem")
            title = f.get("title") or (f"{stage}: {problem}" if stage and problem else None) or f.get("name") \
                or f.get("rule") or ""
            msg = f.get("message") or (f"Fix: {f['fix']}" if f.get("fix") else "") or f.get("description") or ""
            rest = {k: v for k, v in f.items() if k not in _FINDING_SHOWN}
            items.append(
                f'<li class="finding sev-{escape_html(sev.lower())}"><span class="badge">{escape_html(sev)}</span> '
                f"<strong>{escape_html(title)}</strong> {escape_html(msg)}"
                + (_kv_value(rest) if rest else "")
                + "</li>"
            )
        else:
            items.append(f'<li class="finding"><span class="badge">info</span> {escape_html(f)}</li>')
    return '<section id="diagnosis"><h2>Diagnosis</h2><ul class="findings">' + "".join(items) + "</ul></section>"


def render_samples_note(shown: int, total: int, selected: bool) -> str:
    """The line above the sample table: how many of the run's samples the page holds, and which."""
    if shown >= total:
        return f'<p class="muted" id="samples-note">All {total:,} samples are in this page.</p>'
    how = ("the worst and best per metric, every errored or gate-failing one (up to half), and a seeded "
           "random sample" if selected else "the first ones")
    return (f'<p class="note" id="samples-note">Showing {shown:,} of {total:,} samples: {how}. '
            "The metric cards, histograms and the diagnosis cover all samples.</p>")


def render_what_changed(comps: Sequence[MetricComparison], alpha: float = 0.05) -> str:
    """What the comparison says first (:func:`ragmeter.stats.what_changed`): the significant
    regressions, then improvements (Holm-adjusted p < ``alpha``), each with its stage, Δ, CI and
    adjusted p, then the metrics with no significant change."""

    rows = [{"metric": c.metric, "diff": c.diff, "ci": list(c.ci) if c.ci else None, "p_adjusted": c.p_adjusted,
             "significant": c.p_adjusted is not None and c.p_adjusted < alpha,
             "higher_is_better": c.higher_is_better} for c in comps]
    items = "".join(f'<li class="change {kind}">{escape_html(line)}</li>' for kind, line in what_changed(rows))
    return f'<ul class="what-changed">{items}</ul>'


def render_comparison(comps: Sequence[MetricComparison], baseline: Run, candidate: Run,
                      index_of: dict[str, int]) -> str:
    """The comparison section: per-metric difference with CI and p-value, then the samples that changed most."""
    rows: list[str] = []
    for c in comps:
        cls = ""
        if c.ci is not None and c.diff is not None and (c.ci[0] > 0 or c.ci[1] < 0):
            better = c.diff > 0 if c.higher_is_better is not False else c.diff < 0
            cls = "good" if better else "bad"
        ci = f"[{fmt(c.ci[0])}, {fmt(c.ci[1])}]" if c.ci else "—"
        diff = "—" if c.diff is None else f"{c.diff:+.3f}"
        rows.append(
            f"<tr><th scope=\"row\">{escape_html(c.metric)}</th><td>{escape_html(fmt(c.baseline_mean))}</td>"
            f"<td>{escape_html(fmt(c.candidate_mean))}</td><td class=\"{cls}\">{escape_html(diff)}</td>"
            f"<td>{escape_html(ci)}</td><td>{escape_html(fmt_p(c.p_value))}</td>"
            f"<td>{escape_html(fmt_p(c.p_adjusted))}</td><td>{escape_html(fmt(c.n))}</td>"
            f'<td class="verdict">{escape_html(c.verdict)}</td></tr>'
        )
    method = comps[0].method if comps else ""
    head = render_what_changed(comps)
    table = (
        '<div class="scroll-x"><table class="compare"><thead><tr><th>metric</th><th>baseline</th>'
        "<th>candidate</th><th>Δ</th>"
        "<th>95% CI of Δ</th><th>p</th><th>p (adjusted)</th><th>pairs</th><th>verdict</th></tr></thead><tbody>"
        + "".join(rows) + "</tbody></table></div>"
    )
    changed: list[str] = []
    for c in comps:
        if not c.changed:
            continue
        items = "".join(
            f'<tr><td><a href="#samples" class="jump" data-index="{index_of.get(sid, -1)}">{escape_html(sid)}</a></td>'
            f"<td>{escape_html(fmt(b))}</td><td>{escape_html(fmt(a))}</td>"
            f'<td class="{"good" if a > b else "bad"}">{escape_html(f"{a - b:+.3f}")}</td></tr>'
            for sid, b, a in c.changed
        )
        changed.append(
            f"<details><summary>{escape_html(c.metric)}: {len(c.changed)} samples that changed most</summary>"
            '<div class="scroll-x"><table class="changed"><thead><tr><th>sample</th><th>baseline</th>'
            f"<th>candidate</th><th>Δ</th></tr></thead><tbody>{items}</tbody></table></div></details>"
        )
    return (
        '<section id="comparison"><h2>Comparison</h2>' + head +
        f'<p class="muted">Δ = candidate − baseline over samples scored in both runs, matched by id. '
        f"Baseline: <code>{escape_html(baseline.path)}</code>; candidate: <code>{escape_html(candidate.path)}</code>. "
        f"{escape_html(method)}.</p>" + table + "".join(changed) + "</section>"
    )


def _asset(name: str) -> str:
    return resources.files("ragmeter.report").joinpath("templates", name).read_text(encoding="utf-8")


def render_gate_banner(lines: list[str], passed: bool) -> str:
    """The gate's verdict at the top of the page (:func:`ragmeter.gate.banner`'s lines: the verdict,
    then one per failed check with its statistic, threshold and interval); '' with no gate."""
    if not lines:
        return ""
    state = "pass" if passed else "fail"
    items = "".join(f"<li>{escape_html(line)}</li>" for line in lines[1:])
    return (f'<section id="gate" class="gate-banner {state}" data-state="{state}">'
            f'<p class="verdict">{escape_html(lines[0])}</p>' + (f"<ul>{items}</ul>" if items else "") + "</section>")


def render_page(*, title: str, subtitle: str, run_info_html: str, diagnosis_html: str, metrics_html: str,
                comparison_html: str, payload: dict[str, Any], samples_note: str = "", gate_html: str = "") -> str:
    """Assemble the page from its parts (already-escaped HTML) and the payload (embedded as JSON)."""
    script, style = _asset("report.js"), _asset("report.css")
    page = Template(_asset("report.html"))
    return page.substitute(
        csp=escape_html(content_security_policy(script, style)),
        title=escape_html(title),
        subtitle=escape_html(subtitle),
        style=style,
        run_info=run_info_html,
        diagnosis=diagnosis_html,
        gate=gate_html,
        metrics=metrics_html,
        comparison=comparison_html,
        samples_note=samples_note,
        data=embed_json(payload),
        script=script,
    )
