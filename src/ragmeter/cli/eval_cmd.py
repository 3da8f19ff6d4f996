"""``ragmeter eval DATA``: evaluate a data file and write ``results.jsonl`` + ``summary.json``.

A thin layer over the Python API; the whole command is::

    ragmeter.evaluate(read_samples(DATA, on_error=..., field_map=..., format=...),
                      METRICS or None, out_dir=OUTDIR, keep_records=False)

followed by printing ``RunResult.summary()``.
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import click
from rich.console import Console
from rich.progress import Progress, ProgressColumn, SpinnerColumn, Task, TextColumn, TimeElapsedColumn
from rich.table import Table
from rich.text import Text

from ..errors import InputError, InvalidParameterError
from ..evaluator import evaluate
from ..io import FORMATS, read_samples
from ..results import RunResult
from ..types import Sample
from ._app import main

#: How many bad rows are quoted in the warning printed with ``--on-error skip``.
SHOWN_BAD_ROWS = 3


class _RateColumn(ProgressColumn):
    """Rows per second."""

    def render(self, task: Task) -> Text:
        speed = task.finished_speed or task.speed
        return Text(f"{speed:,.0f} rows/s" if speed else "- rows/s", style="progress.data.speed")


class BadRowCounter:
    """Passes samples through, counting the InputError items (bad rows) and keeping the first few."""

    def __init__(self, items: Iterator[Sample | InputError], keep: int = SHOWN_BAD_ROWS) -> None:
        self._items = items
        self._keep = keep
        self.count = 0
        self.first: list[InputError] = []

    def __iter__(self) -> Iterator[Sample | InputError]:
        for item in self._items:
            if isinstance(item, InputError):
                self.count += 1
                if len(self.first) < self._keep:
                    self.first.append(item)
            yield item


def parse_field_map(pairs: tuple[str, ...]) -> dict[str, str]:
    """``("q=query", "docs=contexts")`` -> ``{"q": "query", "docs": "contexts"}``."""
    out: dict[str, str] = {}
    for pair in pairs:
        column, sep, target = pair.partition("=")
        if not sep or not column.strip() or not target.strip():
            raise InvalidParameterError(f"--map: expected COLUMN=FIELD (e.g. question_text=query), got {pair!r}")
        out[column.strip()] = target.strip()
    return out


def skipped_message(skipped: list[str]) -> str | None:
    """The line naming metrics skipped for want of an LLM judge or an embedder (None when none was)."""
    if not skipped:
        return None
    return (
        f"Skipped {len(skipped)} metric(s) that need an LLM judge or an embedder: {', '.join(skipped)}. "
        "Configure a judge or an embedder to run them (see `ragmeter metrics` for what each needs)."
    )


def summary_table(summary: dict[str, Any]) -> Table:
    """``summary.json``'s metrics as a rich table: metric, mean, n, undefined, errors (and the
    confidence interval when the summary has one)."""
    rows = summary["metrics"]
    with_ci = any("ci" in row for row in rows.values())
    table = Table(title="ragmeter summary")
    table.add_column("metric")
    for col in ("mean", "n", "undefined", "errors", *(("ci",) if with_ci else ())):
        table.add_column(col, justify="right")
    for name, row in rows.items():
        cells = [name, _num(row["mean"]), str(row["n"]), str(row["undefined"]), str(row["errors"])]
        if with_ci:
            ci = row.get("ci")
            cells.append(f"[{_num(ci[0])}, {_num(ci[1])}]" if ci else "-")
        table.add_row(*cells)
    return table


def _num(value: float | None) -> str:
    return "-" if value is None or math.isnan(value) else f"{value:.4f}"


@main.command("eval")
@click.argument("data", type=click.Path(dir_okay=False, path_type=Path))
@click.option("-m", "--metric", "metrics", multiple=True, metavar="METRIC",
              help="Metric to compute, e.g. -m ndcg@10 -m mrr (repeatable). Default: every metric the "
                   "data's fields allow.")
@click.option("-o", "--out", "out_dir", default="ragmeter-out", show_default=True,
              type=click.Path(file_okay=False, path_type=Path),
              help="Directory for results.jsonl and summary.json.")
@click.option("--on-error", type=click.Choice(["raise", "skip"]), default="raise", show_default=True,
              help="raise: stop at the first bad row (exit 2). skip: record bad rows as errored "
                   "samples and go on.")
@click.option("--map", "field_map", multiple=True, metavar="COLUMN=FIELD",
              help="Read column COLUMN as field FIELD (query, answer, contexts, reference, relevant, "
                   "id, metadata); repeatable.")
@click.option("--format", "fmt", type=click.Choice(FORMATS), default=None,
              help="Input format (default: from the file extension).")
@click.option("-q", "--quiet", is_flag=True, help="Print nothing but errors.")
@click.option("--json", "as_json", is_flag=True, help="Print summary.json to stdout instead of the table.")
def eval_cmd(data: Path, metrics: tuple[str, ...], out_dir: Path, on_error: str,
             field_map: tuple[str, ...], fmt: str | None, quiet: bool, as_json: bool) -> None:
    """Evaluate the samples in DATA (.jsonl, .jsonl.gz, .json, .csv or .parquet).

    Writes OUTDIR/results.jsonl (one line per sample) and OUTDIR/summary.json. Exit codes: 0 done
    (also when --on-error skip skipped bad rows: a warning says how many); 2 bad usage or bad input.
    """
    err = Console(stderr=True)
    out = Console()
    samples = BadRowCounter(
        read_samples(data, on_error=on_error, field_map=parse_field_map(field_map), format=fmt)  # type: ignore[arg-type]
    )
    progress = Progress(
        SpinnerColumn(), TextColumn("evaluating"), TextColumn("{task.completed:,.0f} rows"),
        _RateColumn(), TimeElapsedColumn(), console=err, transient=True,
        disable=quiet or not err.is_terminal,  # no bar in logs and pipes
    )
    with progress:
        task = progress.add_task("eval", total=None)
        run = evaluate(
            samples,
            list(metrics) or None,
            out_dir=str(out_dir),
            keep_records=False,
            progress=lambda n: progress.advance(task, n),
            run_info={"data": str(data), "on_error": on_error},
        )
    _report(run, out_dir, samples, quiet=quiet, as_json=as_json, chose_metrics=bool(metrics),
            out=out, err=err)


def _report(run: RunResult, out_dir: Path, samples: BadRowCounter, *, quiet: bool, as_json: bool,
            chose_metrics: bool, out: Console, err: Console) -> None:
    info = err if as_json else out
    summary_path = out_dir / "summary.json"
    summary_text = summary_path.read_text(encoding="utf-8")  # written by evaluate(); not recomputed
    if as_json:
        click.echo(summary_text, nl=False)
    elif not quiet:
        out.print(summary_table(json.loads(summary_text)))
    if not quiet:
        info.print(f"{len(run)} samples -> {out_dir / 'results.jsonl'} and {summary_path}",
                   highlight=False, soft_wrap=True)
        skipped: list[Any] = run.run.get("skipped_metrics") or []
        message = None if chose_metrics else skipped_message([str(s) for s in skipped])
        if message:
            info.print(message, highlight=False, soft_wrap=True)
    if samples.count:
        err.print(
            f"warning: {samples.count} bad row(s) recorded as errored samples (counted in 'errors'); first:",
            style="yellow", highlight=False, soft_wrap=True,
        )
        for e in samples.first:
            err.print(f"  {e}", highlight=False, soft_wrap=True, markup=False)
