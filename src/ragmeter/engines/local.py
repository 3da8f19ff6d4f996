"""The local engine, and :func:`evaluate_file`: one call that runs a data file on the chosen engine.

``evaluate_file(path, metrics, engine="local")`` is what ``ragmeter eval`` runs:

* ``engine="local"`` and a Parquet, JSONL or CSV file with only retrieval metrics asked for: the
  columnar fast path (:func:`ragmeter.engines.columnar.evaluate_columnar`: Parquet record batches,
  :mod:`._jsonl` and :mod:`._csv` blocks), same output, ~20x the rows per second;
* ``engine="local"`` otherwise: :func:`ragmeter.evaluate` over :func:`ragmeter.io.read_samples`;
* ``engine="ray"``: :func:`ragmeter.engines.ray_engine.evaluate_ray` (the judge is rebuilt on every
  worker from its :class:`~ragmeter.backend_config.JudgeConfig`).
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator, Sequence
from typing import Any

from ..backend_config import EmbedderConfig, JudgeConfig
from ..errors import InputError, InvalidParameterError
from ..evaluator import evaluate
from ..io import read_samples
from ..io.readers import detect_format, input_format
from ..io.records import DEFAULT_MAX_TEXT_CHARS
from ..results import RunResult
from ..types import Sample
from . import ENGINES
from .columnar import columnar_supported, evaluate_columnar, kernel_evaluators


def _columnar_format(path: str | os.PathLike[str], format: str | None) -> bool:
    """True for a file the columnar path reads (Parquet, JSONL, CSV)."""
    try:
        return input_format(path, format) in ("parquet", "jsonl", "csv")
    except (InputError, InvalidParameterError):
        return False


def uses_columnar(path: str | os.PathLike[str], metrics: Sequence[str] | None, format: str | None = None) -> bool:
    """True when the local engine takes the columnar fast path for this file and these metrics."""
    return _columnar_format(path, format) and columnar_supported(metrics)


def evaluate_file(
    path: str | os.PathLike[str],
    metrics: Sequence[str] | None = None,
    *,
    engine: str = "local",
    out_dir: str | os.PathLike[str],
    on_error: str = "raise",
    field_map: dict[str, str] | None = None,
    format: str | None = None,
    judge: Any = None,
    embedder: Any = None,
    judge_config: JudgeConfig | None = None,
    embedder_config: EmbedderConfig | None = None,
    address: str | None = None,
    progress: Callable[[int], None] | None = None,
    on_bad_row: Callable[[InputError], None] | None = None,
    on_judge_stats: Callable[[dict[str, Any]], None] | None = None,
    run_info: dict[str, Any] | None = None,
    max_text_chars: int | None = DEFAULT_MAX_TEXT_CHARS,
) -> RunResult:
    """Evaluate the data file ``path`` on ``engine`` (``local`` or ``ray``), writing ``out_dir``.

    ``judge`` / ``embedder`` objects serve the local engine (built from ``judge_config`` /
    ``embedder_config`` when not given); the ray engine builds its own on every worker from the configs.
    ``on_judge_stats`` receives the judge counters of the ray engine's workers as chunks finish (the
    local engine's judge object has them live). ``on_bad_row`` sees every bad row's
    :class:`~ragmeter.errors.InputError` (``on_error="skip"``).
    ``max_text_chars`` bounds every text a row may hold (:func:`ragmeter.io.read_samples`), on
    every engine.
    """
    if engine not in ENGINES:
        raise InvalidParameterError(f"engine: expected one of {', '.join(ENGINES)}, got {engine!r}")
    if engine == "ray":
        from .ray_engine import evaluate_ray

        return evaluate_ray(path, metrics, judge_config=judge_config, embedder_config=embedder_config, out_dir=out_dir,
                            address=address, on_error=on_error, field_map=field_map, format=format,
                            keep_records=False, progress=progress, on_bad_row=on_bad_row,
                            on_judge_stats=on_judge_stats, run_info=run_info, max_text_chars=max_text_chars)
    kernels = kernel_evaluators(metrics) if _columnar_format(path, format) else None
    if kernels is not None:
        assert metrics is not None
        return evaluate_columnar(path, list(metrics), format=detect_format(path, format), out_dir=out_dir,
                                 on_error=on_error, field_map=field_map, progress=progress, on_bad_row=on_bad_row,
                                 max_text_chars=max_text_chars, evaluators=kernels,
                                 run_info={**(run_info or {}), "engine": {"name": "local", "path": "columnar"}})

    if judge is None and judge_config is not None:
        judge = judge_config.build()
    if embedder is None and embedder_config is not None:
        embedder = embedder_config.build()

    def items() -> Iterator[Sample | InputError]:
        for item in read_samples(path, on_error=on_error, field_map=field_map, format=format,  # type: ignore[arg-type]
                                 max_text_chars=max_text_chars):
            if isinstance(item, InputError) and on_bad_row is not None:
                on_bad_row(item)
            yield item

    try:
        return evaluate(items(), list(metrics) if metrics else None, judge=judge, embedder=embedder,
                        out_dir=os.fspath(out_dir), keep_records=False, progress=progress, run_info=run_info)
    except InputError as exc:
        if exc.path is not None or exc.line is not None:
            raise
        # a field no row has (ragmeter.io.fields): the error names the file too
        raise InputError(exc.message, path=os.fspath(path), field=exc.field) from exc
