"""compare(): pairing by id, reporting unmatched samples, tests, Holm, and the CLI outputs."""

from __future__ import annotations

import json

import numpy as np
import pytest
from click.testing import CliRunner
from scipy import stats

import ragmeter
from ragmeter.cli import main
from ragmeter.errors import InputError, InvalidParameterError
from ragmeter.stats import compare, holm


@pytest.fixture
def two_runs(make_run):
    # A and B share q1..q4; q0 only in A, q5 only in B.
    # "score": continuous; "hit": 0/1; "judge": q3 errored in B, q4 undefined in A
    a = make_run("a", {
        "q0": {"score": 0.1, "hit": 0, "judge": 0.5},
        "q1": {"score": 0.2, "hit": 0, "judge": 0.4},
        "q2": {"score": 0.4, "hit": 1, "judge": 0.6},
        "q3": {"score": 0.5, "hit": 0, "judge": 0.7},
        "q4": {"score": 0.3, "hit": 1, "judge": None},
        "only_a_metric": {"score": 0.3, "hit": 1, "judge": 0.1, "extra_a": 1.0},
    })
    b = make_run("b", {
        "q1": {"score": 0.5, "hit": 1, "judge": 0.6},
        "q2": {"score": 0.6, "hit": 1, "judge": 0.9},
        "q3": {"score": 0.9, "hit": 1, "judge": "error"},
        "q4": {"score": 0.4, "hit": 0, "judge": 0.8},
        "q5": {"score": 0.9, "hit": 1, "judge": 0.9},
    })
    return a, b


def test_pairs_by_id_and_reports_every_unmatched_sample(two_runs):
    a, b = two_runs
    c = compare(a, b)
    assert c.samples["matched"] == 4
    assert c.samples["only_in_a"] == {"count": 2, "ids": ["q0", "only_a_metric"]}
    assert c.samples["only_in_b"] == {"count": 1, "ids": ["q5"]}
    assert c.metrics_only_in_a == ["extra_a"] and c.metrics_only_in_b == []
    rows = {r["metric"]: r for r in c.metrics}
    judge = rows["judge"]
    # q3: scored in A only (error in B); q4: scored in B only (undefined in A)
    assert judge["scored_only_in_a"] == {"count": 1, "ids": ["q3"]}
    assert judge["scored_only_in_b"] == {"count": 1, "ids": ["q4"]}
    assert judge["n_pairs"] == 2


def test_hand_computed_differences_and_tests(two_runs):
    a, b = two_runs
    rows = {r["metric"]: r for r in compare(a, b).metrics}
    s = rows["score"]
    # pairs q1..q4: d = .3, .2, .4, .1; mean .25; exact sign flip: |T| >= .25 only for ++++ and ---- -> 2/16
    assert s["diff"] == pytest.approx(0.25)
    assert (s["mean_a"], s["mean_b"]) == pytest.approx((0.35, 0.6))
    assert s["test"] == "permutation-exact" and s["p_value"] == pytest.approx(0.125)
    # d_z = .25 / sd(.3, .2, .4, .1) = .25 / .129099 = 1.936492
    assert s["effect"]["cohens_dz"] == pytest.approx(1.936492, abs=1e-6)
    h = rows["hit"]
    # A: 0 1 0 1, B: 1 1 1 0 -> n01 = 2 (q1, q3), n10 = 1 (q4): p = 2 * P(Bin(3, .5) <= 1) = 2 * 4/8 = 1
    assert h["test"] == "mcnemar-exact" and h["p_value"] == 1.0
    assert (h["effect"]["b_better"], h["effect"]["a_better"], h["effect"]["odds_ratio"]) == (2, 1, 2.0)
    # Holm across the three metrics
    raw = [r["p_value"] for r in compare(a, b).metrics]
    assert [r["p_adjusted"] for r in compare(a, b).metrics] == holm(raw)


def test_ttest_option_matches_scipy(two_runs):
    a, b = two_runs
    row = {r["metric"]: r for r in compare(a, b, test="t-test").metrics}["score"]
    ref = stats.ttest_rel([0.5, 0.6, 0.9, 0.4], [0.2, 0.4, 0.5, 0.3])
    assert row["test"] == "t-test" and row["p_value"] == pytest.approx(ref.pvalue)


def test_significant_difference_and_direction(make_run):
    rng = np.random.default_rng(0)
    base = rng.random(200)
    a = make_run("a", {f"q{i}": {"recall@5": float(v)} for i, v in enumerate(base)})
    b = make_run("b", {f"q{i}": {"recall@5": float(min(1, v + 0.1))} for i, v in enumerate(base)})
    row = compare(a, b).metrics[0]
    assert row["significant"] and row["verdict"] == "B better"  # recall: higher is better
    assert row["test"] == "permutation-mc" and row["p_value"] == pytest.approx(1 / 10_001)
    assert row["ci"][0] > 0
    again = compare(a, b).metrics[0]
    assert again == row  # seeded: reproducible
    big = compare(a, b, permutation_max_n=100).metrics[0]  # 200 pairs > 100: the t-test
    assert big["test"] == "t-test" and "permutation_max_n" in big["note"]
    assert compare(a, b, test="permutation", permutation_max_n=100).metrics[0]["test"] == "permutation-mc"


def test_api_with_run_results_and_validation(make_run):
    rows = [{"id": f"q{i}", "contexts": [{"id": "d1"}, {"id": "d2"}], "relevant": ["d2"]} for i in range(6)]
    ra = ragmeter.evaluate(rows, ["mrr"])
    rb = ragmeter.evaluate(rows, ["mrr"])
    c = compare(ra, rb)
    assert (c.a, c.b) == ("A", "B")
    assert c.metrics[0]["diff"] == 0.0 and c.metrics[0]["p_value"] == 1.0
    with pytest.raises(InvalidParameterError, match="metrics: expected metrics both runs have"):
        compare(ra, rb, metrics=["ndcg@5"])
    with pytest.raises(InvalidParameterError, match="test: expected one of"):
        compare(ra, rb, test="wilcoxon")
    dup = make_run("dup", {"q1": {"m": 1.0}})
    (dup / "results.jsonl").write_text((dup / "results.jsonl").read_text() * 2)
    with pytest.raises(InputError, match="duplicates"):
        compare(dup, dup)


def _cli(*args):
    return CliRunner().invoke(main, list(args), catch_exceptions=False)


def test_cli_json_markdown_and_table(two_runs, tmp_path):
    a, b = two_runs
    res = _cli("compare", str(a), str(b), "--format", "json")
    assert res.exit_code == 0, res.output
    data = json.loads(res.output)
    assert data["samples"]["only_in_b"]["ids"] == ["q5"]
    assert {r["metric"] for r in data["metrics"]} == {"score", "hit", "judge"}
    md = _cli("compare", str(a), str(b), "--format", "markdown").output
    assert "| `score` | 4 |" in md and "only in A" in md and "p (holm)" in md
    table = _cli("compare", str(a), str(b)).output
    assert "B - A" in table and "q5" in table
    out = tmp_path / "cmp.md"
    assert _cli("compare", str(a), str(b), "--format", "markdown", "-o", str(out), "-m", "score").exit_code == 0
    assert "`hit`" not in out.read_text()


def test_cli_errors_are_one_line(two_runs, tmp_path):
    a, _ = two_runs
    (tmp_path / "empty").mkdir()
    res = CliRunner().invoke(main, ["compare", str(a), str(tmp_path / "empty")])
    assert res.exit_code == 2 and "missing results.jsonl" in res.output


def test_cli_on_runs_written_by_evaluate(tmp_path):
    rows_a = [{"id": f"q{i}", "contexts": [{"id": "x"}, {"id": "y"}], "relevant": ["y"]} for i in range(12)]
    rows_b = [{"id": f"q{i}", "contexts": [{"id": "y"}, {"id": "x"}], "relevant": ["y"]} for i in range(12)]
    ragmeter.evaluate(rows_a, ["mrr", "hit_rate@1"], out_dir=str(tmp_path / "a"))
    ragmeter.evaluate(rows_b, ["mrr", "hit_rate@1"], out_dir=str(tmp_path / "b"))
    data = json.loads(_cli("compare", str(tmp_path / "a"), str(tmp_path / "b"), "--format", "json").output)
    rows = {r["metric"]: r for r in data["metrics"]}
    # MRR .5 -> 1 on all 12: exact sign-flip p = 2 / 2**12; hit@1 0 -> 1 on all 12: McNemar 2 * .5**12
    assert rows["mrr"]["diff"] == 0.5 and rows["mrr"]["p_value"] == pytest.approx(2 / 4096)
    assert rows["hit_rate@1"]["test"] == "mcnemar-exact"
    assert rows["hit_rate@1"]["p_value"] == pytest.approx(2 * 0.5**12)
    assert all(r["verdict"] == "B better" for r in rows.values())
