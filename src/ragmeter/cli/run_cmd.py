"""``ragmeter run APP --questions Q``: call the user's RAG app on each question and evaluate its answers.

A thin layer over :mod:`ragmeter.app`: the app is resolved (:func:`ragmeter.app.resolve_app`),
called on every question (cached, concurrent), its outputs written to ``app_outputs.jsonl`` and
evaluated like ``ragmeter eval``; with ``--param`` values, every combination is run and compared.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import click
from rich.console import Console
from rich.table import Table

from ..app import AppCache, read_questions, resolve_app, run_experiment
from ..app.calls import DEFAULT_RETRIES, AppTally, RetryPolicy
from ..app.runner import DEFAULT_CONCURRENCY, DEFAULT_TIMEOUT, OUTPUTS_FILE, AppCall, combinations, parse_param
from ..errors import InvalidParameterError
from ..results import RunResult
from ._app import main
from ._output import print_fitted
from ._progress import RunProgress
from ._slices import SLICE_HELP, add_slices, print_slices
from .eval_cmd import parse_field_map, summary_table


def _headers(pairs: tuple[str, ...]) -> dict[str, str]:
    out = {}
    for p in pairs:
        name, sep, var = p.partition("=")
        if not sep or not name or not var:
            raise InvalidParameterError(f"--header: expected NAME=ENV_VAR (the value is read from the environment), "
                                        f"got {p!r}")
        out[name] = var
    return out


def _latency_line(run: RunResult) -> str:
    app = run.run.get("app") or {}
    lat = app.get("latency_s")
    lat_text = "no call made (every output cached)" if not lat else (
        f"latency p50 {lat['p50']:.3f} s, p95 {lat['p95']:.3f} s, max {lat['max']:.3f} s")
    return (f"app: {app.get('calls', 0)} call(s), {app.get('cached', 0)} cached, {app.get('retries', 0)} "
            f"retries, {app.get('errors', 0)} error(s); " + lat_text)


@main.command("run")
@click.argument("app")
@click.option("--questions", "questions", required=True, type=click.Path(dir_okay=False, path_type=Path),
              help="The questions: any file ragmeter reads (its references and labels are kept for scoring).")
@click.option("-m", "--metric", "metrics", multiple=True, metavar="METRIC", help="Metric to compute (repeatable).")
@click.option("-o", "--out", "out_dir", default="ragmeter-out", show_default=True,
              type=click.Path(file_okay=False, path_type=Path), help="Output directory.")
@click.option("--param", "params", multiple=True, metavar="NAME=V1,V2",
              help="App parameter values (repeatable): every combination is run and compared.")
@click.option("--map", "--field-map", "field_map", multiple=True, metavar="COLUMN=FIELD",
              help="Rename a column of the questions file to a ragmeter field (repeatable).")
@click.option("--concurrency", type=click.IntRange(min=1), default=DEFAULT_CONCURRENCY, show_default=True,
              help="App calls at a time.")
@click.option("--timeout", type=float, default=DEFAULT_TIMEOUT, show_default=True, help="Seconds per app call.")
@click.option("--retries", type=click.IntRange(min=0), default=DEFAULT_RETRIES, show_default=True,
              help="Retries of a call that failed transiently (HTTP 429 / 5xx, connection error, timeout; a "
              "Python app: AppUnavailable, ConnectionError, TimeoutError), with backoff.")
@click.option("--body", default=None, help='HTTP app: the JSON body template, e.g. \'{"q": "{question}", '
              '"k": "{top_k}"}\' [{"question": "{question}"}].')
@click.option("--answer-path", default=None, help="HTTP app: dot path of the answer in the reply [answer].")
@click.option("--contexts-path", default=None, help="HTTP app: dot path of the contexts in the reply [contexts].")
@click.option("--header", "headers", multiple=True, metavar="NAME=ENV_VAR",
              help="HTTP app: a header whose value is read from an environment variable (repeatable).")
@click.option("--judge", "judge_spec", default=None, metavar="SPEC", help="Judge for the judged metrics.")
@click.option("--judge-base-url", default=None, help="Base URL of an OpenAI-compatible judge endpoint.")
@click.option("--slice", "slices", multiple=True, metavar="FIELD", help=SLICE_HELP)
@click.option("--no-cache", is_flag=True, help="Call the app even where an output is cached (and cache nothing).")
@click.option("--cache-dir", default=None, help="Cache directory [user cache dir or $RAGMETER_CACHE_DIR].")
@click.option("--report/--no-report", default=True, show_default=True, help="Write report.html per run.")
@click.option("-q", "--quiet", is_flag=True, help="Print nothing but errors.")
def run_cmd(app: str, questions: Path, **o: Any) -> None:
    """Call the RAG app APP on every question and evaluate its answers.

    APP is pkg.module:function (sync or async; called as function(question, **params) and
    returning a mapping with answer and contexts, or an (answer, contexts) pair), a LangChain
    Runnable, LlamaIndex query engine or Haystack Pipeline addressed the same way, or an http(s)://
    endpoint. The
    app's outputs go to OUTDIR/app_outputs.jsonl (re-score them with `ragmeter eval`), the results
    to OUTDIR (one subdirectory per --param combination, then their comparison).
    """
    fields = parse_field_map(o["field_map"])
    target = resolve_app(app, body=o["body"], answer_path=o["answer_path"], contexts_path=o["contexts_path"],
                         headers=_headers(o["headers"]) or None, timeout=o["timeout"])
    qs = read_questions(str(questions), field_map=fields)
    grid = dict(parse_param(p) for p in o["params"])
    judge = _judge(o) if o["judge_spec"] else None
    cache = None if o["no_cache"] else AppCache(o["cache_dir"])
    out = Console()
    tally = AppTally()
    with RunProgress(Console(stderr=True), total=len(qs) * len(combinations(grid)), quiet=o["quiet"],
                     label="calling the app", unit="questions", status=tally.text) as bar:

        def progress(call: AppCall) -> None:
            tally.add(call.cached, call.retries, call.error is not None)
            bar.advance(1)

        exp = run_experiment(target, app, qs, list(o["metrics"]) or None, out_dir=o["out_dir"], grid=grid,
                             judge=judge, cache=cache, concurrency=o["concurrency"], timeout=o["timeout"],
                             retry=RetryPolicy(max_retries=o["retries"]), progress=progress)
    for label, run, d in zip(exp.labels, exp.runs, exp.dirs, strict=True):
        add_slices(run, d, o["slices"], d / OUTPUTS_FILE, None)
        if o["report"]:
            from ..report import write_report

            write_report(d, d / "report.html", data=d / OUTPUTS_FILE)
        if not o["quiet"]:
            table = summary_table(run.summary_dict())
            table.title = f"ragmeter run: {label}"
            print_fitted(out, table)
            out.print(_latency_line(run), highlight=False, soft_wrap=True)
            print_slices(run, "table", out)
            out.print(f"-> {d}", highlight=False, soft_wrap=True)
    if exp.comparison is not None and not o["quiet"]:
        print_fitted(out, exp.comparison.to_rich())
        out.print(_best_table(exp.best))
        out.print(f"comparison -> {Path(o['out_dir']) / 'comparison.md'}", highlight=False, soft_wrap=True)


def _best_table(best: dict[str, dict[str, Any]]) -> Table:
    table = Table(title="best configuration per metric (paired tests by question, Holm-corrected)")
    for col in ("metric", "best", "mean [95% CI]", "tied with", "significantly better than"):
        table.add_column(col)
    for m, b in best.items():
        ci = f" [{b['ci'][0]:.3f}, {b['ci'][1]:.3f}]" if b.get("ci") else ""
        table.add_row(m, b["best"], f"{b['mean']:.3f}{ci}", ", ".join(b["tied"]) or "-",
                      ", ".join(b["beats"]) or "none")
    return table


def _judge(o: dict[str, Any]) -> Any:
    """The judge the flags name (``--judge``, ``--judge-base-url``) with the config file's settings."""
    from ..config import load_config, merge_cli
    from ._backends import judge_config

    cfg = merge_cli(load_config(None), judge=o["judge_spec"])
    jconf = judge_config(cfg, base_url=o["judge_base_url"])
    return jconf.build() if jconf is not None else None
