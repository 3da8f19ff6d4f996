"""``ragmeter metrics``: list the registered metrics."""

from __future__ import annotations

import json
from typing import Any

import click
from rich.table import Table

from ..registry import MetricSpec, list_metrics
from ._app import main
from ._output import FORMATS, StdoutConsole, fit_markdown, print_fitted, stdout_format, stdout_may_close

#: Names that mean something else in RAGAS, said where users switching from it meet them
#: (``ragmeter metrics`` and docs); tests check every name here is registered.
PEER_NAMES = {
    "context_precision": "label-matched (relevance labels, no model); RAGAS's context_precision is judged by "
                         "an LLM: ragmeter's judged equivalent is context_precision_llm.",
    "context_recall": "label-matched (labelled relevant chunks found in the contexts, no model); RAGAS's "
                      "context_recall is judged (reference claims attributable to the contexts): ragmeter has "
                      "no judged context recall; its judged context metrics are context_precision_llm and "
                      "context_relevancy.",
}


def _needs(s: MetricSpec) -> str:
    return ", ".join(x for x, on in (("judge", s.needs_judge), ("embedder", s.needs_embedder)) if on) or "-"


def _params(s: MetricSpec) -> str:
    return ", ".join(f"{p.name}={p.default}" for p in s.params) or "-"


def metrics_json() -> list[dict[str, Any]]:
    """Every registered metric as ``ragmeter metrics --format json`` prints it."""
    return [{"name": s.name, "category": s.category, "role": s.role, "cutoff": s.cutoff,
             "parameters": {p.name: p.default for p in s.params}, "needs_judge": s.needs_judge,
             "needs_embedder": s.needs_embedder, "higher_is_better": s.higher_is_better,
             "reference_level": s.reference_level, "aliases": list(s.aliases), "summary": s.summary,
             **({"note": PEER_NAMES[s.name]} if s.name in PEER_NAMES else {})} for s in list_metrics()]


def metrics_markdown() -> str:
    """A short table (name, category, cutoff, needs), then each metric's summary and parameters as a
    list item: no column holds prose, so a narrow log wraps lines, never names."""
    specs = list_metrics()
    lines = ["### ragmeter metrics", "", "| name | category | cutoff | needs |", "|---|---|---|---|"]
    lines += [f"| `{s.name}` | {s.category} | {s.cutoff} | {_needs(s)} |" for s in specs]
    lines.append("")
    lines += [f"- `{s.name}`: {s.summary} Parameters: {_params(s)}." for s in specs]
    lines.append("")
    lines += [f"note: {name}: {note}" for name, note in PEER_NAMES.items()]
    return "\n".join(lines) + "\n"


def metrics_table() -> Table:
    """The metrics as a rich table: names never wrap, the summary and parameters wrap at spaces."""
    table = Table(title="ragmeter metrics")
    table.add_column("name", no_wrap=True)
    table.add_column("category", no_wrap=True)
    table.add_column("needs", no_wrap=True)
    table.add_column("summary and parameters", overflow="fold")
    for s in list_metrics():
        cut = "" if s.cutoff == "none" else f" Cutoff @k: {s.cutoff}."
        table.add_row(s.name, s.category, _needs(s), f"{s.summary}{cut} Parameters: {_params(s)}.")
    return table


def _trec(fmt: str, out: StdoutConsole) -> None:
    """``ragmeter metrics --trec``: trec_eval's measures with their parameters and ragmeter equivalents."""
    from ..trec.measures import trec_table

    cols = ("trec_eval", "params", "default", "summary", "ragmeter", "formula")
    rows = [[row[c] or "-" for c in cols] for row in trec_table()]
    if fmt == "json":
        click.echo(json.dumps([dict(zip(cols, r, strict=True)) for r in rows], indent=2))
    elif fmt == "markdown":
        lines = ["### trec_eval measures (ragmeter trec -m NAME[.PARAMS])", "", "| trec_eval | params | default "
                 "| ragmeter |", "|---|---|---|---|", *(f"| `{r[0]}` | {r[1]} | {r[2]} | {r[4]} |" for r in rows), ""]
        lines += [f"- `{r[0]}`: {r[3]} ({r[5]})" for r in rows]
        click.echo(fit_markdown("\n".join(lines), out.width))
    else:
        table = Table(title="trec_eval measures (ragmeter trec -m NAME[.PARAMS])")
        table.add_column("trec_eval", no_wrap=True)
        for col in cols[1:]:
            table.add_column(col, overflow="fold")
        for r in rows:
            table.add_row(*r)
        print_fitted(out, table)


@main.command("metrics")
@click.option("--trec", "trec", is_flag=True,
              help="List trec_eval's measures (ragmeter trec) with their parameters and ragmeter equivalents.")
@click.option("--format", "fmt", type=click.Choice(FORMATS), default=None,
              help="table, markdown or json [table on a terminal, markdown in logs and pipes].")
def metrics_cmd(trec: bool, fmt: str | None) -> None:
    """List every metric with its parameters and what it needs (and names RAGAS uses differently)."""
    out = StdoutConsole()
    fmt = stdout_format(fmt, console=out)
    with stdout_may_close():
        if trec:
            _trec(fmt, out)
        elif fmt == "json":
            click.echo(json.dumps(metrics_json(), indent=2))
        elif fmt == "markdown":
            click.echo(fit_markdown(metrics_markdown(), out.width), nl=False)
        else:
            print_fitted(out, metrics_table())
            for name, note in PEER_NAMES.items():
                out.print(f"note: {name}: {note}", highlight=False, markup=False)
