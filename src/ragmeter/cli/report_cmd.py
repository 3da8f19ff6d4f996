"""``ragmeter report``: the self-contained HTML report of a run, or of two or more runs compared."""

from __future__ import annotations

from pathlib import Path

import click

from ..errors import InvalidParameterError
from ..gate import parse_threshold
from ..report import DEFAULT_MAX_SAMPLES, DISPLAY_CLIP_CHARS, write_report
from ._app import main


@main.command("report")
@click.argument("runs", nargs=-1, required=True, metavar="[BASELINE ...] RUN",
                type=click.Path(exists=True, file_okay=False, path_type=Path))
@click.option("--data", "data", type=click.Path(exists=True, dir_okay=False, path_type=Path), default=None,
              help="The data file the run was made from (queries, answers, contexts, references). "
                   "Default: the file the run info names, if it exists.")
@click.option("-o", "--output", "output", type=click.Path(dir_okay=False, path_type=Path),
              default=Path("report.html"), show_default=True, help="The HTML file to write.")
@click.option("--title", default=None, help="The page title.")
@click.option("--display-chars", "--max-text-chars", "display_chars", type=click.IntRange(min=0),
              default=DISPLAY_CLIP_CHARS, show_default=True, metavar="N",
              help="Show at most N characters of a text in the page, cutting longer ones (0: never cut).")
@click.option("--diagnose/--no-diagnose", default=True, show_default=True,
              help="Run `ragmeter diagnose` on the run and head the report with its findings; with "
                   "--no-diagnose, show the findings saved in OUTDIR/diagnosis.json or the run info, if any.")
@click.option("--fail-under", "fail_under", multiple=True, metavar="METRIC=THRESHOLD",
              help="A gate threshold to mark on the metric's card (repeatable). Default: the thresholds "
                   "`ragmeter eval --fail-under` recorded in the run info.")
@click.option("--max-samples", type=click.IntRange(min=1), default=DEFAULT_MAX_SAMPLES, show_default=True,
              help="A run with more samples embeds this many (the worst and best per metric, errored and "
                   "failing ones, a seeded random sample); the aggregates cover all.")
def report_cmd(runs: tuple[Path, ...], data: Path | None, output: Path, title: str | None,
               display_chars: int, diagnose: bool, fail_under: tuple[str, ...], max_samples: int) -> None:
    """Write a self-contained HTML report of RUN (an OUTDIR of `ragmeter eval -o`).

    With two run directories, BASELINE RUN, the report shows RUN with its difference from
    BASELINE. With three or more, it compares them all: each run's mean with its interval, the
    best run per metric, and paired Holm-adjusted tests between every two runs. The file needs no
    network: open it in any browser. See docs/report.md.
    """
    baseline, candidate = (runs[0], runs[1]) if len(runs) == 2 else (None, runs[-1])
    try:
        gate = dict(parse_threshold(t) for t in fail_under)
    except InvalidParameterError as exc:
        raise click.BadParameter(str(exc), param_hint="--fail-under") from None
    out = write_report(candidate, output, data=data, baseline=baseline, title=title,
                       clip_chars=display_chars or None, diagnose=diagnose, fail_under=gate or None,
                       max_samples=max_samples, compare_with=runs[:-1] if len(runs) > 2 else ())
    size = out.stat().st_size
    click.echo(f"wrote {out} ({size / 1e6:.1f} MB)" if size >= 1e6 else f"wrote {out} ({size / 1e3:.0f} kB)")
