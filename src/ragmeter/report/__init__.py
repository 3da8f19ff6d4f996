"""The self-contained HTML report of a run, or of two or more runs compared (``ragmeter report``).

>>> from ragmeter.report import write_report
>>> write_report("runs/new", "report.html", data="qa.jsonl", baseline="runs/old")  # doctest: +SKIP

The page is one file with no network access: inline CSS, inline script (allowed by its hash in a
strict Content-Security-Policy), inline SVG histograms and the run's data embedded as JSON. See
``docs/report.md`` for what it shows and how to read it.
"""

from __future__ import annotations

import json
import os
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from ..errors import InvalidParameterError
from ..gate import banner, check_gate
from ..stats.diagnose import diagnose as diagnose_run
from ._compare import add_baseline_texts, baseline_texts, comparison_section
from ._data import (
    DEFAULT_MAX_SAMPLES,
    DISPLAY_CLIP_CHARS,
    Run,
    build_payload,
    find_data_path,
    load_run,
    read_texts,
    select_samples,
)
from ._html import (
    render_diagnosis,
    render_gate_banner,
    render_metric_cards,
    render_page,
    render_run_info,
    render_samples_note,
)
from ._multi import multi_section
from ._slices import render_slices

__all__ = ["DEFAULT_MAX_SAMPLES", "DISPLAY_CLIP_CHARS", "build_report", "load_run", "write_report"]


def _diagnosis(run: Run, compute: bool, gate: dict[str, float], base: Run | None = None) -> Any:
    """Findings to show: computed by ``ragmeter.stats.diagnose`` (the default; against ``base``, the
    baseline run, when the report compares), else from the run info or ``OUTDIR/diagnosis.json``
    (e.g. ``ragmeter diagnose OUTDIR --format json > ...``).

    The computation runs on the run's columns (:class:`Run`), never on its full records, so it
    costs little memory on a large run."""
    if compute:
        d = diagnose_run(run.to_result(), gate=gate or None, first_ranks=run.first_rank,
                     baseline=base.to_result() if base is not None else None).to_dict()
        if base is not None:
            d["baseline"] = str(base.path)
        return d
    info = run.info
    for key in ("diagnosis", "findings"):
        if info.get(key):
            return info[key]
    path = run.path / "diagnosis.json"
    if path.is_file():
        try:
            return json.loads(path.read_text(encoding="utf-8"))
        except json.JSONDecodeError:
            return [{"severity": "warning", "title": "diagnosis.json", "message": "is not valid JSON; skipped"}]
    return None


def gate_thresholds(run: Run, fail_under: dict[str, float] | None) -> dict[str, float]:
    """The gate thresholds to show: ``fail_under`` when given, else those the run info records
    (``ragmeter eval --fail-under`` writes ``{"gate": {"fail_under": {...}}}`` there)."""
    if fail_under:
        return dict(fail_under)
    gate = run.info.get("gate")
    found = gate.get("fail_under") if isinstance(gate, dict) else None
    if not isinstance(found, dict):
        return {}
    return {str(k): float(v) for k, v in found.items() if isinstance(v, int | float) and not isinstance(v, bool)}


def gate_banner(run: Run, gate: dict[str, float]) -> str:
    """The gate's verdict over the run's summary (:func:`ragmeter.gate.check_gate` with the statistic
    and error ceiling the run info records; thresholds only when it records none), as the page's
    banner; '' with no gate."""
    if not gate:
        return ""
    info: Any = run.info.get("gate") if isinstance(run.info.get("gate"), dict) else {}
    on = info.get("statistic") if info.get("statistic") in ("mean", "ci_low") else "mean"
    ceiling = info.get("max_error_rate")
    ceiling = float(ceiling) if isinstance(ceiling, int | float) and not isinstance(ceiling, bool) else 1.0
    result = check_gate(run.summary.get("metrics") or {}, gate, on=on, max_error_rate=ceiling)
    return render_gate_banner(banner(result), result.passed)


def _label(run: Run, other: Run) -> str:
    """The run directory's name, with its parent's when both runs' directories have the same name."""
    if run.path.resolve().name == other.path.resolve().name:
        return f"{run.path.resolve().parent.name}/{run.path.resolve().name}"
    return run.path.resolve().name


def _labels(runs: Sequence[Run]) -> list[str]:
    """Each run directory's name, with its parent's where two runs' directories have the same name."""
    names = [r.path.resolve().name for r in runs]
    return [f"{r.path.resolve().parent.name}/{n}" if names.count(n) > 1 else n
            for r, n in zip(runs, names, strict=True)]


def build_report(
    run_dir: str | os.PathLike[str],
    data: str | os.PathLike[str] | None = None,
    baseline: str | os.PathLike[str] | None = None,
    *,
    title: str | None = None,
    clip_chars: int | None = DISPLAY_CLIP_CHARS,
    diagnose: bool = True,
    fail_under: dict[str, float] | None = None,
    max_samples: int = DEFAULT_MAX_SAMPLES,
    compare_with: Sequence[str | os.PathLike[str]] = (),
) -> str:
    """The report of the run in ``run_dir`` as one HTML string (see :func:`write_report`)."""
    if isinstance(max_samples, bool) or not isinstance(max_samples, int) or max_samples < 1:
        raise InvalidParameterError(f"max_samples: expected an integer >= 1, got {max_samples!r}")
    run = load_run(run_dir)
    base = load_run(baseline) if baseline is not None else None
    data_path = Path(data) if data is not None else find_data_path(run)
    if data is not None and not Path(data).is_file():
        raise InvalidParameterError(f"--data: {data} is not a file; expected the data file the run was made from")
    gate = gate_thresholds(run, fail_under)
    selection = select_samples(run, max_samples=max_samples, thresholds=gate)
    reader = {"format": run.info.get("format"), "field_map": run.info.get("field_map") or None}
    wanted = {run.ids[i] for i, _ in selection}
    texts = read_texts(data_path, ids=wanted, **reader) if data_path is not None else None
    if texts is None:
        data_note = "not available: pass the data file (--data DATA / data=...) to see queries, answers, contexts"
    else:
        found = sum(1 for sid in wanted if sid in texts)
        data_note = f"{data_path} ({found:,} of the {len(wanted):,} samples shown found)"
    payload = build_payload(run, texts, baseline=base, clip_chars=clip_chars, selection=selection)
    comparison_html = ""
    others = [load_run(p) for p in compare_with]
    if others:
        if base is not None:
            raise InvalidParameterError("compare_with: give the other runs there, or one baseline, not both")
        runs = [*others, run]
        comparison_html = multi_section(runs, _labels(runs))
    if base is not None:
        metrics = [m for m in run.metrics if m in base.metrics]
        if not metrics:
            raise InvalidParameterError(
                f"the runs {base.path} and {run.path} share no metric: nothing to compare; "
                "evaluate both on at least one common metric"
            )
        index_of = {str(e["id"]): k for k, e in enumerate(payload["samples"])}  # position in the page's samples
        comparison_html = comparison_section(base, run, metrics, index_of)
        add_baseline_texts(payload, baseline_texts(base, {s["id"] for s in payload["samples"]}),
                           clip_chars=clip_chars)
    dataset = run.info.get("dataset") or (data_path.name if data_path is not None else run.path.name)
    if title:
        page_title = title
    elif others:
        page_title = "ragmeter: " + " vs ".join(_labels([*others, run]))
    elif base is not None:
        page_title = f"ragmeter: {_label(base, run)} vs {_label(run, base)}"
    else:
        page_title = f"ragmeter: {run.path.name}"
    subtitle = f"{dataset} · {len(run.ids):,} samples · {len(run.metrics)} metrics"
    diagnosis = _diagnosis(run, diagnose, gate, base)
    low = diagnosis.get("low_metrics") if isinstance(diagnosis, dict) else None
    return render_page(
        title=page_title,
        subtitle=subtitle,
        run_info_html=render_run_info(run, data_note),
        diagnosis_html=render_diagnosis(diagnosis),
        metrics_html=render_metric_cards(run, gate=gate, low=low),
        samples_note=render_samples_note(len(payload["samples"]), len(run.ids), bool(selection and selection[0][1])),
        comparison_html=comparison_html + render_slices(run.summary.get("slices")),
        payload=payload,
        gate_html=gate_banner(run, gate),
    )


def write_report(
    run_dir: str | os.PathLike[str],
    out_path: str | os.PathLike[str],
    data: str | os.PathLike[str] | None = None,
    baseline: str | os.PathLike[str] | None = None,
    *,
    title: str | None = None,
    clip_chars: int | None = DISPLAY_CLIP_CHARS,
    diagnose: bool = True,
    fail_under: dict[str, float] | None = None,
    max_samples: int = DEFAULT_MAX_SAMPLES,
    compare_with: Sequence[str | os.PathLike[str]] = (),
) -> Path:
    """Write the self-contained HTML report of the run in ``run_dir`` to ``out_path``.

    Parameters
    ----------
    run_dir:
        A run directory (``summary.json`` + ``results.jsonl``), e.g. ``ragmeter eval -o OUTDIR``.
    out_path:
        The HTML file to write (its folder is created if missing).
    data:
        The data file the run was made from, read with :func:`ragmeter.io.read_samples`, to show each
        sample's query, answer, contexts and reference. Default: the file the run info names (key
        ``data``, ``input``, ...) if it exists; else the report shows scores and reasons only.
    baseline:
        A second run directory: the report then compares ``run_dir`` (candidate) against it.
    title:
        The page title (default from the run directory's name).
    clip_chars:
        Longer texts are cut in the page, with a marker (None or 0: never cut).
    diagnose:
        Run :func:`ragmeter.stats.diagnose` on the run and head the report with its findings (the
        default). False: show the findings the run info (``diagnosis``) or
        ``OUTDIR/diagnosis.json`` holds, if any.
    fail_under:
        The gate thresholds ``{metric: threshold}`` to mark on the metric cards (pass / fail).
        Default: those the run info records (``ragmeter eval --fail-under``), if any.
    compare_with:
        Other run directories: the report then compares all the runs, these first and ``run_dir``
        last (each run's mean with its interval, the best run, and paired Holm-adjusted tests
        between every two runs, :mod:`ragmeter.report._multi`); the cards and samples are
        ``run_dir``'s. Not with ``baseline``.
    max_samples:
        A run with more samples embeds this many of them (:func:`~ragmeter.report._data.select_samples`:
        the worst and best per metric, the errored and failing ones, a seeded random sample) and
        says so; means, histograms and the diagnosis always cover every sample.

    Returns
    -------
    The path written.
    """
    html_text = build_report(run_dir, data, baseline, title=title, clip_chars=clip_chars,
                             diagnose=diagnose, fail_under=fail_under, max_samples=max_samples,
                             compare_with=compare_with)
    out = Path(out_path)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(html_text, encoding="utf-8")
    return out
