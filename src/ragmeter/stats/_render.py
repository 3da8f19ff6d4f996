"""Rich tables and Markdown for the statistics reports (compare, calibrate, diagnose)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from rich.console import Group
from rich.table import Table
from rich.text import Text

from ..run_names import spec_of

if TYPE_CHECKING:
    from .calibrate import Calibration
    from .compare import Comparison, MultiComparison
    from .diagnose import Diagnosis


def num(v: Any, digits: int = 4) -> str:
    """A number for display: ``n/a`` for None, fixed digits otherwise."""
    if v is None:
        return "n/a"
    if isinstance(v, bool):
        return str(v)
    if isinstance(v, int):
        return str(v)
    return f"{v:.{digits}f}"


def score3(v: float | None) -> str:
    """A mean or bound with three decimals, ``n/a`` for None."""
    return "n/a" if v is None else f"{v:.3f}"


#: Marks of a run's cell in the N-run table: significantly better / worse than the first run, or
#: (for a metric whose direction ragmeter does not know) significantly higher / lower.
MARKS = {"better": "▲", "worse": "▼", "higher": "↑", "lower": "↓"}


def pval(p: float | None) -> str:
    """A p-value for display (``<1e-4`` under 1e-4)."""
    if p is None:
        return "n/a"
    return "<1e-4" if p < 1e-4 else f"{p:.4f}"


def ci(c: list[float] | None, digits: int = 4) -> str:
    """``[lo, hi]`` for display."""
    return "n/a" if not c else f"[{c[0]:.{digits}f}, {c[1]:.{digits}f}]"


def signed(v: float | None, digits: int = 4) -> str:
    """A signed number for display."""
    return "n/a" if v is None else f"{v:+.{digits}f}"


def _ids(block: dict[str, Any], max_ids: int) -> str:
    ids = block["ids"][:max_ids]
    more = block["count"] - len(ids)
    return ", ".join(f"`{i}`" for i in ids) + (f" (+{more} more)" if more > 0 else "")


def _effect(row: dict[str, Any]) -> str:
    e = row.get("effect") or {}
    parts = []
    if e.get("cohens_dz") is not None:
        parts.append(f"d_z={e['cohens_dz']:.2f}")
    if "b_better" in e:
        orat = "inf" if e.get("odds_ratio") is None and e["b_better"] else num(e.get("odds_ratio"), 2)
        parts.append(f"B>A {e['b_better']}, A>B {e['a_better']}, OR={orat}")
    return "; ".join(parts) or "n/a"


#: Pipeline order of the stages in :func:`what_changed` (registry roles; None: a metric ragmeter has no stage for).
STAGE_ORDER = ("retrieval", "context", "answer", None)


def what_changed(rows: list[dict[str, Any]]) -> list[tuple[str, str]]:
    """What a comparison says first: ``(kind, line)`` pairs, the significant regressions (kind
    ``"worse"``), then the improvements (``"better"``), then changes of a metric whose direction
    ragmeter does not know (``"changed"``), each with its stage, Δ, interval and adjusted p; then
    one ``"none"`` line naming the metrics with no significant change.

    ``rows``: :meth:`~ragmeter.stats.Comparison.to_dict`'s ``metrics`` (``metric``, ``diff``,
    ``ci``, ``p_adjusted``, ``significant``, ``higher_is_better``; Δ is run B minus run A).
    Within a kind, stages in pipeline order, then the largest ``|Δ|`` first.

    >>> for kind, line in what_changed([
    ...         {"metric": "recall@5", "diff": -0.33, "ci": [-0.41, -0.25], "p_adjusted": 0.0002,
    ...          "significant": True, "higher_is_better": True},
    ...         {"metric": "mrr", "diff": 0.01, "ci": [-0.02, 0.04], "p_adjusted": 0.6,
    ...          "significant": False, "higher_is_better": True}]):
    ...     print(kind, "|", line)
    worse | retrieval: recall@5 worse, Δ -0.330 [-0.410, -0.250], adjusted p 0.0002
    none | No significant change: mrr.
    """
    def stage(metric: str) -> str | None:
        spec = spec_of(metric)
        return spec.role if spec is not None else None

    out: dict[str, list[tuple[int, float, str]]] = {"worse": [], "better": [], "changed": []}
    same: list[str] = []
    for r in rows:
        diff = r.get("diff")
        if not r.get("significant") or not diff:
            same.append(r["metric"])
            continue
        up = r.get("higher_is_better")
        kind = "changed" if up is None else "better" if (diff > 0) == up else "worse"
        word = ("higher" if diff > 0 else "lower") if kind == "changed" else kind
        st = stage(r["metric"])
        out[kind].append((STAGE_ORDER.index(st) if st in STAGE_ORDER else len(STAGE_ORDER), -abs(diff),
                          f"{st or 'other'}: {r['metric']} {word}, Δ {signed(diff, 3)} {ci(r.get('ci'), 3)}, "
                          f"adjusted p {pval(r.get('p_adjusted'))}"))
    lines = [(kind, text) for kind, found in out.items() for *_, text in sorted(found)]
    if same:
        lines.append(("none", f"No significant change: {', '.join(same)}."))
    return lines


def comparison_table(c: Comparison) -> Group:
    """The comparison as a rich table plus notes on unmatched samples."""
    t = Table(title=f"ragmeter compare: B - A (A: {c.a}, B: {c.b})")
    for col in ("metric", "n", "A", "B", "B - A", f"{c.settings['confidence']:.0%} CI", "test", "p",
                f"p ({c.settings['correction']})", "effect", "verdict"):
        wraps = col in ("test", "effect", "verdict", f"{c.settings['confidence']:.0%} CI")
        t.add_column(col, overflow="fold" if wraps else "ellipsis", no_wrap=not wraps)
    for r in c.metrics:
        style = "bold green" if r["verdict"] == "B better" else "bold red" if r["verdict"] == "A better" else None
        t.add_row(r["metric"], str(r["n_pairs"]), num(r["mean_a"]), num(r["mean_b"]), signed(r["diff"]),
                  ci(r["ci"]), r["test"], pval(r["p_value"]), pval(r["p_adjusted"]), _effect(r),
                  Text(r["verdict"], style=style or ""))
    kind_style = {"worse": "bold red", "better": "bold green", "changed": "bold", "none": ""}
    head = [Text(line, style=kind_style[kind]) for kind, line in what_changed(c.metrics)]
    return Group(*head, t, *[Text(line) for line in _notes(c, 5, md=False)])


def _notes(c: Comparison, max_ids: int, md: bool) -> list[str]:
    s = c.samples
    lines = [f"Samples: A {s['a']}, B {s['b']}, matched by id {s['matched']}."]
    for side, label in (("only_in_a", "A"), ("only_in_b", "B")):
        if s[side]["count"]:
            lines.append(f"{s[side]['count']} sample(s) only in {label}: {_ids(s[side], max_ids)}")
    for r in c.metrics:
        for side, label in (("scored_only_in_a", "A"), ("scored_only_in_b", "B")):
            if r[side]["count"]:
                lines.append(f"{r['metric']}: {r[side]['count']} sample(s) scored only in {label} "
                             f"(not compared): {_ids(r[side], max_ids)}")
        if r["scored_in_neither"]:
            lines.append(f"{r['metric']}: {r['scored_in_neither']} matched sample(s) scored in neither run")
        if r.get("note"):
            lines.append(f"{r['metric']}: {r['note']}")
    if c.metrics_only_in_a:
        lines.append(f"Metrics only in A (not compared): {', '.join(c.metrics_only_in_a)}")
    if c.metrics_only_in_b:
        lines.append(f"Metrics only in B (not compared): {', '.join(c.metrics_only_in_b)}")
    if not md:
        lines = [line.replace("`", "") for line in lines]
    return lines


def comparison_markdown(c: Comparison, max_ids: int = 10) -> str:
    """The comparison as Markdown (a PR comment)."""
    st = c.settings
    out = ["### ragmeter compare: B vs A", ""]
    out += [f"- {line}" for _, line in what_changed(c.metrics)] + ["", f"A: `{c.a}`, B: `{c.b}`", ""]
    out += [
           f"| metric | n | A | B | B - A | {st['confidence']:.0%} CI | test | p | p ({st['correction']}) "
           "| effect | verdict |",
           "|---|---:|---:|---:|---:|---|---|---:|---:|---|---|"]
    for r in c.metrics:
        verdict = f"**{r['verdict']}**" if r["significant"] else r["verdict"]
        out.append(f"| `{r['metric']}` | {r['n_pairs']} | {num(r['mean_a'])} | {num(r['mean_b'])} | "
                   f"{signed(r['diff'])} | {ci(r['ci'])} | {r['test']} | {pval(r['p_value'])} | "
                   f"{pval(r['p_adjusted'])} | {_effect(r)} | {verdict} |")
    out.append("")
    out.extend(f"- {line}" for line in _notes(c, max_ids, md=True))
    out.append("")
    out.append(f"<sub>Paired on sample id; CI: paired bootstrap ({st['ci_method']}, {st['n_bootstrap']} resamples); "
               f"p: two-sided, seed {st['seed']}, {st['n_resamples']} permutation resamples when not exact; "
               f"significance: adjusted p < {st['alpha']}.</sub>")
    return "\n".join(out) + "\n"


#: Readable names of the paired tests (``TestResult.method``).
TEST_NAMES = {
    "permutation-exact": "paired sign-flip permutation test (exact)",
    "permutation-mc": "paired sign-flip permutation test (Monte Carlo)",
    "t-test": "paired t-test",
    "mcnemar-exact": "McNemar's test (exact binomial)",
    "mcnemar-chi2": "McNemar's test (chi-square)",
}
#: LaTeX for the marks of :data:`ragmeter.stats.compare.MARKS` (plain LaTeX, no package).
LATEX_MARKS = {"better": r"$^{\bigtriangleup}$", "worse": r"$^{\bigtriangledown}$",
               "higher": r"$^{\uparrow}$", "lower": r"$^{\downarrow}$"}


def _tests_sentence(mc: MultiComparison) -> str:
    """Which paired test each metric used, in words (one phrase when every metric used the same)."""
    used = {m: ", ".join(TEST_NAMES.get(t, t) for t in tests) for m, tests in mc.tests_used().items()}
    kinds = set(used.values())
    if len(kinds) == 1:
        return f"Test: {kinds.pop()}, two-sided, for every metric."
    return "Tests (two-sided): " + "; ".join(f"{m}: {t}" for m, t in used.items()) + "."


def _legend(mc: MultiComparison) -> str:
    """What the marks and the bold numbers mean, and how the p-values were corrected."""
    st = mc.settings
    corr = (f"Holm-adjusted p < {st['alpha']} over the {st['n_comparisons']} comparisons of this table"
            if st["correction"] == "holm" else f"p < {st['alpha']}, not corrected for multiple comparisons")
    return (f"▲ / ▼: significantly better / worse than the first run, {mc.labels[0]} (paired by sample id; "
            f"{corr}); ↑ / ↓: significantly higher / lower for a metric of unknown "
            "direction. Bold: best mean of the column. Means are over each run's own scored samples.")


def _multi_cells(mc: MultiComparison, digits: int) -> list[list[tuple[str, str | None, bool]]]:
    """Per run, per metric: (formatted mean, mark key or None, is the column's best)."""
    best = {m: mc.best(m) for m in mc.metrics}
    return [[(num(cells[m]["mean"], digits), cells[m].get("mark"), best[m] == k) for m in mc.metrics]
            for k, cells in enumerate(mc.cells)]


def multi_table(mc: MultiComparison, digits: int = 4) -> Group:
    """The N-run table as rich: a row per run, a column per metric, marks against the first run."""
    t = Table(title=f"ragmeter compare: {len(mc.labels)} runs against {mc.labels[0]}")
    t.add_column("run", overflow="fold")
    for m in mc.metrics:
        t.add_column(m, justify="right", no_wrap=True)
    for label, row in zip(mc.labels, _multi_cells(mc, digits), strict=True):
        cells = []
        for value, mark, best in row:
            style = "green" if mark in ("better", "higher") else "red" if mark in ("worse", "lower") else ""
            text = Text(value, style=("bold " if best else "") + style)
            if mark:
                text.append(" " + MARKS[mark], style=style)
            cells.append(text)
        t.add_row(label, *cells)
    return Group(t, Text(_legend(mc)), Text(_tests_sentence(mc)), *[Text(line) for line in _multi_notes(mc, 5, False)])


def _multi_notes(mc: MultiComparison, max_ids: int, md: bool) -> list[str]:
    """Sample counts per run, then each comparison's notes (unmatched samples, ...) prefixed with its runs."""
    q = "`" if md else ""
    counts = [f"{q}{mc.labels[0]}{q} {mc.comparisons[0].samples['a']:,}"]
    counts += [f"{q}{c.b}{q} {c.samples['b']:,} ({c.samples['matched']:,} matched)" for c in mc.comparisons]
    lines = ["Samples: " + "; ".join(counts) + "."]
    for c in mc.comparisons:
        lines += [f"{q}{c.b}{q} vs {q}{c.a}{q}: {line}" for line in _notes(c, max_ids, md)[1:]]
    return lines


def multi_markdown(mc: MultiComparison, digits: int = 4) -> str:
    """The N-run table as GitHub-flavoured Markdown."""
    out = [f"### ragmeter compare: {len(mc.labels)} runs against the first", "", f"First run: `{mc.labels[0]}`", "",
           "| run | " + " | ".join(f"`{m}`" for m in mc.metrics) + " |",
           "|---|" + "---:|" * len(mc.metrics)]
    for label, row in zip(mc.labels, _multi_cells(mc, digits), strict=True):
        cells = [(f"**{v}**" if best else v) + (f" {MARKS[mark]}" if mark else "") for v, mark, best in row]
        out.append(f"| `{label}` | " + " | ".join(cells) + " |")
    out += ["", _legend(mc), "", _tests_sentence(mc), ""]
    out.extend(f"- {line}" for line in _multi_notes(mc, 10, True))
    return "\n".join(out).rstrip("\n") + "\n"


_LATEX_SPECIAL = {"\\": r"\textbackslash{}", "&": r"\&", "%": r"\%", "$": r"\$", "#": r"\#", "_": r"\_",
                  "{": r"\{", "}": r"\}", "~": r"\textasciitilde{}", "^": r"\textasciicircum{}"}


def latex_escape(text: str) -> str:
    r"""``text`` with LaTeX's special characters escaped.

    >>> latex_escape("recall@5 & 10% of $x_1$")
    'recall@5 \\& 10\\% of \\$x\\_1\\$'
    """
    return "".join(_LATEX_SPECIAL.get(ch, ch) for ch in text)


def multi_latex(mc: MultiComparison, digits: int = 4) -> str:
    """The N-run table as a LaTeX ``table`` with a ``tabular`` (``l`` then one ``r`` per metric).

    Plain LaTeX: no package is needed (``\\hline`` rules, ``\\bigtriangleup`` marks).
    """
    legend = (_legend(mc).replace("▲ / ▼", "BETTER / WORSE").replace("↑ / ↓", "HIGHER / LOWER"))
    legend = latex_escape(legend)
    for word, key in (("BETTER", "better"), ("WORSE", "worse"), ("HIGHER", "higher"), ("LOWER", "lower")):
        legend = legend.replace(word, LATEX_MARKS[key])
    out = ["% ragmeter compare: paste into a LaTeX document (no package needed)",
           r"\begin{table}[htbp]", r"\centering",
           r"\caption{" + legend + " " + latex_escape(_tests_sentence(mc)) + "}",
           r"\label{tab:ragmeter-compare}",
           r"\begin{tabular}{l" + "r" * len(mc.metrics) + "}", r"\hline",
           "Run & " + " & ".join(latex_escape(m) for m in mc.metrics) + r" \\", r"\hline"]
    for label, row in zip(mc.labels, _multi_cells(mc, digits), strict=True):
        cells = [(r"\textbf{" + v + "}" if best else v) + (LATEX_MARKS[mark] if mark else "")
                 for v, mark, best in row]
        out.append(latex_escape(label) + " & " + " & ".join(cells) + r" \\")
    out += [r"\hline", r"\end{tabular}", r"\end{table}"]
    return "\n".join(out) + "\n"


def _intervals_rows(m: str, rep: dict[str, Any]) -> list[tuple[str, ...]]:
    iv = rep["intervals"]
    rows: list[tuple[str, ...]] = []
    for key, label in (("labels_only", "labels only"), ("judge_only", "judge only"), ("ppi", "PPI++")):
        d = iv[key]
        extra = f"lambda={d['lambda']:.3f}" if key == "ppi" else ""
        if key == "judge_only" and rep["judge_bias"] is not None:
            extra = f"bias on labelled {rep['judge_bias']:+.4f}"
        rows.append((m, label, str(d["n"]), num(d["estimate"]), ci(d["ci"]),
                     num(None if d["ci"] is None else d["ci"][1] - d["ci"][0]), extra))
    return rows


def _agreement_text(a: dict[str, Any] | None) -> str:
    if a is None:
        return "no labelled sample"
    if a["label_kind"] == "binary":
        txt = f"accuracy {num(a['accuracy'], 3)}, kappa {num(a['cohen_kappa'], 3)} (judge >= {a['threshold']:g})"
    else:
        txt = (f"Spearman {num(a['spearman'], 3)}, Kendall {num(a['kendall'], 3)}, MAE {num(a['mae'], 3)}, "
               f"bias {signed(a['bias'], 3)}")
    if a.get("ece"):
        txt += f", ECE {num(a['ece']['ece'], 3)}"
    return txt


def _abstention_text(rep: dict[str, Any]) -> str:
    ab = rep.get("abstention")
    if not ab:
        return rep.get("abstention_note", "n/a")
    if ab["threshold"] is None:
        return ab["note"]
    rate = ab["answer_rate_all"] if ab["answer_rate_all"] is not None else ab["answer_rate"]
    sign = "<=" if ab.get("answer_when") == "score <= threshold" else ">="
    return (f"answer when score {sign} {ab['threshold']:g}: P(answered and unacceptable) <= {ab['alpha']:g} "
            f"guaranteed; answer rate {rate:.1%}")


def calibration_rich(c: Calibration) -> Group:
    """Calibration report as rich tables."""
    t = Table(title="ragmeter calibrate: mean human label over the run")
    for col in ("metric", "interval", "n", "estimate", f"{c.settings['confidence']:.0%} CI", "width", "note"):
        t.add_column(col, overflow="fold")
    parts: list[Any] = [t]
    for m, rep in c.metrics.items():
        for row in _intervals_rows(m, rep):
            t.add_row(*row)
    for m, rep in c.metrics.items():
        parts.append(Text(f"{m}: {rep['n_labelled']} labelled, {rep['n_unlabelled']} unlabelled; "
                          f"agreement: {_agreement_text(rep['agreement'])}"))
        parts.append(Text(f"{m}: abstention: {_abstention_text(rep)}"))
        if rep["labels_without_score"]["count"]:
            parts.append(Text(f"{m}: {rep['labels_without_score']['count']} label(s) without a judge score "
                              f"(not used): {_ids(rep['labels_without_score'], 5).replace('`', '')}"))
    if c.metrics_without_scores:
        parts.append(Text(f"labels for metrics the scores lack: {', '.join(c.metrics_without_scores)}"))
    return Group(*parts)


def calibration_markdown(c: Calibration) -> str:
    """Calibration report as Markdown."""
    out = ["### ragmeter calibrate", "",
           f"| metric | interval | n | estimate | {c.settings['confidence']:.0%} CI | width | note |",
           "|---|---|---:|---:|---|---:|---|"]
    for m, rep in c.metrics.items():
        for row in _intervals_rows(m, rep):
            out.append("| " + " | ".join((f"`{row[0]}`", *row[1:])) + " |")
    out.append("")
    for m, rep in c.metrics.items():
        out.append(f"- `{m}`: {rep['n_labelled']} labelled, {rep['n_unlabelled']} unlabelled; "
                   f"{_agreement_text(rep['agreement'])}")
        out.append(f"- `{m}` abstention: {_abstention_text(rep)}")
        if rep["labels_without_score"]["count"]:
            out.append(f"- `{m}`: {rep['labels_without_score']['count']} label(s) without a judge score: "
                       f"{_ids(rep['labels_without_score'], 10)}")
    return "\n".join(out) + "\n"


#: What the report and the Markdown say before the low metrics when no rule fired.
TENTATIVE_LEAD = ("No failure signature fired, but some metrics are low against their gate, their reference "
                  "level or the baseline: tentative findings, a stage to look at with no signature that says why")


def tentative_sentence(low: dict[str, Any]) -> str:
    """One low metric (an entry of :func:`ragmeter.stats.diagnose.clearly_low` or of
    :func:`~ragmeter.stats.diagnose.regressions`) as a sentence with its evidence.

    >>> tentative_sentence({"metric": "recall@5", "stage": "retrieval", "mean": 0.31, "ci": [0.28, 0.34],
    ...                     "threshold": 0.5, "basis": "reference level", "higher_is_better": True})
    'recall@5 is clearly low: 0.310 [0.280, 0.340], below its reference level 0.5 (retrieval stage)'
    >>> tentative_sentence({"metric": "hallucination_rate", "stage": "answer", "mean": 0.9, "ci": [0.8, 1.0],
    ...                     "threshold": 0.2, "basis": "gate", "higher_is_better": False})
    "hallucination_rate is clearly high: 0.900 [0.800, 1.000], above the gate's 0.2 (answer stage)"
    >>> tentative_sentence({"metric": "recall@5", "stage": "retrieval", "mean": 0.45, "basis": "baseline",
    ...                     "higher_is_better": True, "baseline_mean": 0.78, "diff": -0.33,
    ...                     "diff_ci": [-0.41, -0.25], "p_adjusted": 0.0002})[:80]
    'recall@5 is lower than the baseline: 0.450 vs 0.780, Δ -0.330 [-0.410, -0.250], '
    """
    up = low.get("higher_is_better", True)
    stage = f" ({low['stage']} stage)" if low.get("stage") else ""
    if low.get("basis") == "baseline":
        return (f"{low['metric']} is {'lower' if up else 'higher'} than the baseline: {num(low['mean'], 3)} vs "
                f"{num(low['baseline_mean'], 3)}, Δ {signed(low['diff'], 3)} {ci(low.get('diff_ci'), 3)}, "
                f"adjusted p {pval(low.get('p_adjusted'))}{stage}")
    what = "the gate's " if low.get("basis") == "gate" else "its reference level "
    return (f"{low['metric']} is clearly {'low' if up else 'high'}: {num(low['mean'], 3)} "
            f"{ci(low.get('ci'), 3)}, {'below' if up else 'above'} {what}{low['threshold']:g}{stage}")


def no_finding_sentence(d: dict[str, Any]) -> str:
    """The one line of a diagnosis (:meth:`~ragmeter.stats.Diagnosis.to_dict`) with no finding and no low metric.

    >>> no_finding_sentence({"findings": [], "not_fired": [{}] * 4, "baseline": None})
    'No finding: none of the 4 failure signatures fired and no metric is low against its gate or reference level.'
    """
    n = len(d.get("findings") or []) + len(d.get("not_fired") or [])
    against = "its gate, its reference level or the baseline" if d.get("baseline") else "its gate or reference level"
    return f"No finding: none of the {n} failure signatures fired and no metric is low against {against}."


def diagnosis_headline(d: dict[str, Any]) -> str:
    """A diagnosis (:meth:`~ragmeter.stats.Diagnosis.to_dict`) in one line: its strongest finding,
    else its first low metric (:func:`tentative_sentence`), else :func:`no_finding_sentence`.

    >>> diagnosis_headline({"findings": [], "not_fired": [{}] * 4, "low_metrics": [
    ...     {"metric": "recall@5", "stage": "retrieval", "mean": 0.31, "ci": [0.28, 0.34], "threshold": 0.5,
    ...      "basis": "reference level", "higher_is_better": True}]})
    'tentative: recall@5 is clearly low: 0.310 [0.280, 0.340], below its reference level 0.5 (retrieval stage)'
    """
    findings, low = d.get("findings") or [], d.get("low_metrics") or []
    if findings:
        f = findings[0]
        more = f" (+{len(findings) - 1} more)" if len(findings) > 1 else ""
        return f"{f['strength']}: {f['stage']}: {f['problem']}; fix to try: {f['fix']}{more}"
    if low:
        more = f" (+{len(low) - 1} more)" if len(low) > 1 else ""
        return f"tentative: {tentative_sentence(low[0])}{more}"
    return no_finding_sentence(d)


def _evidence(e: dict[str, Any]) -> str:
    mark = "confirmed" if e["confirmed"] else ("holds (CI crosses threshold)" if e["holds"] else "fails")
    return f"{e['metric']} = {num(e['mean'], 3)} {ci(e['ci'], 3)} {e['condition']}: {mark}"


def _head(d: Diagnosis) -> dict[str, Any]:
    """What :func:`no_finding_sentence` reads of a Diagnosis."""
    return {"findings": d.findings, "not_fired": d.not_fired, "baseline": d.baseline}


def diagnosis_rich(d: Diagnosis) -> Group:
    """Diagnosis as rich tables."""
    parts: list[Any] = []
    if not d.findings and d.low_metrics:
        parts.append(Text(f"{TENTATIVE_LEAD}:", style="bold yellow"))
        parts.extend(Text(f"- [tentative] {tentative_sentence(low)}") for low in d.low_metrics)
    elif not d.findings:
        parts.append(Text(no_finding_sentence(_head(d)), style="bold green"))
    for f in d.findings:
        t = Table(title=f"[{f['strength']}] {f['stage']}: {f['problem']}", show_header=False)
        t.add_column("what", style="bold")
        t.add_column("detail", overflow="fold")
        t.add_row("fix to try", f["fix"])
        for e in f["evidence"]:
            t.add_row("evidence", _evidence(e))
        t.add_row("samples", f"{f['samples_matching']} sample(s) match the signature on their own scores")
        if f["missing_metrics"]:
            t.add_row("missing", ", ".join(f["missing_metrics"]))
        for s in f["substitutions"]:
            t.add_row("note", s)
        parts.append(t)
    for nf in d.not_fired:
        parts.append(Text(f"not fired: {nf['rule']}: {nf['reason']}", style="dim"))
    if d.position and "buckets" in d.position:
        parts.append(_position_table(d.position))
    return Group(*parts)


def _position_table(p: dict[str, Any]) -> Group:
    t = Table(title=f"{p['metric']} by rank of the first relevant chunk")
    for col in ("first relevant rank", "n", "mean", "95% CI"):
        t.add_column(col)
    for b in p["buckets"]:
        if b["n"]:
            t.add_row(b["bucket"], str(b["n"]), num(b["mean"], 3), ci(b["ci"], 3))
    return Group(t, Text(f"Spearman rho(rank, score) = {num(p['spearman_rho'], 3)} (p {pval(p['spearman_p'])}); "
                         f"lost in the middle: {'yes' if p['lost_in_the_middle'] else 'no'}"))


def diagnosis_markdown(d: Diagnosis) -> str:
    """Diagnosis as Markdown."""
    out = ["### ragmeter diagnose", ""]
    if not d.findings and d.low_metrics:
        out += [f"{TENTATIVE_LEAD}:", ""] + [f"- [tentative] {tentative_sentence(low)}" for low in d.low_metrics]
        out.append("")
    elif not d.findings:
        out += [no_finding_sentence(_head(d)), ""]
    for f in d.findings:
        out.append(f"#### [{f['strength']}] {f['stage']}: {f['problem']}")
        out.append(f"- **fix to try**: {f['fix']}")
        out.extend(f"- evidence: {_evidence(e)}" for e in f["evidence"])
        out.append(f"- {f['samples_matching']} sample(s) match on their own scores")
        if f["missing_metrics"]:
            out.append(f"- missing metrics: {', '.join(f['missing_metrics'])}")
        out.extend(f"- note: {s}" for s in f["substitutions"])
        out.append("")
    for nf in d.not_fired:
        out.append(f"- not fired: `{nf['rule']}`: {nf['reason']}")
    p = d.position
    if p and "buckets" in p:
        out += ["", f"#### `{p['metric']}` by rank of the first relevant chunk", "",
                "| first relevant rank | n | mean | 95% CI |", "|---|---:|---:|---|"]
        out.extend(f"| {b['bucket']} | {b['n']} | {num(b['mean'], 3)} | {ci(b['ci'], 3)} |"
                   for b in p["buckets"] if b["n"])
        out.append("")
        out.append(f"Spearman rho(rank, score) = {num(p['spearman_rho'], 3)} (p {pval(p['spearman_p'])}); "
                   f"lost in the middle: {'yes' if p['lost_in_the_middle'] else 'no'}")
    return "\n".join(out) + "\n"


