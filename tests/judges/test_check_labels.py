"""judge-check with the user's label rules (``--label NAME=FIELD[>=K]``, ``labels={...}``): parsing,
the AUROC / rho of a user rule by hand, a rubric's hard values, the errors naming file, line and
field, and a rubric from a config file checked end to end against the loopback server. Every
expected number is computed by hand in the comments from the records or the scripted replies."""

from __future__ import annotations

import gzip
import json
import math
from pathlib import Path

import pytest
from click.testing import CliRunner

from ragmeter import registry as reg
from ragmeter.cli import main
from ragmeter.errors import InputError, InvalidParameterError
from ragmeter.judges import check
from ragmeter.judges.label_rules import LabelRule, parse_label_option, parse_rule, resolve_rules, row_lines
from ragmeter.metrics.generation.rubric import register_rubric

from .fake_server import Reply


@pytest.fixture(autouse=True)
def registry_snapshot(monkeypatch):
    """Rubrics registered by a test (also through a config file) are gone after it."""
    reg._ensure_loaded()
    monkeypatch.setattr(reg, "_REGISTRY", dict(reg._REGISTRY))
    monkeypatch.setattr(reg, "_ALIASES", dict(reg._ALIASES))


# ---- parsing --------------------------------------------------------------------------------------

@pytest.mark.parametrize(("text", "name", "field", "at_least"), [
    ("politeness=polite", "politeness", "polite", None),
    ("grounded_answer=correct>=4", "grounded_answer", "correct", 4.0),
    (" detail = grade >= 2.5 ", "detail", "grade", 2.5),
    ("faithfulness(mode=direct)=faithful", "faithfulness(mode=direct)", "faithful", None),
    ("x=my-field>=-1", "x", "my-field", -1.0),
])
def test_label_option_good_forms(text, name, field, at_least):
    got_name, rule = parse_label_option(text)
    assert (got_name, rule) == (name, LabelRule(field, at_least))
    assert rule.graded is (at_least is not None)


def test_rule_text_round_trips():
    assert str(parse_rule("correct>=4")) == "correct>=4" and str(parse_rule("polite")) == "polite"
    assert str(parse_rule("grade>=2.5")) == "grade>=2.5"
    assert parse_rule(LabelRule("a", 1.0)) == LabelRule("a", 1.0)


@pytest.mark.parametrize("text", ["politeness", "=polite", "politeness=", "politeness= ", "politeness=polite>4",
                                  "politeness=polite>=x", "politeness=polite>=", "politeness=two words",
                                  "politeness=4polite", "politeness=polite<=3"])
def test_label_option_bad_forms_name_the_option_and_the_form(text):
    with pytest.raises(InvalidParameterError) as exc:
        parse_label_option(text)
    msg = str(exc.value)
    assert msg.startswith("--label") and "FIELD>=K" in msg and repr(text) in msg


def test_docstring_examples():
    import doctest

    from ragmeter.judges import label_rules

    result = doctest.testmod(label_rules, optionflags=doctest.NORMALIZE_WHITESPACE)
    assert result.failed == 0 and result.attempted >= 3


def test_python_labels_bad_rule_names_the_metric():
    with pytest.raises(InvalidParameterError, match=r"labels\['faithfulness'\].*FIELD>=K.*'faithful>3'"):
        resolve_rules(["faithfulness"], {"faithfulness": "faithful>3"})


def test_rules_match_exact_or_base_names_and_an_unknown_key_is_an_error():
    names = ["faithfulness(mode=direct)", "faithfulness", "correctness"]
    rules = resolve_rules(names, {"faithfulness": "ok", "faithfulness(mode=direct)": "direct_ok"})
    assert rules == {"faithfulness(mode=direct)": LabelRule("direct_ok"), "faithfulness": LabelRule("ok")}
    with pytest.raises(InvalidParameterError, match="'answer_grade' is not among the checked metrics"):
        resolve_rules(names, {"answer_grade": "ok"})


# ---- a user rule's numbers by hand ----------------------------------------------------------------

def _rec(name, score, error=None, **details):
    return {"id": f"r{score}", "metrics": {name: {"score": score, "error": error, "details": details}}}


# A 1-5 rubric, probability-weighted: score = (weighted - 1) / 4, hard = (rating - 1) / 4.
#   row  score  rating -> hard   grade  grade>=4
#   1    0.9    5      -> 1.0    5      1
#   2    0.6    4      -> 0.75   2      0
#   3    0.4    5      -> 1.0    4      1
#   4    0.1    1      -> 0.0    1      0
#   5    error                   3      (counted, never scored)
# AUROC: pos {0.9, 0.4} vs neg {0.6, 0.1}: 0.9>0.6, 0.9>0.1, 0.4<0.6, 0.4>0.1 -> 3/4
# AUROC hard: pos {1, 1} vs neg {0.75, 0} -> 4/4 = 1
# rho: score ranks [4, 3, 2, 1] vs grade ranks [4, 2, 3, 1], d = [0, 1, -1, 0] -> 1 - 6*2/(4*15) = 0.8
# rho hard: ranks [3.5, 2, 3.5, 1] vs [4, 2, 3, 1] (mean 2.5): deviations [1, -.5, 1, -1.5] and
#   [1.5, -.5, .5, -1.5]: cov 4.5, sxx 4.5, syy 5 -> 4.5 / sqrt(22.5) = sqrt(0.9)
ROWS = [(0.9, 5, 5), (0.6, 4, 2), (0.4, 5, 4), (0.1, 1, 1)]


def _rubric_records():
    register_rubric("politeness", "Courteous.", steps=["Read."])
    records = [_rec("politeness", s, rating=r, scoring="probability") for s, r, _ in ROWS]
    records.append(_rec("politeness", None, error={"type": "JudgeParseError"}))
    labels = [{"grade": g, "polite": g >= 4} for _, _, g in ROWS] + [{"grade": 3, "polite": False}]
    return records, labels


def test_graded_user_rule_by_hand_with_the_rubric_hard_values():
    records, labels = _rubric_records()
    p = check.labelled_pairs("politeness", records, labels, LabelRule("grade", 4.0))
    assert p.hard == [1.0, 0.75, 1.0, 0.0] and p.labels == [1, 0, 1, 0] and p.errors == 1
    rep = check.metric_report(p, {}, 1.0, check.Thresholds())
    assert rep["label"] == "grade>=4" and rep["graded"] is True and rep["unit"] == "row"
    assert rep["auroc"] == pytest.approx(0.75) and rep["auroc_hard"] == pytest.approx(1.0)
    assert rep["spearman"]["rho"] == pytest.approx(0.8) and rep["spearman_hard"]["rho"] == pytest.approx(math.sqrt(0.9))
    assert (rep["n"], rep["n_pos"], rep["n_neg"], rep["errors"], rep["rows"]) == (4, 2, 2, 1, 5)
    # agreement at 0.5: judged [1, 1, 0, 0] vs human [1, 0, 1, 0] -> 2 of 4
    assert rep["agreement"]["accuracy"] == pytest.approx(0.5)
    assert [r["label"] for r in p.rows] == [1.0, 0.0, 1.0, 0.0]


def test_boolean_user_rule_and_the_separation_table():
    records, labels = _rubric_records()
    rows = {r["metric"]: r for r in check.separation(records, labels, {"politeness": LabelRule("polite")})}
    soft, hard = rows["politeness"], rows["politeness [hard]"]
    assert soft["auroc"] == pytest.approx(0.75) and hard["auroc"] == pytest.approx(1.0)
    assert "spearman" not in soft and "spearman" not in hard  # a boolean rule: no graded label
    assert soft["mean_pos"] == pytest.approx((0.9 + 0.4) / 2) and soft["mean_neg"] == pytest.approx((0.6 + 0.1) / 2)
    assert hard["mean_pos"] == 1.0 and hard["mean_neg"] == pytest.approx(0.375)
    assert soft["errors"] == 1 and soft["n"] == 4


def test_yes_no_rubric_hard_value_is_the_verdict():
    register_rubric("cites", "Cites.", steps=["Read."], inputs=["answer", "contexts"], scale="yes/no")
    assert check.hard_value("cites", {"verdict": "yes", "p_yes": 0.4}) == 1.0
    assert check.hard_value("cites", {"verdict": "no", "p_yes": 0.6}) == 0.0
    register_rubric("detail", "Detailed.", steps=["Read."], scale="0-10")
    assert check.hard_value("detail", {"rating": 7, "weighted_rating": 6.1}) == pytest.approx(0.7)
    assert check.hard_value("rouge_l", {"rating": 7}) is None  # not a rubric: no hard value


def test_user_rule_replaces_a_builtin_one_and_works_for_an_offline_metric():
    # correctness normally reads correct>=4 with rho; with ok (boolean) neither applies
    recs = [_rec("correctness", 0.2), _rec("correctness", 0.8), _rec("correctness", 0.5)]
    labs = [{"correct": 5, "ok": False}, {"correct": 1, "ok": True}, {"correct": 3, "ok": True}]
    builtin = check.labelled_pairs("correctness", recs, labs)
    user = check.labelled_pairs("correctness", recs, labs, LabelRule("ok"))
    assert builtin.labels == [1, 0, 0] and builtin.graded and builtin.label == "correct"
    assert user.labels == [0, 1, 1] and not user.graded and user.label == "ok"
    # token_f1 (offline, higher is better) against a graded field: AUROC of pos {.9} vs neg {.3, .6} = 1
    recs = [_rec("token_f1", 0.3), _rec("token_f1", 0.9), _rec("token_f1", 0.6)]
    rows = check.separation(recs, [{"q": 1}, {"q": 3}, {"q": 2}], {"token_f1": LabelRule("q", 3.0)})
    assert [r["metric"] for r in rows] == ["token_f1"]  # no judge: no [hard] row
    assert rows[0]["auroc"] == 1.0 and rows[0]["spearman"] == pytest.approx(1.0)


def test_a_metric_without_a_rule_says_how_to_give_one():
    register_rubric("politeness", "Courteous.", steps=["Read."])
    with pytest.raises(InvalidParameterError, match=r"no label rule for 'politeness'.*--label politeness=FIELD"):
        check.labelled_pairs("politeness", [], [])


# ---- errors name the file, the line and the field, before any judge call -------------------------------

def _write(path: Path, rows: list[dict | None]) -> Path:
    """JSONL rows; None writes a blank line (so a row's line differs from its index)."""
    path.write_text("".join("\n" if r is None else json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path


def _row(i, **labels):
    return {"id": f"r{i}", "query": f"q{i}?", "answer": f"a{i}.", "labels": labels}


@pytest.mark.parametrize(("bad", "rule", "field", "what"), [
    ({"other": True}, "politeness=polite", "labels.polite", "needs labels.polite"),
    ({"polite": "yes"}, "politeness=polite", "labels.polite", "expected true or false"),
    ({"polite": 2}, "politeness=polite", "labels.polite", "expected true or false"),
    ({"grade": "4"}, "politeness=grade>=4", "labels.grade", "expected a number"),
    ({"grade": True}, "politeness=grade>=4", "labels.grade", "expected a number"),
    ({"grade": None}, "politeness=grade>=4", "labels.grade", "expected a number"),
])
def test_bad_label_names_file_line_and_field_before_any_call(tmp_path, fake_llm, make_judge, bad, rule, field, what):
    register_rubric("politeness", "Courteous.", steps=["Read."])
    data = _write(tmp_path / "mine.jsonl", [_row(1, polite=True, grade=5), None, _row(2, polite=False, grade=1),
                                            {**_row(3), "labels": bad}])
    name, parsed = parse_label_option(rule)
    with pytest.raises(InputError) as exc:
        check.judge_check(make_judge(), metrics=["politeness"], data=data, labels={name: parsed})
    e = exc.value
    assert (Path(e.path).name, e.line, e.field) == ("mine.jsonl", 4, field)  # line 4: the blank line 2 counts
    assert what in str(e) and f"mine.jsonl:4: field '{field}'" in str(e)
    assert fake_llm.log == []


def test_a_row_without_labels_names_its_file_line(tmp_path):
    data = _write(tmp_path / "mine.jsonl", [_row(1, polite=True), None, None, {"id": "x", "query": "q", "answer": "a"}])
    with pytest.raises(InputError) as exc:
        check.load_labelled(data)
    assert (exc.value.line, exc.value.field) == (4, "labels")


def test_row_lines_of_a_gzipped_jsonl_skip_its_blank_lines(tmp_path):
    # rows on lines 1, 3 and 6 (lines 2, 4 and 5 blank); a gzipped file named .jsonl.gz and .jsonl
    text = '{"id": 1}\n\n{"id": 2}\n\n  \n{"id": 3}\n'
    for name in ("rows.jsonl.gz", "rows.jsonl"):
        path = tmp_path / name
        path.write_bytes(gzip.compress(text.encode()))
        assert row_lines(path, 3) == [1, 3, 6]
        assert row_lines(str(path), 2) == [1, 3]


def test_cli_bad_label_is_a_usage_error(tmp_path):
    res = CliRunner().invoke(main, ["judge-check", "--judge", "openai:m@http://127.0.0.1:9/v1", "--label",
                                    "politeness:polite"])
    assert res.exit_code == 2 and "--label" in res.output and "NAME=FIELD>=K" in res.output
    res = CliRunner().invoke(main, ["judge-check", "--judge", "openai:m@http://127.0.0.1:9/v1", "--label",
                                    "correctness=a", "--label", "correctness=b>=2"])
    assert res.exit_code == 2 and "correctness has two rules" in res.output


# ---- a config rubric end to end on the loopback server --------------------------------------------------

# Each row's answer names its row; the judge replies with a hard rating and log-probabilities over
# the rating token (1-5 scale, score = (weighted - 1) / 4):
#   row  hard  alternatives       weighted                 score    hard value  polite  grade
#   a    5     5: .8, 4: .2       4.8                      0.95     1.0         yes     5
#   b    4     4: .6, 2: .4       3.2                      0.55     0.75        yes     4
#   c    2     2: .7, 5: .3       2.9                      0.475    0.25        no      3
#   d    1     1: .9, 3: .1       1.2                      0.05     0.0         no      1
#   e    4     4: .55, 1: .45     2.65                     0.4125   0.75        yes     4
#   f    3     3: 1.0             3.0                      0.5      0.5         no      2
# AUROC (polite, or grade>=4: the same split): pos {.95, .55, .4125} vs neg {.475, .05, .5}:
#   .95 wins 3, .55 wins 3, .4125 wins 1 (beats .05 only) -> 7/9
# AUROC hard: pos {1, .75, .75} vs neg {.25, 0, .5}: 9/9 = 1
# rho (grade): score ranks a6 b5 c3 d1 e2 f4, grade ranks a6 b4.5 c3 d1 e4.5 f2 (mean 3.5):
#   deviations [2.5, 1.5, -.5, -2.5, -1.5, .5] and [2.5, 1, -.5, -2.5, 1, -1.5]:
#   cov 6.25 + 1.5 + .25 + 6.25 - 1.5 - .75 = 12, sxx 17.5, syy 17 -> 12 / sqrt(297.5)
# rho hard: ranks a6 b4.5 c2 d1 e4.5 f3: deviations [2.5, 1, -1.5, -2.5, 1, -.5]: cov 16, sxx 17 -> 16/17
REPLIES = {"a": ("5", {"5": .8, "4": .2}), "b": ("4", {"4": .6, "2": .4}), "c": ("2", {"2": .7, "5": .3}),
           "d": ("1", {"1": .9, "3": .1}), "e": ("4", {"4": .55, "1": .45}), "f": ("3", {"3": 1.0})}
LABELS = {"a": (True, 5), "b": (True, 4), "c": (False, 3), "d": (False, 1), "e": (True, 4), "f": (False, 2)}


def rating_rule(call):
    from tests.metrics.generation.rules import spelled

    for row, (token, alts) in REPLIES.items():
        if f"[row {row}]" in call.user_text:
            return spelled([('{"reason": "ok", "rating": ', {}), (token, alts), ("}", {})])
    return Reply.malformed("no row marker")


def _config_and_data(tmp_path):
    cfg = tmp_path / "ragmeter.yaml"
    cfg.write_text("rag:\n  eval:\n    rubrics:\n      - name: politeness\n"
                   "        criteria: The answer is courteous.\n        steps: [Read the answer.]\n"
                   "        scale: 1-5\n")
    data = _write(tmp_path / "mine.jsonl", [{"id": r, "query": "Where is Paris?", "answer": f"In France. [row {r}]",
                                             "labels": {"polite": p, "grade": g}} for r, (p, g) in LABELS.items()])
    return cfg, data


def test_config_rubric_judge_check_end_to_end(tmp_path, fake_llm):
    fake_llm.rule = rating_rule
    cfg, data = _config_and_data(tmp_path)
    out = tmp_path / "check.json"
    res = CliRunner().invoke(main, ["judge-check", "--judge", f"openai:fake@{fake_llm.url}", "--config", str(cfg),
                                    "--data", str(data), "--metrics", "politeness", "--label", "politeness=grade>=4",
                                    "--min-per-class", "3", "-o", str(out), "--no-cache"], catch_exceptions=False)
    assert res.exit_code == 0, res.output
    (rep,) = json.loads(out.read_text())["metrics"]
    assert rep["metric"] == "politeness" and rep["label"] == "grade>=4" and rep["errors"] == 0
    assert rep["auroc"] == pytest.approx(7 / 9) and rep["auroc_hard"] == pytest.approx(1.0)
    assert rep["spearman"]["rho"] == pytest.approx(12 / math.sqrt(297.5))
    assert rep["spearman_hard"]["rho"] == pytest.approx(16 / 17)
    assert (rep["n_pos"], rep["n_neg"], rep["calls"]) == (3, 3, 6) and len(fake_llm.log) == 6
    assert "0.778" in res.output and "labels: politeness: grade>=4" in res.output
    scores = {r["id"]: r["score"] for r in json.loads(out.read_text())["rows"]["politeness"]}
    assert scores == pytest.approx({"a": .95, "b": .55, "c": .475, "d": .05, "e": .4125, "f": .5})


def test_the_record_keeps_the_user_label_rule(tmp_path, fake_llm):
    fake_llm.rule = rating_rule
    cfg, data = _config_and_data(tmp_path)
    out, cache = tmp_path / "check.json", tmp_path / "cache"
    res = CliRunner().invoke(main, ["judge-check", "--judge", f"openai:fake@{fake_llm.url}", "-c", str(cfg),
                                    "--data", str(data), "--label", "politeness=grade>=4", "--min-per-class", "3",
                                    "-o", str(out), "--cache-dir", str(cache)], catch_exceptions=False)
    assert res.exit_code == 0, res.output
    written = json.loads(out.read_text())
    assert written["label_rules"] == {"politeness": "grade>=4"}
    record = Path(written["record"])
    assert record.parent == cache / "judge-checks"
    entry = json.loads(record.read_text())["metrics"]["politeness"]
    assert (entry["label"], entry["label_rule"]) == ("grade>=4", "user")
    assert entry["auroc"] == pytest.approx(7 / 9)  # the table above


def test_label_alone_picks_the_metric_and_a_boolean_rule_has_no_rho(tmp_path, fake_llm, make_judge):
    fake_llm.rule = rating_rule
    cfg, data = _config_and_data(tmp_path)
    from ragmeter.config import load_config

    load_config(cfg)
    result = check.judge_check(make_judge(), data=data, labels={"politeness": "polite"})
    (rep,) = result.metrics  # no metrics given: the labelled one only
    assert rep["label"] == "polite" and rep["auroc"] == pytest.approx(7 / 9) and rep["auroc_hard"] == 1.0
    assert rep["graded"] is False and rep["spearman"] is None


def test_unknown_rubric_without_config_is_an_unknown_metric(tmp_path, fake_llm, monkeypatch):
    _, data = _config_and_data(tmp_path)
    (tmp_path / "elsewhere").mkdir()
    monkeypatch.chdir(tmp_path / "elsewhere")  # no ./ragmeter.yaml to pick up
    res = CliRunner().invoke(main, ["judge-check", "--judge", f"openai:fake@{fake_llm.url}", "--data", str(data),
                                    "--metrics", "politeness", "--label", "politeness=polite"])
    assert res.exit_code == 2 and "politeness" in res.output and fake_llm.log == []


def test_judge_check_picks_up_the_working_directory_config(tmp_path, fake_llm, monkeypatch):
    fake_llm.rule = rating_rule
    _config_and_data(tmp_path)  # tmp_path/ragmeter.yaml defines the politeness rubric
    monkeypatch.chdir(tmp_path)
    out = tmp_path / "check.json"
    res = CliRunner().invoke(main, ["judge-check", "--judge", f"openai:fake@{fake_llm.url}", "--data", "mine.jsonl",
                                    "--label", "politeness=grade>=4", "--min-per-class", "3", "-o", str(out),
                                    "--no-cache"], catch_exceptions=False)
    assert res.exit_code == 0, res.output
    assert "config: ragmeter.yaml" in res.output
    (rep,) = json.loads(out.read_text())["metrics"]
    assert rep["metric"] == "politeness" and rep["auroc"] == pytest.approx(7 / 9) and len(fake_llm.log) == 6


def test_an_explicit_config_wins_over_the_working_directory_one(tmp_path, fake_llm, monkeypatch):
    fake_llm.rule = rating_rule
    cfg, data = _config_and_data(tmp_path)
    cwd = tmp_path / "cwd"
    cwd.mkdir()
    (cwd / "ragmeter.yaml").write_text("rag: [not closed\n")  # read, it would stop the check with exit 2
    monkeypatch.chdir(cwd)
    args = ["judge-check", "--judge", f"openai:fake@{fake_llm.url}", "--data", str(data), "--label",
            "politeness=grade>=4", "--min-per-class", "3", "--no-cache"]
    res = CliRunner().invoke(main, args)
    assert res.exit_code == 2 and "ragmeter.yaml" in res.output and fake_llm.log == []  # the default is read
    res = CliRunner().invoke(main, [*args, "-c", str(cfg)], catch_exceptions=False)
    assert res.exit_code == 0, res.output
    assert f"config: {cfg}" in res.output and "0.778" in res.output and len(fake_llm.log) == 6
