"""``ragmeter compare | calibrate | diagnose | fuse``: thin wrappers over :mod:`ragmeter.stats`."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import click
from rich.console import Console

from .. import stats
from ..errors import InvalidParameterError
from ._app import main
from ._output import StdoutConsole, emit, fit_markdown, print_fitted, stdout_format

FORMATS = ("table", "json", "markdown")
#: Width of tables written to a file with -o.
WIDE = 160


def _emit(report: Any, fmt: str | None, output: Path | None, **json_kw: Any) -> None:
    """Write ``report`` as ``fmt`` to ``output``, or to stdout as ``eval`` does
    (:mod:`ragmeter.cli._output`): no ``--format`` is a table on a terminal and Markdown in a CI log
    or a pipe; tables and lines fit the console's width (``$COLUMNS``, 80 in a pipe) with every
    number whole (:func:`~ragmeter.cli._output.print_fitted`); a reader that stops early
    (``| head -1``) ends the output, not the command (exit 0, no traceback)."""
    if output is not None:
        fmt = fmt or "table"
        if fmt == "table":
            with open(output, "w", encoding="utf-8") as fh:
                Console(file=fh, width=WIDE).print(report.to_rich())
        else:
            output.write_text(_text(report, fmt, **json_kw), encoding="utf-8")
        return
    out = StdoutConsole()
    fmt = stdout_format(fmt, console=out)
    if fmt == "table":
        emit(lambda: print_fitted(out, report.to_rich()))
    else:
        text = _text(report, fmt, **json_kw)
        if fmt == "markdown":
            text = fit_markdown(text, out.width)
        emit(lambda: click.echo(text, nl=False))


def _text(report: Any, fmt: str, **json_kw: Any) -> str:
    """``report`` as JSON (one object and a newline) or Markdown."""
    return report.to_json(**json_kw) + "\n" if fmt == "json" else report.to_markdown()


def _format_option(f: Any) -> Any:
    f = click.option("-o", "--output", type=click.Path(dir_okay=False, path_type=Path), default=None,
                     help="Write the report to this file instead of stdout.")(f)
    return click.option("--format", "fmt", type=click.Choice(FORMATS), default=None,
                        help="table, json (machine-readable), markdown (PR comment) [table on a terminal, "
                             "markdown in logs and pipes; table with -o].")(f)


COMPARE_FORMATS = ("table", "json", "markdown", "latex")


def _export(path: Path | None, text: str, *, markdown: bool = False) -> None:
    """Write ``text`` to ``path`` (``-``: stdout, Markdown fitted to its width); nothing when ``path`` is None."""
    if path is None:
        return
    if str(path) == "-":
        emit(lambda: click.echo(fit_markdown(text, StdoutConsole().width) if markdown else text, nl=False))
    else:
        path.write_text(text, encoding="utf-8")


def _run_columns(path: Path) -> Any:
    """The run in OUTDIR ``path`` as its score columns only (about 10 bytes per sample and metric,
    :meth:`ragmeter.report.Run.to_result`), never its full records; a directory that is not a
    run is the error :func:`ragmeter.stats.compare` gives on it."""
    from ..report import load_run
    from ..stats import load_run as check_run

    if not ((path / "results.jsonl").is_file() and (path / "summary.json").is_file()):
        check_run(path)  # raises the InputError naming the missing file
    return load_run(path).to_result()


@main.command("compare")
@click.argument("runs", nargs=-1, required=True, metavar="RUN_A RUN_B [RUN ...]",
                type=click.Path(exists=True, file_okay=False, path_type=Path))
@click.option("-m", "--metric", "metrics", multiple=True, metavar="METRIC",
              help="Compare only this metric (repeatable). Default: every metric the runs all have.")
@click.option("--test", type=click.Choice(["auto", "permutation", "t-test", "mcnemar"]), default="auto",
              show_default=True, help="auto: McNemar for 0/1 metrics, paired permutation test otherwise "
                                       "(paired t-test above 20,000 pairs).")
@click.option("--confidence", type=click.FloatRange(0, 1, min_open=True, max_open=True), default=0.95,
              show_default=True, help="Confidence level of the CIs.")
@click.option("--alpha", type=click.FloatRange(0, 1, min_open=True, max_open=True), default=0.05,
              show_default=True, help="Significance level (on Holm-adjusted p-values).")
@click.option("--no-correction", is_flag=True, help="Report raw p-values as adjusted (no Holm correction).")
@click.option("--resamples", type=click.IntRange(min=1), default=10_000, show_default=True,
              help="Permutation resamples when exact enumeration is not used.")
@click.option("--bootstrap", "n_bootstrap", type=click.IntRange(min=1), default=2000, show_default=True,
              help="Bootstrap resamples for the CI of the difference.")
@click.option("--seed", type=click.IntRange(min=0), default=0, show_default=True,
              help="Seed of every random procedure (same seed, same numbers).")
@click.option("--markdown", "markdown_path", type=click.Path(dir_okay=False, allow_dash=True, path_type=Path),
              default=None, help="Also write the Markdown report here (- for stdout).")
@click.option("--latex", "latex_path", type=click.Path(dir_okay=False, allow_dash=True, path_type=Path),
              default=None, help="Also write the runs x metrics table as LaTeX here (- for stdout).")
@click.option("--html", "html_path", type=click.Path(dir_okay=False, path_type=Path), default=None,
              help="Also write the HTML comparison report here (as `ragmeter report RUN_A RUN_B ...`).")
@click.option("-o", "--output", type=click.Path(dir_okay=False, path_type=Path), default=None,
              help="Write the report to this file instead of stdout.")
@click.option("--format", "fmt", type=click.Choice(COMPARE_FORMATS), default=None,
              help="table, json (machine-readable), markdown (PR comment), latex (the runs x metrics table "
                   "for a paper) [table on a terminal, markdown in logs and pipes; table with -o].")
def compare_cmd(runs: tuple[Path, ...], metrics: tuple[str, ...], test: str, confidence: float, alpha: float,
                no_correction: bool, resamples: int, n_bootstrap: int, seed: int, markdown_path: Path | None,
                latex_path: Path | None, html_path: Path | None, fmt: str | None, output: Path | None) -> None:
    """Compare runs (OUTDIRs of `ragmeter eval -o`) against the first one, paired by sample id.

    Two runs, RUN_A RUN_B: for each metric both have, B - A with a paired bootstrap CI, a paired
    test, Holm-adjusted p-values and an effect size. Three or more: a table with a row per run
    and a column per metric, each cell marked when the run differs significantly from the first
    (Holm-corrected over every comparison of the table). Samples in only one run are listed,
    never dropped silently.
    """
    if len(runs) < 2:
        raise click.UsageError(f"expected at least two run directories to compare, got {len(runs)}")
    columns = [_run_columns(p) for p in runs]
    result = stats.compare_many(columns, labels=[str(p) for p in runs], metrics=list(metrics) or None, test=test,
                                confidence=confidence, alpha=alpha, correction="none" if no_correction else "holm",
                                n_resamples=resamples, n_bootstrap=n_bootstrap, seed=seed)
    # two runs: the pairwise report of today (the table's Holm family is then the metrics, as in compare)
    report: Any = result.comparisons[0] if len(runs) == 2 else result
    _export(markdown_path, report.to_markdown(), markdown=True)
    _export(latex_path, result.to_latex())
    if fmt == "latex":
        _export(output or Path("-"), result.to_latex())
    else:
        _emit(report, fmt, output)
    if html_path is not None:
        from ..report import write_report

        write_report(runs[-1], html_path, baseline=runs[0] if len(runs) == 2 else None,
                     compare_with=runs[:-1] if len(runs) > 2 else ())
        click.echo(f"wrote {html_path}", err=True)


@main.command("calibrate")
@click.argument("scores", type=click.Path(exists=True, path_type=Path))
@click.option("-l", "--labels", type=click.Path(exists=True, dir_okay=False, path_type=Path), default=None,
              help="Human labels: CSV/TSV/JSONL with columns id, metric, label.")
@click.option("--judge-check", "judge_check", type=click.Path(exists=True, dir_okay=False, path_type=Path),
              default=None, help="Also use the labelled rows of a `ragmeter judge-check -o` file.")
@click.option("-m", "--metric", "metrics", multiple=True, metavar="METRIC",
              help="Calibrate only this metric (repeatable); with one metric, label files may omit the "
                   "'metric' column.")
@click.option("--threshold", type=float, default=0.5, show_default=True,
              help="Judge score at or above which the judge says 'yes' (binary labels).")
@click.option("--bins", type=click.IntRange(min=1), default=10, show_default=True,
              help="Equal-width bins of the expected calibration error.")
@click.option("--alpha", type=click.FloatRange(0, 1, min_open=True, max_open=True), default=0.1,
              show_default=True, help="Risk level of the abstention threshold: P(answered and unacceptable).")
@click.option("--positive", type=float, default=0.5, show_default=True,
              help="Label at or above which an answer is acceptable.")
@click.option("--lambda", "lam", default="auto", show_default=True,
              help="PPI power tuning: auto (PPI++) or a number in [0, 1] (1 = classic PPI).")
@click.option("--confidence", type=click.FloatRange(0, 1, min_open=True, max_open=True), default=0.95,
              show_default=True)
@_format_option
def calibrate_cmd(scores: Path, labels: Path | None, judge_check: Path | None, metrics: tuple[str, ...],
                  threshold: float, bins: int, alpha: float, positive: float, lam: str, confidence: float,
                  fmt: str | None, output: Path | None) -> None:
    """Check an LLM judge against human labels and correct its estimate (PPI++).

    SCORES is a run OUTDIR, a results.jsonl, or a CSV/JSONL file with columns id, metric, score.
    --judge-check adds the labelled rows of a `ragmeter judge-check -o` file (the judge's scores
    and the human labels there) to the labelled samples.
    """
    lam_value: float | str = lam
    if lam != "auto":
        try:
            lam_value = float(lam)
        except ValueError:
            raise InvalidParameterError(f"--lambda: expected 'auto' or a number in [0, 1], got {lam!r}") from None
    one = metrics[0] if len(metrics) == 1 else None
    if labels is None and judge_check is None:
        raise InvalidParameterError("calibrate: expected --labels FILE, --judge-check FILE, or both")
    result = stats.calibrate(scores, labels, judge_check=judge_check, metrics=list(metrics) or None,
                             confidence=confidence, threshold=threshold, bins=bins, alpha=alpha, positive=positive,
                             lam=lam_value, metric=one)
    _emit(result, fmt, output)


@main.command("diagnose")
@click.argument("run", type=click.Path(exists=True, file_okay=False, path_type=Path))
@click.option("-t", "--threshold", "thresholds", multiple=True, metavar="NAME=VALUE",
              help=f"Override a threshold (repeatable): {', '.join(stats.DEFAULT_THRESHOLDS)}.")
@click.option("--max-ids", type=click.IntRange(min=0), default=50, show_default=True,
              help="Sample ids listed per finding (counts are complete).")
@click.option("--per-sample", is_flag=True, help="JSON: include every sample's findings.")
@click.option("--seed", type=click.IntRange(min=0), default=0, show_default=True)
@click.option("--baseline", type=click.Path(exists=True, file_okay=False, path_type=Path), default=None,
              help="A baseline run (OUTDIR): a metric significantly worse than in it is low.")
@_format_option
def diagnose_cmd(run: Path, thresholds: tuple[str, ...], max_ids: int, per_sample: bool, seed: int,
                 baseline: Path | None, fmt: str | None, output: Path | None) -> None:
    """Map the run's metric signatures to the failing pipeline stage and the fix to try; list the
    metrics that are low against their gate, their reference level or the baseline."""
    thr: dict[str, float] = {}
    for item in thresholds:
        key, sep, value = item.partition("=")
        try:
            if not sep:
                raise ValueError
            thr[key.strip()] = float(value)
        except ValueError:
            raise InvalidParameterError(f"--threshold: expected NAME=VALUE, got {item!r}") from None
    result = stats.diagnose(run, thresholds=thr, max_ids=max_ids, seed=seed, baseline=baseline)
    _emit(result, fmt, output, **({"include_per_sample": per_sample} if fmt == "json" else {}))


@main.command("fuse")
@click.argument("runs", nargs=-1, required=True, type=click.Path(exists=True, dir_okay=False, path_type=Path))
@click.option("-o", "--output", type=click.Path(dir_okay=False, path_type=Path), required=True,
              help="The fused TREC run file to write.")
@click.option("--method", type=click.Choice(stats.fusion.METHODS), default="rrf", show_default=True)
@click.option("--k0", type=click.FloatRange(min=0, min_open=True), default=60.0, show_default=True,
              help="RRF constant k0 in 1 / (k0 + rank).")
@click.option("-w", "--weight", "weights", multiple=True, type=click.FloatRange(min=0),
              help="Per-run weight, in the order of RUNS (repeat once per run).")
@click.option("--depth", type=click.IntRange(min=1), default=1000, show_default=True,
              help="Documents kept per query.")
@click.option("--tag", default=None, help="Run tag of the output (default ragmeter-METHOD).")
def fuse_cmd(runs: tuple[Path, ...], output: Path, method: str, k0: float, weights: tuple[float, ...],
             depth: int, tag: str | None) -> None:
    """Fuse TREC runs (qid Q0 docid rank score tag) with RRF, CombSUM or CombMNZ."""
    if len(runs) < 2:
        raise InvalidParameterError(f"RUNS: expected at least two run files to fuse, got {len(runs)}")
    fused = stats.fuse([stats.read_trec_run(p) for p in runs], method=method, k0=k0,
                       weights=list(weights) or None, depth=depth)
    stats.write_trec_run(fused, output, tag=tag or f"ragmeter-{method}")
    click.echo(f"wrote {sum(len(d) for d in fused.values())} lines for {len(fused)} queries to {output}", err=True)
