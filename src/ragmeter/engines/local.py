"""Deprecated: :func:`evaluate_file`, an alias of :func:`ragmeter.evaluate` for a data file.

``ragmeter.evaluate(path, metrics, engine="local" | "ray", ...)`` takes a path as it takes rows,
and on the local engine the columnar fast path for a Parquet, JSONL or CSV file and retrieval
metrics (:mod:`ragmeter.engines.entry`).
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from typing import Any

from ..backend_config import EmbedderConfig, JudgeConfig
from ..results import RunResult
from . import warn_alias
from .entry import evaluate


def evaluate_file(
    path: str | os.PathLike[str],
    metrics: Sequence[str] | None = None,
    *,
    engine: str = "local",
    out_dir: str | os.PathLike[str],
    judge: Any = None,
    embedder: Any = None,
    judge_config: JudgeConfig | None = None,
    embedder_config: EmbedderConfig | None = None,
    **options: Any,
) -> RunResult:
    """Deprecated: ``ragmeter.evaluate(path, metrics or None, engine=engine, out_dir=out_dir,
    keep_records=False, ...)``. ``judge`` / ``embedder`` objects serve the local engine,
    ``judge_config`` / ``embedder_config`` the Ray engine (and the local one when no object is
    given); ``options`` are :func:`ragmeter.evaluate`'s."""
    warn_alias("ragmeter.engines.local.evaluate_file")
    if engine == "ray" or judge is None:
        judge = judge_config
    if engine == "ray" or embedder is None:
        embedder = embedder_config
    return evaluate(path, list(metrics) if metrics else None, engine=engine, out_dir=out_dir, judge=judge,
                    embedder=embedder, **{"keep_records": False, **options})
