"""compare_many(): N runs against the first, Holm over the whole table, marks, Markdown/LaTeX/JSON, the CLI."""

from __future__ import annotations

import doctest
import json
import re

import numpy as np
import pytest
from click.testing import CliRunner

import ragmeter.stats._render as render
from ragmeter.cli import main
from ragmeter.errors import InvalidParameterError
from ragmeter.stats import compare, compare_many, holm
from ragmeter.stats.compare import paired_scores


def test_holm_golden_values_by_hand():
    # sorted: .005 (x3 = .015), .02 (x2 = .04), .04 (x1 = .04); None is not counted in m
    assert holm([0.02, 0.005, 0.04, None]) == pytest.approx([0.04, 0.015, 0.04, None])
    # step-down monotonicity: .011 x 2 = .022 < .03 (the previous step), so it gets .03
    assert holm([0.01, 0.011, 0.5]) == pytest.approx([0.03, 0.03, 0.5])
    assert holm([0.6, 0.6]) == pytest.approx([1.0, 1.0])  # capped at 1


@pytest.fixture
def small_three(make_run):
    """4 samples, metrics x and y. run2 - base: x d = .3 .2 .4 .1, y d = .1 .1 .1 -.1; run3 = base."""
    base = {"q1": {"x": 0.2, "y": 0.5}, "q2": {"x": 0.4, "y": 0.5}, "q3": {"x": 0.5, "y": 0.5},
            "q4": {"x": 0.3, "y": 0.5}}
    run2 = {"q1": {"x": 0.5, "y": 0.6}, "q2": {"x": 0.6, "y": 0.6}, "q3": {"x": 0.9, "y": 0.6},
            "q4": {"x": 0.4, "y": 0.4}}
    return make_run("base", base), make_run("run2", run2), make_run("run3", {k: dict(v) for k, v in base.items()})


def test_holm_family_is_the_whole_table(small_three):
    mc = compare_many(list(small_three), labels=["base", "run2", "run3"])
    cells = mc.cells
    # exact sign-flip p by hand: x: |T| >= .25 only for ++++ / ---- -> 2/16 = .125;
    # y: T = (sum of four +-.1) / 4, |T| >= .05 unless the sum is 0 (C(4,2) = 6 patterns) -> 10/16 = .625;
    # run3 = base: every difference 0 -> p = 1
    assert cells[1]["x"]["p_value"] == pytest.approx(0.125)
    assert cells[1]["y"]["p_value"] == pytest.approx(0.625)
    assert cells[2]["x"]["p_value"] == 1.0 and cells[2]["y"]["p_value"] == 1.0
    # Holm over the 4: .125 x 4 = .5; .625 x 3 -> 1; then 1, 1
    assert cells[1]["x"]["p_adjusted"] == pytest.approx(0.5)
    assert cells[1]["y"]["p_adjusted"] == 1.0 and cells[2]["x"]["p_adjusted"] == 1.0
    assert mc.settings["n_comparisons"] == 4
    # the pairwise comparisons carry the table-wide adjustment too
    assert mc.comparisons[0].metrics[0]["p_adjusted"] == pytest.approx(0.5)
    assert cells[0]["x"] == {"mean": pytest.approx(0.35), "n": 4}  # the baseline row: its own mean only
    assert cells[1]["x"]["diff"] == pytest.approx(0.25)
    assert all(cells[k][m]["mark"] is None for k in (1, 2) for m in ("x", "y"))


def test_two_runs_equal_plain_compare(small_three):
    base, run2, _ = small_three
    mc = compare_many([base, run2])
    assert mc.comparisons[0].to_dict() == compare(base, run2).to_dict()


@pytest.fixture
def three_runs(make_run):
    """30 samples: 'better' adds .3 to ndcg@5 (capped at 1) and hits every sample; 'equal' is the
    baseline again; custom_metric (direction unknown to ragmeter) is higher in 'better'."""
    rng = np.random.default_rng(1)
    base = {f"q{i:02d}": {"ndcg@5": round(float(rng.uniform(0, 0.6)), 4), "hit_rate@5": int(i % 2),
                          "custom_metric": round(float(rng.uniform(0, 1)), 4)} for i in range(30)}
    better = {k: {"ndcg@5": v["ndcg@5"] + 0.3, "hit_rate@5": 1, "custom_metric": v["custom_metric"] + 1.0}
              for k, v in base.items()}
    return make_run("base", base), make_run("better", better), make_run("equal", {k: dict(v) for k, v in base.items()})


def test_clearly_better_run_is_marked_and_equal_run_is_not(three_runs):
    mc = compare_many(list(three_runs), labels=["base", "better", "equal"])
    assert mc.metrics == ["ndcg@5", "hit_rate@5", "custom_metric"]
    better, equal = mc.cells[1], mc.cells[2]
    assert better["ndcg@5"]["mark"] == "better" and better["ndcg@5"]["diff"] == pytest.approx(0.3)
    # McNemar: 15 discordant pairs, all for 'better' -> exact p = 2 / 2**15, x 6 (Holm) still tiny
    assert better["hit_rate@5"]["test"] == "mcnemar-exact"
    assert better["hit_rate@5"]["p_value"] == pytest.approx(2 / 2**15)
    assert better["hit_rate@5"]["mark"] == "better"
    assert better["custom_metric"]["mark"] == "higher"  # direction unknown: "higher", not "better"
    assert all(equal[m]["mark"] is None and equal[m]["p_value"] == 1.0 for m in mc.metrics)
    assert mc.best("ndcg@5") == 1 and mc.best("hit_rate@5") == 1


def test_markdown_has_a_row_per_run_and_a_column_per_metric(three_runs):
    md = compare_many(list(three_runs), labels=["base", "better", "equal"]).to_markdown()
    table = [line for line in md.splitlines() if line.startswith("|")]
    assert len(table) == 2 + 3  # header, rule, 3 runs
    assert all(line.count("|") == 5 for line in table)  # run + 3 metrics
    better = table[3]
    assert better.startswith("| `better` |") and better.count("▲") == 2 and "↑" in better
    assert "▲" not in table[4] and "↑" not in table[4]  # the equal run
    assert "Holm-adjusted p < 0.05 over the 6 comparisons" in md
    assert "McNemar's test (exact binomial)" in md  # the test used is stated


def _latex_rows(tex: str) -> tuple[str, list[list[str]]]:
    spec = re.search(r"\\begin\{tabular\}\{([^}]*)\}", tex)
    assert spec, tex
    body = tex[spec.end():tex.index(r"\end{tabular}")]
    rows = [r.strip() for r in body.replace(r"\hline", "").split(r"\\") if r.strip()]
    return spec.group(1), [re.split(r"(?<!\\)&", r) for r in rows]


def test_latex_is_a_tabular_with_the_right_columns(three_runs):
    tex = compare_many(list(three_runs), labels=["base", "better", "equal"]).to_latex()
    colspec, rows = _latex_rows(tex)
    assert colspec == "lrrr"
    assert len(rows) == 4 and all(len(r) == 4 for r in rows)  # header + 3 runs, 4 cells each
    assert [c.strip() for c in rows[0]] == ["Run", "ndcg@5", r"hit\_rate@5", r"custom\_metric"]
    assert rows[2][1].strip().startswith(r"\textbf{") and rows[2][1].strip().endswith(r"}$^{\bigtriangleup}$")
    assert "bigtriangle" not in "".join(rows[3])
    for env in ("table", "tabular"):
        assert tex.count(rf"\begin{{{env}}}") == tex.count(rf"\end{{{env}}}") == 1
    depth = 0
    for ch in re.sub(r"\\[{}]", "", tex):  # braces balance once escaped braces are removed
        depth += {"{": 1, "}": -1}.get(ch, 0)
        assert depth >= 0
    assert depth == 0


def test_latex_escapes_labels():
    assert render.latex_escape("run_1 & 50% #2") == r"run\_1 \& 50\% \#2"
    assert doctest.testmod(render).failed == 0


def test_metrics_must_be_common_to_every_run(three_runs, make_run):
    extra = make_run("other", {"q00": {"ndcg@5": 0.1}})
    with pytest.raises(InvalidParameterError, match="every run has"):
        compare_many([*three_runs, extra], metrics=["hit_rate@5"])
    with pytest.raises(InvalidParameterError, match="at least two runs"):
        compare_many([three_runs[0]])


def test_cli_three_runs_json_markdown_latex(three_runs, tmp_path):
    base, better, equal = (str(p) for p in three_runs)
    tex, md = tmp_path / "t.tex", tmp_path / "t.md"
    res = CliRunner().invoke(main, ["compare", base, better, equal, "--format", "json", "--latex", str(tex),
                                    "--markdown", str(md), "--bootstrap", "200"])
    assert res.exit_code == 0, res.output
    data = json.loads(res.output)
    assert data["runs"] == [base, better, equal] and data["settings"]["n_comparisons"] == 6
    assert data["table"][1]["metrics"]["ndcg@5"]["mark"] == "better"
    assert data["table"][2]["metrics"]["ndcg@5"]["mark"] is None
    assert len(data["comparisons"]) == 2
    assert _latex_rows(tex.read_text())[0] == "lrrr"
    assert sum(line.count("▲") for line in md.read_text().splitlines() if line.startswith("|")) == 2
    res = CliRunner().invoke(main, ["compare", base, better, equal, "--format", "latex", "--bootstrap", "200"])
    assert res.exit_code == 0 and res.output.startswith("% ragmeter compare")
    res = CliRunner().invoke(main, ["compare", base, better, equal, "--bootstrap", "200"])
    assert res.exit_code == 0 and "3 runs against" in res.output and "▲" in res.output


def test_cli_one_run_is_a_usage_error(three_runs):
    res = CliRunner().invoke(main, ["compare", str(three_runs[0])])
    assert res.exit_code == 2 and "at least two run directories" in res.output


def test_paired_scores_are_the_pairs_compare_tests(make_run):
    a = make_run("a", {"q1": {"x": 0.1}, "q2": {"x": 0.2}, "q3": {"x": None}, "q4": {"x": 0.4}})
    b = make_run("b", {"q4": {"x": 0.9}, "q3": {"x": 0.5}, "q2": {"x": "error"}, "q1": {"x": 0.3}, "q5": {"x": 1.0}})
    ids, xa, xb = paired_scores(a, b, ["x"])["x"]
    # q2 errored in B, q3 undefined in A, q5 only in B: the pairs are q1 and q4, in A's order
    assert ids == ["q1", "q4"] and xa.tolist() == [0.1, 0.4] and xb.tolist() == [0.3, 0.9]
    assert compare(a, b).metrics[0]["n_pairs"] == 2
    with pytest.raises(InvalidParameterError, match="both runs have"):
        paired_scores(a, b, ["y"])


def test_cli_html_writes_the_comparison_report(three_runs, tmp_path):
    base, better, equal = (str(p) for p in three_runs)
    out = tmp_path / "cmp.html"
    res = CliRunner().invoke(main, ["compare", base, better, "--html", str(out), "--bootstrap", "200"])
    assert res.exit_code == 0, res.output
    page = out.read_text()
    assert '<section id="comparison-plots">' in page and page.count('class="forest-row') == 3
    res = CliRunner().invoke(main, ["compare", base, better, equal, "--html", str(out)])
    assert res.exit_code == 0, res.output  # three runs: the N-run comparison page
    assert '<section id="multi-comparison"><h2>Comparison of 3 runs</h2>' in out.read_text()
