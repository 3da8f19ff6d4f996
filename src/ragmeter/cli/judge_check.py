"""``ragmeter judge-check``: measure a judge on labelled rows before trusting its metrics.

A thin layer over :func:`ragmeter.judges.check.judge_check`: build the judge, run the check,
print the table, write the JSON (``-o``) and keep the result on record beside the judge cache
(:mod:`ragmeter.judges.record`), where later ``ragmeter eval`` runs with the same judge find it.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import click

from ..errors import InvalidParameterError
from ._app import EXIT_GATE, EXIT_INFRA, main


def parse_concurrency(value: str) -> dict[str, Any]:
    """``auto`` -> adaptive (the default); ``N`` -> a fixed N requests in flight (no adaptation)."""
    if value.strip().lower() == "auto":
        return {"adaptive": True}
    try:
        n = int(value)
    except ValueError:
        n = 0
    if not 1 <= n <= 1024:
        raise InvalidParameterError(f"--concurrency: expected 'auto' or an integer 1-1024, got {value!r}")
    return {"concurrency": n, "adaptive": False}


def split_names(text: str) -> list[str]:
    """Split a comma-separated metric list, keeping commas inside parentheses.

    >>> split_names("faithfulness(mode=direct),context_relevancy(scale=binary, scoring=hard)")
    ['faithfulness(mode=direct)', 'context_relevancy(scale=binary, scoring=hard)']
    """
    out, depth, cur = [], 0, ""
    for ch in text:
        depth += (ch == "(") - (ch == ")")
        if ch == "," and depth == 0:
            out.append(cur.strip())
            cur = ""
        else:
            cur += ch
    return [n for n in [*out, cur.strip()] if n]


def _ci(ci: list[float] | None) -> str:
    return f"[{ci[0]:.2f}, {ci[1]:.2f}]" if ci else "n/a"


def _table(check: Any) -> Any:
    from rich.table import Table

    table = Table(title="ragmeter judge-check")
    for col in ("metric", "n (+/-)", "errors", "AUROC [95% CI]", "agreement", "rho", "calls", "s/row", "cost",
                "verdict"):
        table.add_column(col, justify="left" if col in ("metric", "verdict") else "right")
    for r in check.metrics:
        auc = "n/a" if r["auroc"] is None else f"{r['auroc']:.3f} {_ci(r['auroc_ci'])}"
        ag = r.get("agreement") or {}
        agree = "n/a" if ag.get("accuracy") is None else f"acc {ag['accuracy']:.2f}"
        if ag.get("cohen_kappa") is not None:
            agree += f", k {ag['cohen_kappa']:.2f}"
        sp = r.get("spearman")
        cost = "?" if r["cost"] is None else f"${r['cost']:.4f}"
        style = "green" if r["verdict"] == "usable" else "red"
        table.add_row(r["metric"], f"{r['n']} ({r['n_pos']}/{r['n_neg']})", str(r["errors"]), auc, agree,
                      "" if sp is None else f"{sp['rho']:.2f}", str(r["calls"]),
                      "" if r["seconds_per_row"] is None else f"{r['seconds_per_row']:.2f}", cost,
                      f"[{style}]{r['verdict']}[/{style}]")
    return table


def _print(check: Any, out: Any) -> None:
    from ._output import print_fitted

    print_fitted(out, _table(check))  # fits the width, every number whole, as `ragmeter eval` prints
    out.print(f"verdict rule: {check.thresholds.describe()}", highlight=False, markup=False, soft_wrap=True)
    if check.metrics:
        out.print("labels: " + "; ".join(f"{r['metric']}: {r['label']}" for r in check.metrics), highlight=False,
                  markup=False, soft_wrap=True)
    for r in check.metrics:
        for kind, k in (r.get("by_kind") or {}).items():
            auc = "n/a" if k["auroc"] is None else f"{k['auroc']:.3f} {_ci(k['auroc_ci'])}"
            out.print(f"{r['metric']} on {kind}: AUROC {auc}, {k['n_pos']}/{k['n_neg']} rows: {k['verdict']}",
                      highlight=False, markup=False, soft_wrap=True)
    for r in check.metrics:
        if r["verdict"] != "usable":
            out.print(f"{r['metric']}: not usable: {'; '.join(r['reasons'])}", highlight=False, markup=False,
                      soft_wrap=True)
    for name, prof in check.positions.items():
        cells = "  ".join(f"#{p['position']}: {p['judged_yes']:.2f}"
                          + (f" (human {p['human_yes']:.2f})" if p["human_yes"] is not None else "")
                          + f" n={p['n']}" for p in prof if p["n"])
        out.print(f"yes-rate by position, {name}: {cells}", highlight=False, markup=False, soft_wrap=True)


@main.command("judge-check")
@click.option("--judge", "judge_spec", required=True, metavar="SPEC",
              help="The judge to check, e.g. openai:gpt-4o-mini or openai:MODEL@http://127.0.0.1:8080/v1.")
@click.option("--judge-key-env", default=None, metavar="VAR", help="Read the judge's API key from VAR.")
@click.option("--data", type=click.Path(exists=True, dir_okay=False, path_type=Path), default=None,
              help="Labelled JSONL rows (a 'labels' object per row). Default: the bundled sets.")
@click.option("--metrics", default=None, metavar="M1,M2",
              help="Comma-separated metrics to check [faithfulness, hallucination_rate, answer_relevancy, "
                   "context_relevancy, correctness, answer_grade, passage_recall].")
@click.option("--label", "label_rules", multiple=True, metavar="NAME=FIELD[>=K]",
              help="Label rule for metric NAME (repeatable): FIELD, a boolean field of each row's 'labels' "
                   "(AUROC against it), or FIELD>=K, a numeric one (AUROC against value >= K, plus Spearman's "
                   "rho). Any metric, e.g. a rubric; replaces a built-in rule. Without --metrics: checks the "
                   "metrics named here.")
@click.option("-c", "--config", "config_path", default=None, type=click.Path(dir_okay=False, path_type=Path),
              help="Configuration file whose rubrics: to register (as `ragmeter eval -c`), so --metrics can "
                   "name them [default: ./ragmeter.yaml when it exists].")
@click.option("--limit", type=click.IntRange(min=1), default=None, help="Use the first N rows of each set.")
@click.option("-o", "--output", type=click.Path(dir_okay=False, path_type=Path), default=None,
              help="Write the full result (per metric and per row) as JSON here.")
@click.option("--concurrency", default="auto", show_default=True, metavar="auto|N",
              help="auto: adapt to the endpoint; N: a fixed number of calls in flight.")
@click.option("--judge-timeout", type=float, default=None, help="Seconds per judge request [60].")
@click.option("--min-auroc", type=click.FloatRange(0, 1), default=None, help="AUROC a usable metric reaches [0.75].")
@click.option("--min-per-class", type=click.IntRange(min=1), default=None,
              help="Labelled units needed on each side for a verdict [5].")
@click.option("--cache-dir", default=None, help="Judge cache directory (the check is kept on record there).")
@click.option("--no-cache", is_flag=True, help="Do not read or write the judge cache.")
@click.option("--strict", is_flag=True, help="Exit 1 when any metric is not usable.")
def judge_check_cmd(judge_spec: str, judge_key_env: str | None, data: Path | None, metrics: str | None,
                    label_rules: tuple[str, ...], config_path: Path | None, limit: int | None,
                    output: Path | None, concurrency: str, judge_timeout: float | None,
                    min_auroc: float | None, min_per_class: int | None, cache_dir: str | None, no_cache: bool,
                    strict: bool) -> None:
    """Validate a judge before trusting it: AUROC against human labels, per metric, with a verdict.

    Runs the judged metrics over the bundled hand-labelled sets (or --data) and prints, per metric,
    the AUROC with its 95% interval, agreement with the labels, Spearman's rho for graded labels,
    calls, seconds and cost, and a verdict (usable / not usable, rule printed below the table).
    Your own metrics (rubrics from ./ragmeter.yaml, or -c FILE) are checked on your rows with --label:
    `ragmeter judge-check --judge SPEC --data mine.jsonl --label politeness=polite`.
    The result is kept beside the judge cache, so `ragmeter eval` with the same judge and prompt
    versions shows it in summary.json and the report. Exit codes: 0 done; 1 a metric is not usable
    (with --strict); 2 bad usage or input; 3 the judge could not be reached (metrics finished so
    far are written).
    """
    from dataclasses import replace

    from rich.console import Console

    from ..config import load_config
    from ..judges import from_spec
    from ..judges.check import Thresholds, judge_check
    from ..judges.label_rules import parse_label_option
    from ..judges.record import save_record
    from ..masking import mask_secrets
    from ._output import StdoutConsole, emit

    options: dict[str, Any] = {**parse_concurrency(concurrency), "temperature": 0.0,
                               "cache": False if no_cache else (cache_dir or True)}
    if judge_timeout is not None:
        options["timeout"] = judge_timeout
    if judge_key_env:
        if judge_key_env not in os.environ:
            raise InvalidParameterError(f"--judge-key-env: environment variable {judge_key_env} is not set")
        options["api_key"] = os.environ[judge_key_env]
    labels: dict[str, Any] = {}
    for text in label_rules:
        name, rule = parse_label_option(text)
        if name in labels:
            raise InvalidParameterError(f"--label: {name} has two rules ({labels[name]} and {rule}); give one")
        labels[name] = rule
    err = Console(stderr=True)
    loaded = load_config(config_path)  # registers the config's rubrics; None: ./ragmeter.yaml, as `ragmeter eval`
    if loaded.source is not None:
        err.print(f"config: {loaded.source}", highlight=False, markup=False, soft_wrap=True)  # a long path unbroken
    thresholds = Thresholds()
    if min_auroc is not None:
        thresholds = replace(thresholds, min_auroc=min_auroc)
    if min_per_class is not None:
        thresholds = replace(thresholds, min_per_class=min_per_class)
    judge = from_spec(judge_spec, **options)
    check = judge_check(judge, metrics=split_names(metrics) if metrics else None, data=data, labels=labels,
                        limit=limit, thresholds=thresholds, judge_spec=mask_secrets(judge_spec),
                        on_metric=lambda r: err.print(f"checked {r['metric']}: {r['verdict']}", highlight=False,
                                                      markup=False))
    if check.metrics:
        try:
            check.record = str(save_record(check, judge, output=str(output) if output else None))
        except OSError as exc:  # the results are still printed and written
            err.print(f"warning: judge-check not kept on record: {exc}", style="yellow", highlight=False,
                      markup=False, soft_wrap=True)
    if output is not None:
        output.parent.mkdir(parents=True, exist_ok=True)
        output.write_text(check.to_json() + "\n", encoding="utf-8")
    out = StdoutConsole()
    emit(lambda: _print(check, out))  # a reader that stops early (| head) is not an error
    if output is not None:
        err.print(f"judge-check -> {output}", highlight=False, markup=False)
    if check.stopped:
        err.print(f"error: {check.stopped}", style="red", highlight=False, markup=False, soft_wrap=True)
        raise SystemExit(EXIT_INFRA)
    if strict and any(r["verdict"] != "usable" for r in check.metrics):
        raise SystemExit(EXIT_GATE)
