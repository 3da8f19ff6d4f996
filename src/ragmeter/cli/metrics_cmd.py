"""``ragmeter metrics``: list the registered metrics."""

from __future__ import annotations

import click
from rich.console import Console
from rich.table import Table

from ..registry import list_metrics
from ._app import main


@main.command("metrics")
@click.option("--trec", "trec", is_flag=True,
              help="List trec_eval's measures (ragmeter trec) with their parameters and ragmeter equivalents.")
def metrics_cmd(trec: bool) -> None:
    """List every metric with its parameters and what it needs."""
    if trec:
        from ..trec.measures import trec_table

        table = Table(title="trec_eval measures (ragmeter trec -m NAME[.PARAMS])")
        for col in ("trec_eval", "params", "default", "summary", "ragmeter", "formula"):
            table.add_column(col, overflow="fold")
        for row in trec_table():
            table.add_row(*(row[c] or "-" for c in ("trec_eval", "params", "default", "summary", "ragmeter",
                                                       "formula")))
        Console(width=200).print(table)
        return
    table = Table(title="ragmeter metrics")
    for col in ("name", "category", "cutoff", "parameters", "needs", "summary"):
        table.add_column(col, overflow="fold")
    for s in list_metrics():
        needs = ", ".join(x for x, on in (("judge", s.needs_judge), ("embedder", s.needs_embedder)) if on)
        params = ", ".join(f"{p.name}={p.default}" for p in s.params)
        table.add_row(s.name, s.category, s.cutoff, params, needs or "-", s.summary)
    Console().print(table)
    click.echo("")
