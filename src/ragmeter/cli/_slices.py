"""``--slice FIELD``: per-slice aggregates of a finished run, added to ``summary.json`` and printed.

Shared by ``ragmeter eval`` and ``ragmeter run``; the numbers come from
:func:`ragmeter.stats.slices.slice_run`.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

import click
from rich.console import Console
from rich.table import Table

from ..results import RunResult
from ..stats.slices import SLICE_COLUMNS, slice_rows, slice_run, slices_markdown
from ._output import print_fitted

#: The ``--slice`` option's help (one text for every command that takes it).
SLICE_HELP = ("Per-slice aggregates with intervals and a Holm-corrected test of each slice against the rest "
              "(repeatable): a row metadata key (category), a context metadata key (source), or "
              "answer_length / n_contexts.")


def add_slices(run: RunResult, out_dir: Path, fields: Sequence[str],
               data: str | os.PathLike[str] | Iterable[Any] | None, field_map: dict[str, str] | None) -> None:
    """Compute the slices of the run in ``out_dir``, keep them in ``run``'s summary and rewrite its
    ``summary.json``."""
    if not fields:
        return
    run.set_slices(slice_run(out_dir, list(fields), data=data, field_map=field_map))
    run.write_summary(out_dir / "summary.json")


def print_slices(run: RunResult, show: str, out: Console) -> None:
    """The run's slices as tables (``show``: table or markdown; anything else prints nothing)."""
    slices = run.slices
    if not slices or show not in ("table", "markdown"):
        return
    if show == "markdown":
        click.echo("\n" + slices_markdown(slices), nl=False)
        return
    for field, block in slices.items():
        table = Table(title=f"slices by {field} ({block['kind']}; Welch t-test vs the rest, Holm-corrected)")
        for col in SLICE_COLUMNS:
            table.add_column(col, justify="right" if col in ("n", "rest", "p", "p_adj (Holm)") else "left")
        for row in slice_rows(field, block):
            table.add_row(*row)
        print_fitted(out, table)
