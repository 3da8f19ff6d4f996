"""``ragmeter metrics``: list the registered metrics."""

from __future__ import annotations

import click
from rich.table import Table

from ..registry import list_metrics
from ._app import main
from ._output import StdoutConsole, stdout_may_close

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


@main.command("metrics")
@click.option("--trec", "trec", is_flag=True,
              help="List trec_eval's measures (ragmeter trec) with their parameters and ragmeter equivalents.")
def metrics_cmd(trec: bool) -> None:
    """List every metric with its parameters and what it needs (and names RAGAS uses differently)."""
    if trec:
        from ..trec.measures import trec_table

        table = Table(title="trec_eval measures (ragmeter trec -m NAME[.PARAMS])")
        for col in ("trec_eval", "params", "default", "summary", "ragmeter", "formula"):
            table.add_column(col, overflow="fold")
        for row in trec_table():
            table.add_row(*(row[c] or "-" for c in ("trec_eval", "params", "default", "summary", "ragmeter",
                                                       "formula")))
        with stdout_may_close():
            StdoutConsole(width=200).print(table)
        return
    table = Table(title="ragmeter metrics")
    for col in ("name", "category", "cutoff", "parameters", "needs", "summary"):
        table.add_column(col, overflow="fold")
    for s in list_metrics():
        needs = ", ".join(x for x, on in (("judge", s.needs_judge), ("embedder", s.needs_embedder)) if on)
        params = ", ".join(f"{p.name}={p.default}" for p in s.params)
        table.add_row(s.name, s.category, s.cutoff, params, needs or "-", s.summary)
    with stdout_may_close():
        StdoutConsole().print(table)  # cells fold (overflow="fold"): nothing is cut at any width
        click.echo("")
        for name, note in PEER_NAMES.items():
            click.echo(f"note: {name}: {note}")
