"""``ragmeter metrics``: list the registered metrics."""

from __future__ import annotations

import click
from rich.console import Console
from rich.table import Table

from ..registry import list_metrics
from ._app import main


@main.command("metrics")
def metrics_cmd() -> None:
    """List every metric with its parameters and what it needs."""
    table = Table(title="ragmeter metrics")
    for col in ("name", "category", "cutoff", "parameters", "needs", "summary"):
        table.add_column(col, overflow="fold")
    for s in list_metrics():
        needs = ", ".join(x for x, on in (("judge", s.needs_judge), ("embedder", s.needs_embedder)) if on)
        params = ", ".join(f"{p.name}={p.default}" for p in s.params)
        table.add_row(s.name, s.category, s.cutoff, params, needs or "-", s.summary)
    Console().print(table)
    click.echo("")
